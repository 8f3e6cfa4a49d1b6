// SPDX-License-Identifier: GPL-2.0
/*
 * sample-get of the ksft_perfmon generic netlink family: the dump of a
 * session's samples, each with its netdevs, their queues and its CPUs,
 * and its times in the requester's time namespace. Its policy and op are
 * generated into netlink-gen.c; netlink.c has the session commands.
 */

#include <linux/build_bug.h>
#include <linux/netlink.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/time_namespace.h>
#include <net/genetlink.h>
#include <net/netdev_queues.h>
#include <net/netlink.h>

#include "compat.h"
#include "kpm.h"
#include "netlink-gen.h"

/*
 * dump position of sample-get, in cb->ctx. Its copies of samples are a
 * session's readers' buffer, borrowed, or one of its own: with
 * changed-only two, the one being sent and the one sent before it, which
 * the flag KPM_NL_CUR_SECOND tells apart; else one.
 */
struct kpm_nl_sample_ctx {
	struct kpm_reader *copies;
	u64 cookie;	/* of the session: its id alone may be reused */
	u64 seq;	/* the sample being sent, or the next one */
	u64 end;	/* the head when the dump started: where it ends */
	s64 timens;	/* the requester's CLOCK_MONOTONIC offset, in ns */
	u32 session_id;
	u16 item;	/* next item (kpm_nl_put_item()) of the copy to send */
	u8 flags;	/* KPM_NL_* */
};

/* the current copy holds sample seq, not all of it sent */
#define KPM_NL_COPIED		BIT(0)
/* send what changed since the previous copy, once there is one */
#define KPM_NL_CHANGED_ONLY	BIT(1)
#define KPM_NL_HAVE_PREV	BIT(2)
/* the current copy is the second of @copies */
#define KPM_NL_CUR_SECOND	BIT(3)

static_assert(KSFT_PERFMON_A_CPU_STATS_GUEST_NICE -
	      KSFT_PERFMON_A_CPU_STATS_USER + 1 == KPM_CPU_NR_TIMES);
static_assert(KSFT_PERFMON_A_CPU_STATS_SOFTIRQ_NET_TX -
	      KSFT_PERFMON_A_CPU_STATS_SOFTNET_PROCESSED + 1 ==
	      KPM_NET_NR_COUNTS);

