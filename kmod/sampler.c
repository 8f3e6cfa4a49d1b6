// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler. A soft hrtimer per session sets the beat: it snapshots
 * kcpustat of every possible CPU where it fires, as /proc/stat reads it,
 * and copies the sample into the next slot of the session's ring with the
 * latest read of the session's netdevs. Every dev_every periods it queues
 * the session's work item on the module's unbound workqueue instead,
 * which reads the netdevs, then the CPUs, and takes that period's sample.
 * So a session of CPUs wakes no process to sample, and one of netdevs
 * only as often as it asked for them.
 *
 * Each block of a sample has its own time: the CPUs are read right after
 * the sample's stamp, each netdev's stats64 and each netdev's queue
 * statistics after a stamp of their own, before it, so that a slow
 * driver, a skipped read or a read from periods before moves no other
 * block's time; dev_read says which read of the netdevs a sample holds.
 *
 * The netdevs' reads run in process context with BH enabled, under RCU,
 * as /proc/net/dev reads them: the only context every driver's
 * ndo_get_stats64 allows. e1000e, igb, fbnic, bonding and others take a
 * plain spin_lock() there that their own process context (watchdog work,
 * ethtool, /proc/net/dev) takes with BH enabled, so a read from softirq
 * can spin on the lock of the process it interrupted. This is
 * drop_monitor's and ledtrig-netdev's pattern, timer then work.
 *
 * A session with queues reads its netdevs' queue statistics too, and the
 * map of their queues to NAPI instances, IRQs and CPUs, under the locks
 * netdev-genl holds for them, RTNL, the netdev's instance lock or both,
 * each taken with a trylock: the sampler never waits on a lock that a
 * configuration change may hold for seconds. A read that finds one held is
 * skipped and counted; the CPUs and stats64 are read all the same. It
 * holds the lock for KPM_HOLD_NS at most, plus one call into the driver,
 * and lets go as long between holds, so that a netdev of many queues
 * never keeps the lock from others for longer.
 */

#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/kernel_stat.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <net/busy_poll.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>

#include "compat.h"
#include "kpm.h"

/* a u32 counter that another CPU moves as it likes, with no lock */
static u32 kpm_racy(const unsigned int *count)
{
	/* racy by design: a moment old at worst, and the next read has it */
	return data_race(READ_ONCE(*count));
}

/*
 * A CPU's network processing, as /proc/net/softnet_stat and /proc/softirqs
 * read it: that CPU's u32 counters, read with no lock while it counts
 * (kpm_racy()), and extended to 64 bits from the values @net holds. (Not
 * softnet_data's flow_limit_count: struct sd_flow_limit is private to
 * net/core.)
 */
static void kpm_read_cpu_net(struct kpm_cpu_net *net, unsigned int cpu)
{
	const struct softnet_data *sd = &per_cpu(softnet_data, cpu);
	const unsigned int *softirqs = kstat_cpu(cpu).softirqs;
	u32 now[KPM_NET_NR_COUNTS];
	int i;

	now[KPM_NET_PROCESSED] = kpm_racy(&sd->processed);
	now[KPM_NET_DROPPED] = kpm_softnet_dropped(sd);	/* atomic */
	now[KPM_NET_TIME_SQUEEZE] = kpm_racy(&sd->time_squeeze);
	now[KPM_NET_RECEIVED_RPS] = kpm_racy(&sd->received_rps);
	now[KPM_NET_RX_SOFTIRQ] = kpm_racy(&softirqs[NET_RX_SOFTIRQ]);
	now[KPM_NET_TX_SOFTIRQ] = kpm_racy(&softirqs[NET_TX_SOFTIRQ]);
	for (i = 0; i < KPM_NET_NR_COUNTS; i++)
		net->count[i] = kpm_extend32(net->count[i], now[i]);
}

/**
 * kpm_sample_cpus() - read kcpustat of every possible CPU into a sample
 * @smp: the sample; its CPU slots are written, the rest left alone
 *
 * With KPM_SAMPLE_CPU_NET, each CPU's network counts are extended from
 * those @smp holds: a session's scratch sample keeps its previous
 * sample's until this one overwrites them, from zero at first.
 *
 * Context: any that may read kcpustat; sleeps not, takes no lock of the
 * module.
 */
