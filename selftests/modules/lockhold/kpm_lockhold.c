// SPDX-License-Identifier: GPL-2.0
/*
 * A test's lock holder: loading it holds, for ms milliseconds, the lock
 * that ksft_perfmon's sampler takes for the queue statistics of netdev
 * ifindex (in the initial network namespace): RTNL, or from 6.16 on the
 * netdev's instance lock where its driver needs it. With rtnl=1 it holds
 * RTNL whatever the driver; with instance=1, from 6.14 on, the netdev's
 * instance lock whatever the driver, which the sampler takes after RTNL
 * to read the queue map. It then says, in the kernel log, from when to
 * when it held the lock (CLOCK_MONOTONIC ns, as the sampler stamps its
 * samples) and refuses to load (-EAGAIN), so that insmod returns once the
 * lock is released and nothing stays loaded.
 *
 * For selftests/kernel/qstats_test.py only: a configuration change that holds
 * the lock for seconds, on demand.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/version.h>
#include <net/net_namespace.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#include <net/netdev_lock.h>
#endif

static int ifindex;
module_param(ifindex, int, 0444);
MODULE_PARM_DESC(ifindex, "the netdev whose lock to hold");

static unsigned int ms = 2000;
module_param(ms, uint, 0444);
MODULE_PARM_DESC(ms, "how long to hold it, in ms (at most 10000)");

static bool rtnl;
module_param(rtnl, bool, 0444);
MODULE_PARM_DESC(rtnl, "hold RTNL, whatever lock the netdev's driver needs");

static bool instance;
module_param(instance, bool, 0444);
MODULE_PARM_DESC(instance, "hold the netdev's instance lock, whatever its driver (6.14 on)");

/* whether to hold @dev's instance lock, not RTNL */
static bool kpm_lockhold_instance(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return instance || (!rtnl && netdev_need_ops_lock(dev));
#else
	return instance;
#endif
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define kpm_lockhold_netdev_lock netdev_lock
#define kpm_lockhold_netdev_unlock netdev_unlock
#else
/* never called: instance=1 is refused before 6.14 */
static void kpm_lockhold_netdev_lock(struct net_device *dev) { }
static void kpm_lockhold_netdev_unlock(struct net_device *dev) { }
#endif

static int __init kpm_lockhold_init(void)
{
	netdevice_tracker tracker;
	struct net_device *dev;
	bool use_instance;
	u64 from, to;

	if (ms > 10000 || (rtnl && instance) ||
	    (instance && LINUX_VERSION_CODE < KERNEL_VERSION(6, 14, 0)))
		return -EINVAL;
	dev = netdev_get_by_index(&init_net, ifindex, &tracker, GFP_KERNEL);
	if (!dev)
		return -ENODEV;
	use_instance = kpm_lockhold_instance(dev);
	pr_info("holding %s of %s for %u ms\n",
		use_instance ? "the instance lock" : "RTNL", netdev_name(dev),
		ms);
	if (use_instance)
		kpm_lockhold_netdev_lock(dev);
	else
		rtnl_lock();
	from = ktime_get_ns();
	msleep(ms);
	to = ktime_get_ns();
	if (use_instance)
		kpm_lockhold_netdev_unlock(dev);
	else
		rtnl_unlock();
	pr_info("held %s of %s from %llu to %llu ns\n",
		use_instance ? "the instance lock" : "RTNL", netdev_name(dev),
		from, to);
	netdev_put(dev, &tracker);
	return -EAGAIN;
}
module_init(kpm_lockhold_init);

MODULE_DESCRIPTION("ksft_perfmon test: hold a netdev's stats lock");
MODULE_LICENSE("GPL");