#define KPM_DEV_STAT(field, attr) \
	{ offsetof(struct rtnl_link_stats64, field), \
	  KSFT_PERFMON_A_DEV_STATS_ ## attr }

static const struct {
	u16 offset;
	u16 attr;
} kpm_dev_stats[] = {
	KPM_DEV_STAT(rx_packets, RX_PACKETS),
	KPM_DEV_STAT(tx_packets, TX_PACKETS),
	KPM_DEV_STAT(rx_bytes, RX_BYTES),
	KPM_DEV_STAT(tx_bytes, TX_BYTES),
	KPM_DEV_STAT(rx_errors, RX_ERRORS),
	KPM_DEV_STAT(tx_errors, TX_ERRORS),
	KPM_DEV_STAT(rx_dropped, RX_DROPPED),
	KPM_DEV_STAT(tx_dropped, TX_DROPPED),
	KPM_DEV_STAT(multicast, MULTICAST),
	KPM_DEV_STAT(collisions, COLLISIONS),
	KPM_DEV_STAT(rx_length_errors, RX_LENGTH_ERRORS),
	KPM_DEV_STAT(rx_over_errors, RX_OVER_ERRORS),
	KPM_DEV_STAT(rx_crc_errors, RX_CRC_ERRORS),
	KPM_DEV_STAT(rx_frame_errors, RX_FRAME_ERRORS),
	KPM_DEV_STAT(rx_fifo_errors, RX_FIFO_ERRORS),
	KPM_DEV_STAT(rx_missed_errors, RX_MISSED_ERRORS),
	KPM_DEV_STAT(tx_aborted_errors, TX_ABORTED_ERRORS),
	KPM_DEV_STAT(tx_carrier_errors, TX_CARRIER_ERRORS),
	KPM_DEV_STAT(tx_fifo_errors, TX_FIFO_ERRORS),
	KPM_DEV_STAT(tx_heartbeat_errors, TX_HEARTBEAT_ERRORS),
	KPM_DEV_STAT(tx_window_errors, TX_WINDOW_ERRORS),
	KPM_DEV_STAT(rx_compressed, RX_COMPRESSED),
	KPM_DEV_STAT(tx_compressed, TX_COMPRESSED),
	KPM_DEV_STAT(rx_nohandler, RX_NOHANDLER),
	KPM_DEV_STAT(rx_otherhost_dropped, RX_OTHERHOST_DROPPED),
};

#define KPM_QSTAT(dir, field, attr) \
	{ offsetof(struct netdev_queue_stats_ ## dir, field), \
	  KSFT_PERFMON_A_QSTATS_ ## attr }

/* a counter of a struct: its offset, and its attribute */
struct kpm_stat_attr {
	u16 offset;
	u16 attr;
};

/* struct netdev_queue_stats_rx's counters, as qstats-get puts them */
static const struct kpm_stat_attr kpm_qstats_rx_attrs[] = {
	KPM_QSTAT(rx, packets, RX_PACKETS),
	KPM_QSTAT(rx, bytes, RX_BYTES),
	KPM_QSTAT(rx, alloc_fail, RX_ALLOC_FAIL),
	KPM_QSTAT(rx, hw_drops, RX_HW_DROPS),
	KPM_QSTAT(rx, hw_drop_overruns, RX_HW_DROP_OVERRUNS),
#if KPM_HAVE_QSTATS_CSUM_COMPLETE
	KPM_QSTAT(rx, csum_complete, RX_CSUM_COMPLETE),
#endif
	KPM_QSTAT(rx, csum_unnecessary, RX_CSUM_UNNECESSARY),
	KPM_QSTAT(rx, csum_none, RX_CSUM_NONE),
	KPM_QSTAT(rx, csum_bad, RX_CSUM_BAD),
	KPM_QSTAT(rx, hw_gro_packets, RX_HW_GRO_PACKETS),
	KPM_QSTAT(rx, hw_gro_bytes, RX_HW_GRO_BYTES),
	KPM_QSTAT(rx, hw_gro_wire_packets, RX_HW_GRO_WIRE_PACKETS),
	KPM_QSTAT(rx, hw_gro_wire_bytes, RX_HW_GRO_WIRE_BYTES),
	KPM_QSTAT(rx, hw_drop_ratelimits, RX_HW_DROP_RATELIMITS),
};

static const struct kpm_stat_attr kpm_qstats_tx_attrs[] = {
	KPM_QSTAT(tx, packets, TX_PACKETS),
	KPM_QSTAT(tx, bytes, TX_BYTES),
	KPM_QSTAT(tx, hw_drops, TX_HW_DROPS),
	KPM_QSTAT(tx, hw_drop_errors, TX_HW_DROP_ERRORS),
	KPM_QSTAT(tx, csum_none, TX_CSUM_NONE),
	KPM_QSTAT(tx, needs_csum, TX_NEEDS_CSUM),
	KPM_QSTAT(tx, hw_gso_packets, TX_HW_GSO_PACKETS),
	KPM_QSTAT(tx, hw_gso_bytes, TX_HW_GSO_BYTES),
	KPM_QSTAT(tx, hw_gso_wire_packets, TX_HW_GSO_WIRE_PACKETS),
	KPM_QSTAT(tx, hw_gso_wire_bytes, TX_HW_GSO_WIRE_BYTES),
	KPM_QSTAT(tx, hw_drop_ratelimits, TX_HW_DROP_RATELIMITS),
	KPM_QSTAT(tx, stop, TX_STOP),
	KPM_QSTAT(tx, wake, TX_WAKE),
};

/* every counter of the structs: one that is not put is a new one */
static_assert(ARRAY_SIZE(kpm_qstats_rx_attrs) * sizeof(u64) ==
	      sizeof(struct netdev_queue_stats_rx));
static_assert(ARRAY_SIZE(kpm_qstats_tx_attrs) * sizeof(u64) ==
	      sizeof(struct netdev_queue_stats_tx));

static_assert(ARRAY_SIZE(kpm_dev_stats) ==
	      KSFT_PERFMON_A_DEV_STATS_RX_OTHERHOST_DROPPED -
	      KSFT_PERFMON_A_DEV_STATS_GONE);

/*
 * The offset of current's CLOCK_MONOTONIC from the kernel's: what its
 * time namespace adds, as clock_gettime() and /proc/uptime add it.
 *
 * Context: process, a task with its namespaces (not yet in do_exit()).
 */
static s64 kpm_nl_timens_offset(void)
{
	struct timespec64 off = {};

	timens_add_monotonic(&off);
	return timespec64_to_ns(&off);
}

/*
 * When a clock at @offset from the kernel's CLOCK_MONOTONIC began, in the
 * kernel's: 0 for one that began with it or before
 */
static u64 kpm_nl_clock_start(s64 offset)
{
	return offset < 0 ? -offset : 0;
}

/* whether @ns of the kernel's CLOCK_MONOTONIC is before 0 at @offset */
static bool kpm_nl_before_clock(u64 ns, s64 offset)
{
	return ns < kpm_nl_clock_start(offset);
}

/* @ns of the kernel's CLOCK_MONOTONIC at @offset, not before 0 there */
static u64 kpm_nl_monotonic(u64 ns, s64 offset)
{
	return kpm_nl_before_clock(ns, offset) ? 0 : ns + offset;
}

/* counter @i of kpm_dev_stats[] in @ds */
static u64 kpm_dev_stat(const struct kpm_dev_sample *ds, u32 i)
{
	return *(const u64 *)((const void *)&ds->stats +
			      kpm_dev_stats[i].offset);
}

/*
 * Netdev @ds of a sample, whole, or with @prev (the same netdev in the
 * sample sent before) only the counters that changed: all of them when
 * it was gone in @prev, none when it is gone. Its time, at @timens from
 * the kernel's CLOCK_MONOTONIC, whenever it has counters.
 */
static int kpm_nl_put_dev(struct sk_buff *skb, const struct kpm_dev_sample *ds,
			  const struct kpm_dev_sample *prev, s64 timens)
{
	struct nlattr *nest;
	u32 i;

	if (prev && prev->gone)
		prev = NULL;

	nest = nla_nest_start(skb, KSFT_PERFMON_A_SAMPLE_DEV);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KSFT_PERFMON_A_DEV_STATS_IFINDEX, ds->ifindex))
		goto err_cancel_nest;
	if (ds->gone) {
		if (nla_put_flag(skb, KSFT_PERFMON_A_DEV_STATS_GONE))
			goto err_cancel_nest;
	} else {
		if (nla_put_uint(skb, KSFT_PERFMON_A_DEV_STATS_TIME,
				 kpm_nl_monotonic(ds->time_ns, timens)))
			goto err_cancel_nest;
		for (i = 0; i < ARRAY_SIZE(kpm_dev_stats); i++) {
			u64 v = kpm_dev_stat(ds, i);

			if (prev && v == kpm_dev_stat(prev, i))
				continue;
			if (nla_put_uint(skb, kpm_dev_stats[i].attr, v))
				goto err_cancel_nest;
		}
	}
	nla_nest_end(skb, nest);
	return 0;

err_cancel_nest:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * CPU @cpu of a sample, whole, or with @prev (the same CPU in the sample
 * sent before) only the counters that changed, and nothing when none did
 * and it is as online as it was. @net and @prev_net are its network
 * counts, or NULL when the session has none.
 */
static int kpm_nl_put_cpu(struct sk_buff *skb, unsigned int cpu,
			  const struct kpm_cpu_sample *cs,
			  const struct kpm_cpu_sample *prev,
			  const struct kpm_cpu_net *net,
			  const struct kpm_cpu_net *prev_net)
{
	struct nlattr *nest;
	u32 i;

	if (prev && prev->online == cs->online &&
	    !memcmp(prev->time, cs->time, sizeof(cs->time)) &&
	    (!net || !memcmp(prev_net, net, sizeof(*net))))
		return 0;
	nest = nla_nest_start(skb, KSFT_PERFMON_A_SAMPLE_CPU);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KSFT_PERFMON_A_CPU_STATS_ID, cpu) ||
	    (cs->online && nla_put_flag(skb, KSFT_PERFMON_A_CPU_STATS_ONLINE)))
		goto err_cancel_nest;
	for (i = 0; i < KPM_CPU_NR_TIMES; i++)
		if ((!prev || prev->time[i] != cs->time[i]) &&
		    nla_put_uint(skb, KSFT_PERFMON_A_CPU_STATS_USER + i,
				 cs->time[i]))
			goto err_cancel_nest;
	for (i = 0; net && i < KPM_NET_NR_COUNTS; i++)
		if ((!prev || prev_net->count[i] != net->count[i]) &&
		    nla_put_uint(skb,
				 KSFT_PERFMON_A_CPU_STATS_SOFTNET_PROCESSED + i,
				 net->count[i]))
			goto err_cancel_nest;
	nla_nest_end(skb, nest);
	return 0;

err_cancel_nest:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * The counters of @stats, a struct of queue statistics, by @attrs; those
 * the driver does not report (all ones) left out.
 */
static int kpm_nl_put_qstats_counters(struct sk_buff *skb, const void *stats,
				      const struct kpm_stat_attr *attrs,
				      u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 v = *(const u64 *)(stats + attrs[i].offset);

		if (v != U64_MAX && nla_put_uint(skb, attrs[i].attr, v))
			return -EMSGSIZE;
	}
	return 0;
}