void kpm_sample_cpus(struct kpm_sample *smp)
{
	unsigned int cpu;

	/* CPU ids that are not possible keep the zeroed slot of the ring */
	for_each_possible_cpu(cpu) {
		struct kpm_cpu_sample *cs = kpm_sample_cpu(smp, cpu);
		bool online = cpu_online(cpu);
		struct kernel_cpustat kcs;
		struct kpm_cpu_net *net;
		const u64 *t = kcs.cpustat;

		/* as /proc/stat reads them, idle and iowait NOHZ-aware */
		kpm_kcpustat_fetch(&kcs, cpu, online);
		cs->time[KPM_CPU_USER] = t[CPUTIME_USER];
		cs->time[KPM_CPU_NICE] = t[CPUTIME_NICE];
		cs->time[KPM_CPU_SYSTEM] = t[CPUTIME_SYSTEM];
		cs->time[KPM_CPU_IDLE] = t[CPUTIME_IDLE];
		cs->time[KPM_CPU_IOWAIT] = t[CPUTIME_IOWAIT];
		cs->time[KPM_CPU_IRQ] = t[CPUTIME_IRQ];
		cs->time[KPM_CPU_SOFTIRQ] = t[CPUTIME_SOFTIRQ];
		cs->time[KPM_CPU_STEAL] = t[CPUTIME_STEAL];
		cs->time[KPM_CPU_GUEST] = t[CPUTIME_GUEST];
		cs->time[KPM_CPU_GUEST_NICE] = t[CPUTIME_GUEST_NICE];
		cs->online = online;
		net = kpm_sample_cpu_net(smp, cpu);
		if (net)
			kpm_read_cpu_net(net, cpu);
	}
}

/*
 * Each netdev's stats64, stamped with the time its read began. Under RCU,
 * as net-procfs reads them: kpm_netdev_event() clears a netdev's pointer
 * and waits for us with synchronize_net() before it drops the session's
 * reference.
 */
static void kpm_sample_devs(struct kpm_session *s, struct kpm_sample *smp)
{
	u32 i;

	rcu_read_lock();
	for (i = 0; i < s->ndevs; i++) {
		struct kpm_dev_sample *ds = kpm_sample_dev(smp, i);
		struct net_device *dev = rcu_dereference(s->devs[i].dev);

		ds->ifindex = s->devs[i].ifindex;
		ds->gone = !dev;
		if (dev) {
			ds->time_ns = ktime_get_ns();
			dev_get_stats(dev, &ds->stats);
		} else {
			ds->time_ns = 0;
			memset(&ds->stats, 0, sizeof(ds->stats));
		}
	}
	rcu_read_unlock();
}

/*
 * The sampler's holds of the lock of one netdev's queue statistics in one
 * sample: when the one in progress began, and how long they lasted.
 */
struct kpm_hold {
	u64 start_ns;
	struct kpm_hold_stats stats;
};

/* take the lock of @dev's queue statistics, if free, and start a hold */
static bool kpm_hold_begin(struct net_device *dev, struct kpm_hold *h)
{
	if (!kpm_qstats_trylock(dev))
		return false;
	h->start_ns = ktime_get_ns();
	return true;
}

static void kpm_hold_end(struct net_device *dev, struct kpm_hold *h)
{
	u64 ns = ktime_get_ns() - h->start_ns;

	kpm_qstats_unlock(dev);
	h->stats.holds++;
	h->stats.total_ns += ns;
	h->stats.max_ns = max(h->stats.max_ns, ns);
}

/*
 * Whether @dev is as qstats-get reads it, once locked: registered and up,
 * and still the session's: one that left the namespace had its
 * NETDEV_UNREGISTER clear the session's pointer, under RTNL, which the
 * read holds or (with the netdev's instance lock) the netdev's open in
 * another namespace waits for.
 */
