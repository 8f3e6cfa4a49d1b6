/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels ksft_perfmon supports (6.12
 * and later). Each shim names the change it covers; delete it with the
 * oldest kernel that needs it.
 *
 * Needing no shim since 6.12: genetlink split ops (6.2), genl_info_dump()
 * (6.6) and NLA_UINT (6.6), which the generated netlink-gen.c relies on.
 */
#ifndef _KSFT_PERFMON_COMPAT_H
#define _KSFT_PERFMON_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/tick.h>
#include <linux/version.h>
#include <net/netdev_queues.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#include <net/netdev_lock.h>
#endif

/*
 * hrtimer_setup() replaced hrtimer_init() plus an assignment of ->function
 * in 6.13 ("hrtimers: Introduce hrtimer_setup() to replace hrtimer_init()");
 * hrtimer_init() was removed in 6.17.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void
kpm_hrtimer_setup(struct hrtimer *timer,
		  enum hrtimer_restart (*function)(struct hrtimer *),
		  clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#else
#define kpm_hrtimer_setup hrtimer_setup
#endif

/*
 * kcpustat_cpu_fetch() returns the NOHZ idle and iowait time of a CPU itself
 * since "tick/sched: Consolidate idle time fetching APIs" (checked in 7.2
 * and 7.3), which also dropped get_idle_time() from /proc/stat. Before it,
 * /proc/stat took an online CPU's idle and iowait time from the NOHZ
 * accounting, in microseconds, as this shim does; get_cpu_*_time_us()
 * return -1 when NOHZ is off. @online is the caller's one reading of
 * cpu_online(), so that a sample's CPU agrees with itself.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 2, 0)
static inline void kpm_kcpustat_fetch(struct kernel_cpustat *kcs, int cpu,
				      bool online)
{
	u64 us;

	kcpustat_cpu_fetch(kcs, cpu);
	if (!online)
		return;
	us = get_cpu_idle_time_us(cpu, NULL);
	if (us != -1ULL)
		kcs->cpustat[CPUTIME_IDLE] = us * NSEC_PER_USEC;
	us = get_cpu_iowait_time_us(cpu, NULL);
	if (us != -1ULL)
		kcs->cpustat[CPUTIME_IOWAIT] = us * NSEC_PER_USEC;
}
#else
static inline void kpm_kcpustat_fetch(struct kernel_cpustat *kcs, int cpu,
				      bool online)
{
	kcpustat_cpu_fetch(kcs, cpu);
}
#endif

/*
 * A CPU's backlog drops: softnet_data's atomic_t dropped became a pair of
 * NUMA drop counters in 6.18 ("net: use NUMA drop counters for
 * softnet_data.dropped"), which /proc/net/softnet_stat adds up.
 */
static inline u32 kpm_softnet_dropped(const struct softnet_data *sd)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 18, 0)
	return atomic_read(&sd->dropped);
#else
	return numa_drop_read(&sd->drop_counters);
#endif
}

/*
 * The lock netdev-genl's qstats-get holds around a netdev's stat_ops, as
 * netdev_lock_ops_compat() takes it, but without waiting: RTNL, or from
 * 6.16 on ("netdev: add "ops compat locking" helpers", "netdev: depend on
 * netdev->lock for qstats in ops locked drivers") the netdev's instance
 * lock for a driver that needs it; 6.15 takes RTNL for every driver.
 * Checked against qstats-get in 6.12 (RTNL) and 7.3.
 */
static inline bool kpm_qstats_trylock(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	if (netdev_need_ops_lock(dev))
		return mutex_trylock(&dev->lock);
#endif
	return rtnl_trylock();
}

static inline void kpm_qstats_unlock(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	if (netdev_need_ops_lock(dev)) {
		netdev_unlock(dev);
		return;
	}
#endif
	rtnl_unlock();
}

/* what kpm_qstats_trylock() took, for the code that relies on it */
static inline void kpm_qstats_assert_held(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	if (netdev_need_ops_lock(dev)) {
		lockdep_assert_held(&dev->lock);
		return;
	}
#endif
	ASSERT_RTNL();
}

/*
 * The lock of a NAPI instance's id and IRQ, which napi-get holds to read
 * them, taken without waiting inside kpm_qstats_trylock()'s (which keeps
 * the queues' links to their instances, as queue-get reads them): from
 * 6.14 on, where netif_napi_set_irq() and napi_enable() take it (the
 * netif_napi_set_irq_locked() that drivers' compatibility code tests for
 * 6.14), the netdev's instance lock, after RTNL as netdev-genl orders
 * them, unless kpm_qstats_trylock() took it already; before, RTNL, held
 * already. Checked against napi-get in 6.12 and 7.3, not in between.
 */
static inline bool kpm_napi_trylock(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	if (netdev_need_ops_lock(dev))
		return true;
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	return mutex_trylock(&dev->lock);
#else
	return true;
#endif
}

/* both locks of the queue map, as kpm_napi_trylock() took the second */
static inline void kpm_napi_assert_held(struct net_device *dev)
{
	kpm_qstats_assert_held(dev);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	lockdep_assert_held(&dev->lock);
#endif
}

static inline void kpm_napi_unlock(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	if (netdev_need_ops_lock(dev))
		return;
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	mutex_unlock(&dev->lock);
#endif
}

/*
 * struct netdev_queue_stats_rx has csum_complete from 6.15 on ("net:
 * report csum_complete via qstats").
 */
#define KPM_HAVE_QSTATS_CSUM_COMPLETE \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0))

#endif /* _KSFT_PERFMON_COMPAT_H */