static int kpm_nl_put_qstats_rx(struct sk_buff *skb, const void *rx)
{
	return kpm_nl_put_qstats_counters(skb, rx, kpm_qstats_rx_attrs,
					  ARRAY_SIZE(kpm_qstats_rx_attrs));
}

static int kpm_nl_put_qstats_tx(struct sk_buff *skb, const void *tx)
{
	return kpm_nl_put_qstats_counters(skb, tx, kpm_qstats_tx_attrs,
					  ARRAY_SIZE(kpm_qstats_tx_attrs));
}

/*
 * The queue statistics of netdev @ifindex: whether this sample's read was
 * skipped and, when they hold a read's, its time (at @timens from the
 * kernel's CLOCK_MONOTONIC), its number of queues and its base
 * statistics. Whole, changed-only or not: the one nest that says whether
 * the netdev has queue statistics in this sample.
 */
static int kpm_nl_put_dev_qstats(struct sk_buff *skb, u32 ifindex,
				 const struct kpm_dev_qstats *qs, s64 timens)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, KSFT_PERFMON_A_SAMPLE_QSTATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_IFINDEX, ifindex) ||
	    (qs->skipped && nla_put_flag(skb, KSFT_PERFMON_A_QSTATS_SKIPPED)) ||
	    (qs->over_budget &&
	     nla_put_flag(skb, KSFT_PERFMON_A_QSTATS_OVER_BUDGET)))
		goto err_cancel_nest;
	if (qs->read &&
	    (nla_put_uint(skb, KSFT_PERFMON_A_QSTATS_TIME,
			  kpm_nl_monotonic(qs->time_ns, timens)) ||
	     nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_RX_QUEUES, qs->rx_queues) ||
	     nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_TX_QUEUES, qs->tx_queues) ||
	     kpm_nl_put_qstats_rx(skb, &qs->base_rx) ||
	     kpm_nl_put_qstats_tx(skb, &qs->base_tx)))
		goto err_cancel_nest;
	if ((qs->mapped &&
	     nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_MAP_VERSION,
			 qs->map_version)) ||
	    (qs->map_skipped &&
	     nla_put_flag(skb, KSFT_PERFMON_A_QSTATS_MAP_SKIPPED)))
		goto err_cancel_nest;
	nla_nest_end(skb, nest);
	return 0;