static bool kpm_dev_live(const struct kpm_session *s, u32 i,
			 const struct net_device *dev)
{
	return dev->reg_state == NETREG_REGISTERED && dev->flags & IFF_UP &&
	       rcu_access_pointer(s->devs[i].dev) == dev;
}

/*
 * Call @k of a read of @dev's queue statistics into @qs, of the netdev's
 * @rx RX and @tx TX queues: 0 its base statistics, then each RX queue,
 * then each TX queue. Each struct is set to all ones first, which a
 * driver leaves where it reports nothing, as qstats-get does
 * (netdev_nl_stats_by_queue() and netdev_nl_stats_by_netdev()). The
 * queues beyond @nqueues are added to the base statistics, as qstats-get
 * adds all of them up for the netdev, so that base and queues together
 * are its total.
 */
static void kpm_qstats_call(struct net_device *dev, struct kpm_dev_qstats *qs,
			    u32 nqueues, u32 k, u32 rx)
{
	const struct netdev_stat_ops *ops = dev->stat_ops;
	struct netdev_queue_stats_rx *rxs;
	struct netdev_queue_stats_tx *txs;
	u32 q;

	kpm_qstats_assert_held(dev);
	if (!k) {
		memset(&qs->base_rx, 0xff, sizeof(qs->base_rx));
		memset(&qs->base_tx, 0xff, sizeof(qs->base_tx));
		if (ops->get_base_stats)
			ops->get_base_stats(dev, &qs->base_rx, &qs->base_tx);
	} else if (k <= rx) {
		q = k - 1;
		if (q >= nqueues) {
			netdev_stat_queue_sum(dev, q, q + 1, &qs->base_rx,
					      0, 0, &qs->base_tx);
			return;
		}
		rxs = kpm_qstats_rx(qs, q);
		memset(rxs, 0xff, sizeof(*rxs));
		if (ops->get_queue_stats_rx)
			ops->get_queue_stats_rx(dev, q, rxs);
	} else {
		q = k - 1 - rx;
		if (q >= nqueues) {
			netdev_stat_queue_sum(dev, 0, 0, &qs->base_rx,
					      q, q + 1, &qs->base_tx);
			return;
		}
		txs = kpm_qstats_tx(qs, nqueues, q);
		memset(txs, 0xff, sizeof(*txs));
		if (ops->get_queue_stats_tx)
			ops->get_queue_stats_tx(dev, q, txs);
	}
}

/*
 * What qstats-get reads of @dev, its base statistics and every queue, up
 * to @nqueues queues of each direction into @qs and the rest added to the
 * base, in holds of the lock of KPM_HOLD_NS at most plus one call into the
 * driver: after a hold that long, the read lets the lock go for as long
 * again, so that a waiter gets it, then takes it again with a trylock, and
 * goes on only if the netdev is still live with as many queues and the
 * session is not being destroyed. Entered and left holding the lock,
 * under hold @h.
 *
 * Return: true when @qs holds the whole read; false when the lock was not
 * free again or the netdev changed between holds, which leaves @qs with
 * no read and the lock not held.
 */
static bool kpm_read_qstats(struct kpm_session *s, u32 i,
			    struct net_device *dev, struct kpm_dev_qstats *qs,
			    u32 nqueues, struct kpm_hold *h)
{
	u32 rx = dev->real_num_rx_queues, tx = dev->real_num_tx_queues;
	u32 k, calls = 1 + rx + tx;

	qs->rx_queues = rx;
	qs->tx_queues = tx;
	for (k = 0; k < calls; k++) {
		if (k && ktime_get_ns() - h->start_ns >= KPM_HOLD_NS) {
			kpm_hold_end(dev, h);
			/* its destroy waits, under kpm_mutex: not the rest */
			if (READ_ONCE(s->stopping)) {
				qs->read = false;
				return false;
			}
			/*
			 * as long again without it: a trylock right away
			 * would take it back from a waiter that its unlock
			 * woke and that has not run yet
			 */
			fsleep(KPM_HOLD_NS / NSEC_PER_USEC);
			if (!kpm_hold_begin(dev, h)) {
				qs->read = false;
				return false;
			}
			if (!kpm_dev_live(s, i, dev) || !dev->stat_ops ||
			    dev->real_num_rx_queues != rx ||
			    dev->real_num_tx_queues != tx) {
				kpm_hold_end(dev, h);
				qs->read = false;
				return false;
			}
		}
		kpm_qstats_call(dev, qs, nqueues, k, rx);
		h->stats.calls++;
	}
	qs->read = true;
	return true;
}

