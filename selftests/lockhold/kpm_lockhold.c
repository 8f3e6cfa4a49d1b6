// SPDX-License-Identifier: GPL-2.0
/*
 * A test's lock holder: loading it holds, for ms milliseconds, the lock
 * that ksft_perfmon's sampler takes for the queue statistics of netdev
 * ifindex (in the initial network namespace): RTNL, or from 6.16 on the
 * netdev's instance lock where its driver needs it. With rtnl=1 it holds
 * RTNL whatever the driver. It then refuses to load (-EAGAIN), so that
 * insmod returns once the lock is released and nothing stays loaded.
 *
 * For selftests/qstats_test.py only: a configuration change that holds
 * the lock for seconds, on demand.
 */

#include <linux/delay.h>
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

/* whether the sampler takes @dev's instance lock, not RTNL */
static bool kpm_lockhold_instance(struct net_device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return !rtnl && netdev_need_ops_lock(dev);
#else
	return false;
#endif
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define kpm_lockhold_netdev_lock netdev_lock
#define kpm_lockhold_netdev_unlock netdev_unlock
#else
/* never called: the sampler takes no instance lock before 6.16 */
static void kpm_lockhold_netdev_lock(struct net_device *dev) { }
static void kpm_lockhold_netdev_unlock(struct net_device *dev) { }
#endif

static int __init kpm_lockhold_init(void)
{
	netdevice_tracker tracker;
	struct net_device *dev;
	bool instance;

	if (ms > 10000)
		return -EINVAL;
	dev = netdev_get_by_index(&init_net, ifindex, &tracker, GFP_KERNEL);
	if (!dev)
		return -ENODEV;
	instance = kpm_lockhold_instance(dev);
	pr_info("holding %s of %s for %u ms\n",
		instance ? "the instance lock" : "RTNL", netdev_name(dev), ms);
	if (instance)
		kpm_lockhold_netdev_lock(dev);
	else
		rtnl_lock();
	msleep(ms);
	if (instance)
		kpm_lockhold_netdev_unlock(dev);
	else
		rtnl_unlock();
	netdev_put(dev, &tracker);
	return -EAGAIN;
}
module_init(kpm_lockhold_init);

MODULE_DESCRIPTION("ksft_perfmon test: hold a netdev's stats lock");
MODULE_LICENSE("GPL");