err_cancel_nest:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* the link of a queue to its NAPI instance, IRQ and CPU, if it has one */
static int kpm_nl_put_link(struct sk_buff *skb,
			   const struct kpm_queue_link *link)
{
	if (nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_NAPI_ID, link->napi_id) ||
	    (link->irq >= 0 &&
	     nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_IRQ, link->irq)) ||
	    (link->cpu >= 0 &&
	     nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_CPU, link->cpu)))
		return -EMSGSIZE;
	return 0;
}

/*
 * Queue @q of direction @type of netdev @ifindex, whose queue statistics
 * and map are @qs, or with @prev (the same netdev's in the sample sent
 * before) only if its counters or the map changed; with all its counters
 * either way, and with its link where the map is to be sent. Nothing for
 * a queue the netdev does not have, or of which the driver reports
 * nothing and that has no link to send, as qstats-get.
 */
static int kpm_nl_put_queue(struct sk_buff *skb, u32 ifindex, u32 nqueues,
			    const struct kpm_dev_qstats *qs,
			    const struct kpm_dev_qstats *prev, u32 type, u32 q)
{
	bool rx = type == KSFT_PERFMON_QUEUE_TYPE_RX;
	const struct kpm_queue_link *link = NULL;
	const void *stats = NULL, *prev_stats = NULL;
	struct nlattr *nest;
	size_t size;

	/* the map goes in a whole sample, and where it changed */
	if (qs->mapped && (!prev || !prev->mapped ||
			   prev->map_version != qs->map_version)) {
		link = kpm_qstats_link(qs, nqueues, rx, q);
		if (!link->napi_id)
			link = NULL;
	}
	if (qs->read && q < (rx ? qs->rx_queues : qs->tx_queues)) {
		stats = rx ? (void *)kpm_qstats_rx(qs, q) :
			     (void *)kpm_qstats_tx(qs, nqueues, q);
		size = rx ? sizeof(struct netdev_queue_stats_rx) :
			    sizeof(struct netdev_queue_stats_tx);
		if (prev && prev->read &&
		    q < (rx ? prev->rx_queues : prev->tx_queues))
			prev_stats = rx ? (void *)kpm_qstats_rx(prev, q) :
					  (void *)kpm_qstats_tx(prev, nqueues,
								q);
		if (prev_stats && !memcmp(stats, prev_stats, size) && !link)
			return 0;
		/*
		 * A queue the driver reports nothing of is left out, but for
		 * one it reported in @prev: a nest with no counter, that it
		 * has none now.
		 */
		if (!memchr_inv(stats, 0xff, size) &&
		    (!prev_stats || !memchr_inv(prev_stats, 0xff, size)) &&
		    !link)
			return 0;
	} else if (!link) {
		return 0;
	}

	nest = nla_nest_start(skb, KSFT_PERFMON_A_SAMPLE_QUEUE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_IFINDEX, ifindex) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_QUEUE_TYPE, type) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_QSTATS_QUEUE_ID, q) ||
	    (stats && (rx ? kpm_nl_put_qstats_rx(skb, stats) :
			    kpm_nl_put_qstats_tx(skb, stats))) ||
	    (link && kpm_nl_put_link(skb, link)))
		goto err_cancel_nest;
	nla_nest_end(skb, nest);
	return 0;