/* the one CPU in @mask, or -1 */
static int kpm_one_cpu(const struct cpumask *mask)
{
	unsigned int cpu = cpumask_first(mask);

	return cpu < nr_cpu_ids && cpumask_next(cpu, mask) >= nr_cpu_ids ?
	       cpu : -1;
}

/*
 * The link of a queue to @napi, which the locks the caller holds keep
 * linked and unchanged: its NAPI id, IRQ and CPU. The CPU is the IRQ's
 * effective affinity (its affinity on a kernel without
 * CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK), read under RCU, which an IRQ
 * descriptor's freeing waits for, and with no lock of the IRQ's, as
 * /proc/irq/N/effective_affinity reads it: racy by design. A mask of more
 * than one word that changes during the read may read as neither the old
 * one nor the new, for this sample: as one CPU of either, or as none.
 */
static struct kpm_queue_link kpm_read_link(const struct napi_struct *napi)
{
	struct kpm_queue_link link = KPM_NO_LINK;
	const struct cpumask *mask;
	int irq;

	/* as 7.3's queue-get: an id below MIN_NAPI_ID is none */
	if (!napi || napi->napi_id < MIN_NAPI_ID)
		return link;
	link.napi_id = napi->napi_id;
	irq = napi->irq;
	if (irq < 0)
		return link;
	link.irq = irq;
	rcu_read_lock();
	mask = irq_get_effective_affinity_mask(irq);
	if (mask)	/* racy by design, as said above */
		link.cpu = data_race(kpm_one_cpu(mask));
	rcu_read_unlock();
	return link;
}

/* @link, the last read's, read anew from @napi; whether it changed */
static bool kpm_update_link(struct kpm_queue_link *link,
			    const struct napi_struct *napi)
{
	struct kpm_queue_link now = kpm_read_link(napi);
	bool changed = memcmp(link, &now, sizeof(now)) != 0;

	*link = now;
	return changed;
}

/*
 * The links of @dev's first @nqueues queues of each direction, as
 * queue-get and napi-get read them (netdev_nl_queue_fill_one(),
 * netdev_nl_napi_fill_one()), into @qs: its map, whose version goes up
 * when any of them changed since the last read; a queue the netdev does
 * not have has none. Under the locks kpm_qstats_trylock() and
 * kpm_napi_trylock() took.
 */
static void kpm_read_queue_map(struct net_device *dev,
			       struct kpm_dev_qstats *qs, u32 nqueues)
{
	bool changed = !qs->map_version;
	u32 q;

	kpm_napi_assert_held(dev);
	for (q = 0; q < nqueues; q++) {
		changed |= kpm_update_link(kpm_qstats_link(qs, nqueues, true, q),
					   q < dev->real_num_rx_queues ?
					   __netif_get_rx_queue(dev, q)->napi :
					   NULL);
		changed |= kpm_update_link(kpm_qstats_link(qs, nqueues, false, q),
					   q < dev->real_num_tx_queues ?
					   netdev_get_tx_queue(dev, q)->napi :
					   NULL);
	}
	qs->map_version += changed;
	qs->mapped = true;
}

/*
 * One netdev's queue statistics (of a driver that has them) and queue map,
 * netdev @i of the session, held by the caller: the statistics under the
 * lock qstats-get takes, and the map under it and the lock napi-get
 * takes, after the driver's callbacks, each taken with a trylock; what a
 * held lock keeps from being read keeps the last read's, and so does a
 * read whose calls into the driver the read budget has no room for. As
 * qstats-get, it reads a netdev only if, once locked, it is live.
 *
 * Return: whether a read was skipped: a lock held, or no room.
 */
