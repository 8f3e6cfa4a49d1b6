// SPDX-License-Identifier: GPL-2.0
/*
 * A test's counter setter: loading it sets, on every online CPU, the
 * 32-bit network counts that only their own CPU moves, and moves with a
 * single increment (softnet_data's processed, the NET_RX and NET_TX
 * softirq counts), to count: a little under 2^32, so that a test can
 * make them wrap with a few thousand packets, and 0 after it. It then
 * refuses to load (-EAGAIN), so that nothing stays loaded.
 *
 * For selftests/kernel/softnet_test.py only: the counts are the kernel's
 * statistics, and nothing but /proc/net/softnet_stat and /proc/softirqs
 * reads them. Each is set on its own CPU, from the IPI, where no
 * increment of it can be under way: they are __this_cpu_inc()s, one
 * instruction on x86. Elsewhere an increment may be a load and a store
 * that the IPI splits, so it refuses to load there.
 */

#include <linux/kernel_stat.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/smp.h>

static unsigned int count;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "what to set each count to");

static void kpm_nearwrap_set(void *unused)
{
	__this_cpu_write(softnet_data.processed, count);
	__this_cpu_write(kstat.softirqs[NET_RX_SOFTIRQ], count);
	__this_cpu_write(kstat.softirqs[NET_TX_SOFTIRQ], count);
}

static int __init kpm_nearwrap_init(void)
{
	if (!IS_ENABLED(CONFIG_X86))
		return -EOPNOTSUPP;
	on_each_cpu(kpm_nearwrap_set, NULL, 1);
	pr_info("network counts of every online CPU set to %u\n", count);
	return -EAGAIN;
}
module_init(kpm_nearwrap_init);

MODULE_DESCRIPTION("ksft_perfmon test: bring CPUs' network counts near a wrap");
MODULE_LICENSE("GPL");