err_cancel_nest:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* the items of a sample before its CPUs: netdevs, then their queues */
static u32 kpm_nl_dev_items(const struct kpm_sample *smp)
{
	return smp->ndevs +
	       (smp->nqueues ? smp->ndevs * (1 + 2 * smp->nqueues) : 0);
}

/*
 * Item @i of the queues of a sample: for each netdev, its queue
 * statistics, then its RX queues, then its TX queues.
 */
static int kpm_nl_put_queue_item(struct sk_buff *skb,
				 const struct kpm_sample *smp,
				 const struct kpm_sample *prev, u32 i,
				 s64 timens)
{
	u32 nq = smp->nqueues, d = i / (1 + 2 * nq), k = i % (1 + 2 * nq);
	const struct kpm_dev_qstats *qs = kpm_sample_qstats(smp, d);
	u32 ifindex = kpm_sample_dev(smp, d)->ifindex;
	const struct kpm_dev_qstats *pqs;

	if (!k)
		return kpm_nl_put_dev_qstats(skb, ifindex, qs, timens);
	pqs = prev ? kpm_sample_qstats(prev, d) : NULL;
	if (k <= nq)
		return kpm_nl_put_queue(skb, ifindex, nq, qs, pqs,
					KSFT_PERFMON_QUEUE_TYPE_RX, k - 1);
	return kpm_nl_put_queue(skb, ifindex, nq, qs, pqs,
				KSFT_PERFMON_QUEUE_TYPE_TX, k - 1 - nq);
}