static bool kpm_read_dev_qstats(struct kpm_session *s, u32 i,
				struct net_device *dev,
				struct kpm_dev_qstats *qs, u32 nqueues,
				struct kpm_hold *h)
{
	bool skipped = false, live;

	if (!kpm_hold_begin(dev, h)) {
		qs->skipped = true;
		return true;
	}
	live = kpm_dev_live(s, i, dev);
	if (!live || !dev->stat_ops) {
		qs->read = false;
	} else if (!kpm_session_charge_queues(s, i, 1 +
					      dev->real_num_rx_queues +
					      dev->real_num_tx_queues)) {
		qs->over_budget = true;
		skipped = true;
	} else {
		qs->time_ns = ktime_get_ns();
		if (!kpm_read_qstats(s, i, dev, qs, nqueues, h)) {
			/* let go between holds, and not taken again */
			qs->skipped = true;
			return true;
		}
	}
	/* the driver's callbacks above not under this one */
	if (!live) {
		qs->mapped = false;
	} else if (kpm_napi_trylock(dev)) {
		kpm_read_queue_map(dev, qs, nqueues);
		kpm_napi_unlock(dev);
	} else {
		qs->map_skipped = true;
		skipped = true;
	}
	kpm_hold_end(dev, h);
	return skipped;
}

/*
 * The queue statistics and queue maps of the session's netdevs, netdev by
 * netdev. The session's reference to a netdev goes with its unregister
 * (kpm_netdev_event()), so each read holds one of its own, taken under
 * RCU. A session being destroyed reads no more of them: its sample is
 * never read.
 *
 * Return: the reads skipped.
 */
static u32 kpm_read_session_qstats(struct kpm_session *s,
				   struct kpm_sample *smp, struct kpm_hold *h)
{
	u32 i, skipped = 0;

	for (i = 0; i < s->ndevs && !READ_ONCE(s->stopping); i++) {
		struct kpm_dev_qstats *qs = kpm_sample_qstats(smp, i);
		netdevice_tracker tracker;
		struct net_device *dev;

		rcu_read_lock();
		dev = rcu_dereference(s->devs[i].dev);
		if (dev)
			netdev_hold(dev, &tracker, GFP_ATOMIC);
		rcu_read_unlock();
		qs->skipped = false;
		qs->over_budget = false;
		qs->map_skipped = false;
		if (!dev) {
			qs->read = false;
			qs->mapped = false;
			continue;
		}
		skipped += kpm_read_dev_qstats(s, i, dev, qs, smp->nqueues, h);
		netdev_put(dev, &tracker);
	}
	return skipped;
}

/*
 * Put a sample at the head of the session's ring, overwriting the oldest
 * one when the ring is full: its CPUs, read now into the session's
 * scratch sample, which holds the latest read of its netdevs; its timer
 * period expired at @expires_ns. Under the session's lock, so that the
 * samples of the timer and of the work go into the ring in the order of
 * their times.
 */
static void kpm_sample_commit(struct kpm_session *s, u64 expires_ns)
{
	struct kpm_sample *smp = s->scratch;
	void *slot;

	lockdep_assert_held(&s->lock);
	smp->time_ns = ktime_get_ns();
	smp->delay_ns = smp->time_ns > expires_ns ? smp->time_ns - expires_ns : 0;
	kpm_sample_cpus(smp);
	smp->cost_ns = ktime_get_ns() - smp->time_ns;

	smp->seq = s->head;
	slot = s->ring + (size_t)s->head_slot * s->sample_size;
	/* what kpm_session_read() tells a reader's clock by */
	if (s->head >= s->ring_size)
		s->overwritten_ns = ((struct kpm_sample *)slot)->time_ns;
	memcpy(slot, smp, s->sample_size);
	s->cost_ns += smp->cost_ns;
	s->head++;
	if (++s->head_slot == s->ring_size)
		s->head_slot = 0;
}

