// SPDX-License-Identifier: GPL-2.0
/*
 * A test's slow netdevs: loading it registers @count netdevs, kpmslow0
 * and on, of @queues RX and TX queues each (ethtool -L sets how many of
 * them are real, 1 to @queues), whose counters take a known time to read:
 *
 * - ndo_get_stats64 busy-waits @delay_us times the number of its earlier
 *   reads of that netdev, modulo 4: 0, 1, 2, 3 times @delay_us, over and
 *   over, so that the netdevs of a sample take a time that varies from
 *   one sample to the next;
 * - every call of their queue statistics (netdev_stat_ops: the base, and
 *   each queue) busy-waits @call_delay_us.
 *
 * Both by CLOCK_MONOTONIC (ktime_get_ns()), as the sampler stamps them.
 *
 * Their queue statistics count nothing; RTNL guards them, as it does an
 * ethtool -L that changes their queues. Frames sent to them are dropped.
 *
 * For ksft_perfmon's selftests only (selftests/kernel/clock_test.py and
 * selftests/kernel/qstats_test.py): a driver whose reads are as slow as a test
 * needs, on every kernel of the matrix.
 */

#include <linux/ethtool.h>
#include <linux/etherdevice.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/netdev_queues.h>

#define KPM_SLOWDEV_MAX		16
#define KPM_SLOWDEV_QUEUES_MAX	256

static unsigned int count = KPM_SLOWDEV_MAX;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "netdevs to register (1 to 16)");

static unsigned int queues = 4;
module_param(queues, uint, 0444);
MODULE_PARM_DESC(queues, "RX and TX queues of each netdev (1 to 256)");

static unsigned int delay_us;
module_param(delay_us, uint, 0644);
MODULE_PARM_DESC(delay_us,
		 "ndo_get_stats64 busy-waits this times its earlier reads modulo 4 (at most 10000)");

static unsigned int call_delay_us;
module_param(call_delay_us, uint, 0644);
MODULE_PARM_DESC(call_delay_us,
		 "each call of the queue statistics busy-waits this (at most 1000)");

struct kpm_slowdev {
	atomic_t reads;
};

static struct net_device *kpm_slowdevs[KPM_SLOWDEV_MAX];

/*
 * Busy-wait @us by the clock the sampler times its reads with, not by a
 * delay loop, whose calibration a guest on a loaded host gets wrong
 */
static void kpm_slowdev_wait(unsigned int us)
{
	u64 end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static netdev_tx_t kpm_slowdev_xmit(struct sk_buff *skb,
				    struct net_device *dev)
{
	dev_core_stats_tx_dropped_inc(dev);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static void kpm_slowdev_get_stats64(struct net_device *dev,
				    struct rtnl_link_stats64 *stats)
{
	struct kpm_slowdev *sd = netdev_priv(dev);
	unsigned int n = atomic_inc_return(&sd->reads) - 1;

	kpm_slowdev_wait(min(READ_ONCE(delay_us), 10000U) * (n % 4));
	dev_fetch_sw_netstats(stats, dev->tstats);
}

static const struct net_device_ops kpm_slowdev_ops = {
	.ndo_start_xmit		= kpm_slowdev_xmit,
	.ndo_get_stats64	= kpm_slowdev_get_stats64,
	.ndo_set_mac_address	= eth_mac_addr,
};

static void kpm_slowdev_call(void)
{
	kpm_slowdev_wait(min(READ_ONCE(call_delay_us), 1000U));
}

static void kpm_slowdev_queue_rx(struct net_device *dev, int idx,
				 struct netdev_queue_stats_rx *rx)
{
	kpm_slowdev_call();
	rx->packets = 0;
	rx->bytes = 0;
}

static void kpm_slowdev_queue_tx(struct net_device *dev, int idx,
				 struct netdev_queue_stats_tx *tx)
{
	kpm_slowdev_call();
	tx->packets = 0;
	tx->bytes = 0;
}

static void kpm_slowdev_base(struct net_device *dev,
			     struct netdev_queue_stats_rx *rx,
			     struct netdev_queue_stats_tx *tx)
{
	kpm_slowdev_call();
	rx->packets = 0;
	rx->bytes = 0;
	tx->packets = 0;
	tx->bytes = 0;
}

static const struct netdev_stat_ops kpm_slowdev_stat_ops = {
	.get_queue_stats_rx	= kpm_slowdev_queue_rx,
	.get_queue_stats_tx	= kpm_slowdev_queue_tx,
	.get_base_stats		= kpm_slowdev_base,
};

static void kpm_slowdev_get_channels(struct net_device *dev,
				     struct ethtool_channels *ch)
{
	ch->max_combined = dev->num_rx_queues;
	ch->combined_count = dev->real_num_rx_queues;
}

static int kpm_slowdev_set_channels(struct net_device *dev,
				    struct ethtool_channels *ch)
{
	return netif_set_real_num_queues(dev, ch->combined_count,
					 ch->combined_count);
}

static const struct ethtool_ops kpm_slowdev_ethtool_ops = {
	.get_channels	= kpm_slowdev_get_channels,
	.set_channels	= kpm_slowdev_set_channels,
};

static void kpm_slowdev_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &kpm_slowdev_ops;
	dev->ethtool_ops = &kpm_slowdev_ethtool_ops;
	dev->stat_ops = &kpm_slowdev_stat_ops;
	dev->pcpu_stat_type = NETDEV_PCPU_STAT_TSTATS;
	dev->needs_free_netdev = true;
	dev->priv_flags |= IFF_NO_QUEUE;
	eth_hw_addr_random(dev);
}

static void kpm_slowdev_remove(void)
{
	unsigned int i;

	rtnl_lock();
	for (i = 0; i < KPM_SLOWDEV_MAX; i++) {
		if (kpm_slowdevs[i])
			unregister_netdevice(kpm_slowdevs[i]);
		kpm_slowdevs[i] = NULL;
	}
	rtnl_unlock();
}

static int __init kpm_slowdev_init(void)
{
	struct net_device *dev;
	unsigned int i;
	int err;

	if (!count || count > KPM_SLOWDEV_MAX || !queues ||
	    queues > KPM_SLOWDEV_QUEUES_MAX)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		dev = alloc_netdev_mqs(sizeof(struct kpm_slowdev), "kpmslow%d",
				       NET_NAME_ENUM, kpm_slowdev_setup,
				       queues, queues);
		if (!dev) {
			err = -ENOMEM;
			goto err_remove;
		}
		err = register_netdev(dev);
		if (err) {
			free_netdev(dev);
			goto err_remove;
		}
		kpm_slowdevs[i] = dev;
	}
	return 0;

err_remove:
	kpm_slowdev_remove();
	return err;
}

static void __exit kpm_slowdev_exit(void)
{
	kpm_slowdev_remove();
}

module_init(kpm_slowdev_init);
module_exit(kpm_slowdev_exit);

MODULE_DESCRIPTION("ksft_perfmon test: netdevs whose counters are slow to read");
MODULE_LICENSE("GPL");