/* What closes a part: cpu-end and last-part. */
#define KPM_NL_PART_TAIL	(nla_total_size(sizeof(u32)) + nla_total_size(0))

/*
 * Item @i of a sample: its netdevs, then with queues each netdev's queue
 * statistics and queues, then its CPU ids; none for an id that is not a
 * possible CPU. With @prev, only what changed since it. Times at @timens
 * from the kernel's CLOCK_MONOTONIC.
 */
static int kpm_nl_put_item(struct sk_buff *skb, const struct kpm_sample *smp,
			   const struct kpm_sample *prev, u32 i, s64 timens)
{
	u32 cpu, devs = kpm_nl_dev_items(smp);

	if (i < smp->ndevs)
		return kpm_nl_put_dev(skb, kpm_sample_dev(smp, i),
				      prev ? kpm_sample_dev(prev, i) : NULL,
				      timens);
	if (i < devs)
		return kpm_nl_put_queue_item(skb, smp, prev, i - smp->ndevs,
					     timens);
	cpu = i - devs;
	if (!cpu_possible(cpu))
		return 0;
	return kpm_nl_put_cpu(skb, cpu, kpm_sample_cpu(smp, cpu),
			      prev ? kpm_sample_cpu(prev, cpu) : NULL,
			      kpm_sample_cpu_net(smp, cpu),
			      prev ? kpm_sample_cpu_net(prev, cpu) : NULL);
}

/*
 * Put the next part of sample @smp into one message: its items from *@item
 * on, as many as fit. Each part says which CPUs it covers, and the last
 * one says it is the last. Its time is at @timens from the kernel's
 * CLOCK_MONOTONIC. With @prev, the sample sent before it, only what
 * changed since then. Needs no lock: both are the dump's own copies.
 *
 * Return: 0 when the part was the last; -EMSGSIZE when the sample goes on
 * in the next skb, *@item at its first item not sent.
 */
static int kpm_nl_sample_fill(struct sk_buff *skb, u32 session_id,
			      const struct kpm_sample *smp,
			      const struct kpm_sample *prev, u16 *item,
			      s64 timens, const struct genl_info *info)
{
	u32 first = *item, ndevs = kpm_nl_dev_items(smp);
	u32 nitems = ndevs + nr_cpu_ids, i;
	void *hdr;

	hdr = genlmsg_iput(skb, info);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KSFT_PERFMON_A_SAMPLE_SESSION_ID, session_id) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_SEQ, smp->seq) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_SAMPLE_CPU_START,
			first > ndevs ? first - ndevs : 0))
		goto err_cancel_msg;
	if (!first &&
	    (nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_TIME,
			  kpm_nl_monotonic(smp->time_ns, timens)) ||
	     nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_COST, smp->cost_ns) ||
	     nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_DELAY, smp->delay_ns) ||
	     (smp->ndevs &&
	      nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_DEV_READ, smp->dev_read)) ||
	     (prev &&
	      nla_put_uint(skb, KSFT_PERFMON_A_SAMPLE_BASE_SEQ, prev->seq))))
		goto err_cancel_msg;

	for (i = first; i < nitems; i++) {
		unsigned char *mark = skb_tail_pointer(skb);

		if (kpm_nl_put_item(skb, smp, prev, i, timens) ||
		    skb_tailroom(skb) < KPM_NL_PART_TAIL) {
			nlmsg_trim(skb, mark);
			break;
		}
	}
	if (i == first)
		goto err_cancel_msg;

	/* cannot fail: the room was kept */
	nla_put_u32(skb, KSFT_PERFMON_A_SAMPLE_CPU_END, i > ndevs ? i - ndevs : 0);
	if (i == nitems)
		nla_put_flag(skb, KSFT_PERFMON_A_SAMPLE_LAST_PART);
	genlmsg_end(skb, hdr);
	*item = i;
	return i == nitems ? 0 : -EMSGSIZE;