/* the netdevs of @src, their stats64 and queue statistics, into @dst */
static void kpm_sample_copy_devs(struct kpm_sample *dst,
				 const struct kpm_sample *src)
{
	memcpy(dst + 1, src + 1,
	       (void *)kpm_sample_cpu(src, 0) - (void *)(src + 1));
	if (src->nqueues)
		memcpy(kpm_sample_qstats(dst, 0), kpm_sample_qstats(src, 0),
		       src->ndevs * kpm_qstats_size(src->nqueues));
}

/*
 * Read the session's netdevs, their queue statistics and map into its
 * work's sample, then take a sample of them and the CPUs, read right
 * after, for the timer period that expired at @expires_ns.
 */
static void kpm_sample_devs_cpus(struct kpm_session *s, u64 expires_ns,
				 bool on_timer_cpu)
{
	struct kpm_sample *smp = s->devs_work;
	struct kpm_hold h = {};
	u32 skipped = 0;
	u64 cost;

	cost = ktime_get_ns();
	kpm_sample_devs(s, smp);
	if (smp->nqueues)
		skipped = kpm_read_session_qstats(s, smp, &h);
	cost = ktime_get_ns() - cost;

	spin_lock_bh(&s->lock);
	kpm_sample_copy_devs(s->scratch, smp);
	s->scratch->dev_read++;
	s->cost_ns += cost;
	s->qstats_skipped += skipped;
	s->on_timer_cpu += on_timer_cpu;
	s->hold.holds += h.stats.holds;
	s->hold.calls += h.stats.calls;
	s->hold.total_ns += h.stats.total_ns;
	s->hold.max_ns = max(s->hold.max_ns, h.stats.max_ns);
	kpm_sample_commit(s, expires_ns);
	spin_unlock_bh(&s->lock);
	/*
	 * the timer samples nothing before the first of these is in: its
	 * smp_load_acquire() of @started pairs with this, after the sample
	 */
	smp_store_release(&s->started, true);
}

/* the reads of the netdevs due in the @periods from @s->period + 1 on */
static u64 kpm_devs_due(const struct kpm_session *s, u64 periods)
{
	return div_u64(s->period + periods, s->dev_every) -
	       div_u64(s->period, s->dev_every);
}

/*
 * Whether the work takes the sample of the timer period that expired at
 * @expires, which covers @periods periods, from @s->period + 1 on (those
 * before the last it came too late for): the netdevs are read every
 * @s->dev_every periods, once for those due in them if the read before
 * is done, and the work takes this period's sample; the other reads due
 * are missed.
 */
static bool kpm_timer_devs(struct kpm_session *s, u64 expires, u64 periods)
{
	u64 due = kpm_devs_due(s, periods);
	bool queued = false;

	if (due && !test_and_set_bit(0, &s->busy)) {
		s->expires_ns = expires;
		s->timer_cpu = smp_processor_id();
		queue_work(kpm_wq, &s->work);
		queued = true;
		due--;
	}
	if (due)
		atomic64_add(due, &s->dev_missed);
	return queued;
}

/**
 * kpm_timer_fn() - the beat of a session: read its CPUs, ask for its netdevs
 * @timer: the session's timer
 *
 * Every dev_every periods, queues kpm_sample_work() on kpm_wq to read the
 * netdevs and take the period's sample. In the other periods it reads
 * every CPU itself and puts the sample into the ring, with the netdevs of
 * their latest read. The periods the timer itself came too late for
 * (hrtimer_forward_now()'s overruns beyond one), and those in which a
 * read of the netdevs is still waiting to run or running, took no sample
 * and count in @missed; the reads of the netdevs due in them in
 * @dev_missed.
 *
 * Context: a soft hrtimer (HRTIMER_MODE_REL_SOFT): softirq, or on
 * PREEMPT_RT the ktimers thread of its CPU, the CPU that started the
 * session, which re-arming keeps. Takes the session's lock, and reads
 * each CPU under it as /proc/stat, /proc/softirqs and
 * /proc/net/softnet_stat do, with no other lock (kpm_sample_cpus()).
 * Alone to run for its session: the only writer of @period, and of
 * @expires_ns and @timer_cpu while @busy is clear.
 *
 * Return: HRTIMER_RESTART, forwarded by one interval.
 */
enum hrtimer_restart kpm_timer_fn(struct hrtimer *timer)
{
	struct kpm_session *s = container_of(timer, struct kpm_session, timer);
	u64 expires = ktime_to_ns(hrtimer_get_expires(timer));
	u64 periods = hrtimer_forward_now(timer, ns_to_ktime(s->interval_ns));
	bool queued;

	/*
	 * a session of netdevs has no sample before its first read's (pairs
	 * with the smp_store_release() of its work's first sample), nor while
	 * a read is in flight: the work's sample goes into the ring first,
	 * so that the samples are in the order of their periods
	 */
	if (s->ndevs && (!smp_load_acquire(&s->started) ||
			 test_bit(0, &s->busy))) {
		atomic64_add(periods, &s->missed);
		atomic64_add(kpm_devs_due(s, periods), &s->dev_missed);
		s->period += periods;
		return HRTIMER_RESTART;
	}
	queued = s->ndevs && kpm_timer_devs(s, expires, periods);
	if (periods > 1)
		atomic64_add(periods - 1, &s->missed);
	s->period += periods;
	if (!queued) {
		/* BH is off: softirq, or the ktimers thread on PREEMPT_RT */
		spin_lock(&s->lock);
		kpm_sample_commit(s, expires);
		spin_unlock(&s->lock);
	}
	return HRTIMER_RESTART;
}

/**
 * kpm_sample_work() - read a session's netdevs, and take a sample
 * @work: the session's work item
 *
 * Reads every netdev and its queue statistics, each after a stamp of its
 * own, into the session's work sample with no lock of the module held,
 * then takes the sample of the timer period that queued it: those and
 * every CPU, read right after, under the session's lock.
 *
 * Context: process, a worker of kpm_wq: unbound, on any CPU of its
 * cpumask (the housekeeping CPUs by default), wherever the scheduler
 * finds room, not bound to the CPU the timer fired on.
 * Calls ndo_get_stats64 under rcu_read_lock(); with queues, netdev_stat_ops
 * under RTNL or a netdev's instance lock, and reads its queue map under
 * that and (from 6.14) the instance lock, if trylocks get them; takes
 * kpm_budget_lock when a netdev's queues changed; then takes the
 * session's lock to read the CPUs and copy the sample. The timer queues
 * no other read until this one clears @busy, so the work sample,
 * @expires_ns and @timer_cpu are its own.
 */
void kpm_sample_work(struct work_struct *work)
{
	struct kpm_session *s = container_of(work, struct kpm_session, work);

	kpm_sample_devs_cpus(s, s->expires_ns,
			     raw_smp_processor_id() == s->timer_cpu);
	clear_bit_unlock(0, &s->busy);
}

/**
 * kpm_sample_first() - take a session's first sample, at once
 * @s: the session, whose timer has not started
 * @now_ns: the expiry of its first period: its timer's grid
 *
 * The baseline of the session: of its CPUs, read here, or, with netdevs,
 * of its netdevs and CPUs, which its work reads, queued here as the timer
 * queues it; the timer takes no sample until that one is in
 * (@s->started), so that every sample holds a read of both.
 *
 * Context: process, under kpm_mutex, before the timer starts: nothing
 * else writes the session's samples yet. Calls no driver: a read of the
 * netdevs here would order their drivers' locks after kpm_mutex, and
 * keep the netdev notifier, under RTNL, waiting for it.
 */
void kpm_sample_first(struct kpm_session *s, u64 now_ns)
{
	lockdep_assert_held(&kpm_mutex);
	if (s->ndevs) {
		set_bit(0, &s->busy);
		s->expires_ns = now_ns;
		s->timer_cpu = raw_smp_processor_id();
		queue_work(kpm_wq, &s->work);
		return;
	}
	spin_lock_bh(&s->lock);
	kpm_sample_commit(s, now_ns);
	spin_unlock_bh(&s->lock);
}