err_cancel_msg:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * ksft_perfmon_nl_sample_get_start() - check a sample-get request
 * @cb: dump state
 *
 * Looks up the session, notes where the dump ends and the requester's time
 * namespace, and borrows the session's readers' buffer (kpm_reader), the
 * dump's copies of a sample, which it formats with no lock held: with
 * changed-only, a second one, for the sample sent before. While another
 * dump has it, the dump allocates one of its own.
 *
 * Context: process, the requester's (sendmsg()). Takes kpm_mutex, then the
 * session's lock.
 *
 * Return: 0 or a negative errno, with extack set.
 */
int ksft_perfmon_nl_sample_get_start(struct netlink_callback *cb)
{
	const struct genl_info *info = genl_info_dump(cb);
	struct kpm_nl_sample_ctx *ctx = (void *)cb->ctx;
	const struct nlattr *id_attr;
	struct kpm_session *s;
	u32 sample_size = 0;
	size_t size;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	/* ctx->item counts the netdevs, queues and CPUs of a sample */
	BUILD_BUG_ON(KSFT_PERFMON_DEVS_MAX * (2 + 2 * KSFT_PERFMON_QUEUES_MAX) +
		     CONFIG_NR_CPUS > U16_MAX);

	if (GENL_REQ_ATTR_CHECK(info, KSFT_PERFMON_A_SAMPLE_SESSION_ID))
		return -EINVAL;
	id_attr = info->attrs[KSFT_PERFMON_A_SAMPLE_SESSION_ID];
	ctx->session_id = nla_get_u32(id_attr);
	if (info->attrs[KSFT_PERFMON_A_SAMPLE_CURSOR])
		ctx->seq = nla_get_uint(info->attrs[KSFT_PERFMON_A_SAMPLE_CURSOR]);
	if (nla_get_flag(info->attrs[KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY]))
		ctx->flags |= KPM_NL_CHANGED_ONLY;
	/* whoever reads on, the times are the requester's */
	ctx->timens = kpm_nl_timens_offset();

	mutex_lock(&kpm_mutex);
	s = kpm_nl_session_find(cb->skb, id_attr, cb->extack);
	if (s) {
		ctx->cookie = s->cookie;
		sample_size = s->sample_size;
		spin_lock_bh(&s->lock);
		ctx->end = s->head;
		spin_unlock_bh(&s->lock);
		ctx->copies = kpm_session_reader_take(s);
	}
	mutex_unlock(&kpm_mutex);
	if (!s)
		return -ENOENT;
	if (ctx->copies)
		return 0;

	/* as the session's, so that it may keep it (kpm_session_reader_give()) */
	size = struct_size(ctx->copies, smp, 0) + 2 * (size_t)sample_size;
	ctx->copies = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!ctx->copies)
		return -ENOMEM;
	ctx->copies->sample_size = sample_size;
	return 0;
}

/*
 * Leave out of a dump's copy @smp what was read before the requester's
 * clock began (@timens from the kernel's), as if it had not been read
 * yet: the whole sample, when its CPUs were (true); else the queue
 * statistics that a skipped read kept from before then.
 */
static bool kpm_nl_before_clock_fixup(struct kpm_sample *smp, s64 timens)
{
	struct kpm_dev_qstats *qs;
	u32 i;

	if (kpm_nl_before_clock(smp->time_ns, timens))
		return true;
	for (i = 0; smp->nqueues && i < smp->ndevs; i++) {
		qs = kpm_sample_qstats(smp, i);
		if (qs->read && kpm_nl_before_clock(qs->time_ns, timens))
			qs->read = false;
	}
	return false;
}

/*
 * The dump's copy of the sample being sent, or (@prev) of the one sent
 * before it, NULL without changed-only or before the first was sent.
 */
static struct kpm_sample *kpm_nl_copy(struct kpm_nl_sample_ctx *ctx, bool prev)
{
	bool second = !!(ctx->flags & KPM_NL_CUR_SECOND) != prev;

	if (prev && !(ctx->flags & KPM_NL_HAVE_PREV))
		return NULL;
	return (void *)ctx->copies->smp +
	       (second ? ctx->copies->sample_size : 0);
}

/**
 * ksft_perfmon_nl_sample_get_dumpit() - dump samples from the cursor on
 * @skb: reply
 * @cb: dump state
 *
 * Starts at the oldest sample in the ring when the cursor is older, and
 * ends at the newest sample when the dump started, or at the oldest one
 * left when the ring has overwritten all of those: a reader slower than
 * the sampler still sees its dump end, always with a sample to go on
 * from, and the samples it could not keep up with are counted as lost,
 * once. Each sample is copied out of the ring once
 * and sent from the copy, in as many parts as it takes, so a sample never
 * changes between its parts. With changed-only, each sample after the
 * first is sent with only what changed since the one sent before it,
 * whose copy the dump keeps. Samples taken before the requester's clock
 * began are left out (kpm_nl_before_clock_fixup()). A session destroyed
 * during the dump ends it with -ENOENT, in an skb of its own, with its
 * extack.
 *
 * Context: process. Takes kpm_mutex, then the session's lock, to copy
 * each sample; builds the messages with neither held.
 *
 * Return: 0 at the end; -EMSGSIZE or the length of @skb when the dump
 * goes on in the next skb; -ENOENT.
 */
int ksft_perfmon_nl_sample_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	struct kpm_nl_sample_ctx *ctx = (void *)cb->ctx;
	struct kpm_session *s;
	int err;

	for (;;) {
		if (!(ctx->flags & KPM_NL_COPIED)) {
			if (ctx->seq >= ctx->end)
				return 0;
			mutex_lock(&kpm_mutex);
			s = xa_load(&kpm_sessions, ctx->session_id);
			if (s && s->cookie != ctx->cookie)
				s = NULL;
			if (s && kpm_session_read(s, &ctx->seq, &ctx->end,
						  kpm_nl_clock_start(ctx->timens),
						  kpm_nl_copy(ctx, false)))
				ctx->flags |= KPM_NL_COPIED;
			mutex_unlock(&kpm_mutex);
			if (!s) {
				/* an skb of its own, so that the extack goes with it */
				if (skb->len)
					return skb->len;
				NL_SET_ERR_MSG(cb->extack,
					       "the session was destroyed during the dump");
				return -ENOENT;
			}
			if (!(ctx->flags & KPM_NL_COPIED))
				return 0;
			if (kpm_nl_before_clock_fixup(kpm_nl_copy(ctx, false),
						      ctx->timens)) {
				ctx->flags &= ~KPM_NL_COPIED;
				ctx->seq++;
				/* up to a ring of them, each a copy */
				cond_resched();
				continue;
			}
			ctx->item = 0;
		}
		err = kpm_nl_sample_fill(skb, ctx->session_id,
					 kpm_nl_copy(ctx, false),
					 kpm_nl_copy(ctx, true), &ctx->item,
					 ctx->timens, genl_info_dump(cb));
		if (err)
			return err;
		ctx->flags &= ~KPM_NL_COPIED;
		/* the sample sent is the next one's base */
		if (ctx->flags & KPM_NL_CHANGED_ONLY)
			ctx->flags = (ctx->flags ^ KPM_NL_CUR_SECOND) |
				     KPM_NL_HAVE_PREV;
		ctx->seq++;
	}
}

/**
 * ksft_perfmon_nl_sample_get_done() - give back what a sample-get dump holds
 * @cb: dump state
 *
 * Its copies go back to the session, if it is still there and has no
 * readers' buffer; else they are freed.
 *
 * Context: process. Takes kpm_mutex.
 *
 * Return: 0.
 */
int ksft_perfmon_nl_sample_get_done(struct netlink_callback *cb)
{
	struct kpm_nl_sample_ctx *ctx = (void *)cb->ctx;

	kpm_session_reader_give(ctx->session_id, ctx->cookie, ctx->copies);
	return 0;
}
