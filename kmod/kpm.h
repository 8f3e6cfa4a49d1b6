/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksft_perfmon: in-kernel performance monitor for network selftests.
 *
 * A session samples kcpustat of every possible CPU and the stats64 of up to
 * KSFT_PERFMON_DEVS_MAX netdevs into a ring of samples. An hrtimer sets the
 * beat and reads the CPUs where it fires; the netdevs are read in process
 * context, as ndo_get_stats64 requires, in a work item it queues on the
 * module's unbound workqueue at their own interval.
 */
#ifndef _KSFT_PERFMON_KPM_H
#define _KSFT_PERFMON_KPM_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/netdev_queues.h>
#include <uapi/linux/ksft_perfmon.h>

#include "extend.h"

/*
 * Limits: those of one owner (a netlink socket, or the module for the
 * load-time session) are below those of all sessions together, so that
 * an owner at its limits leaves room for others. The read budget, the
 * third limit of all sessions together, is the module parameter
 * read_budget.
 */
#define KPM_OWNER_SESSIONS_MAX	16
#define KPM_SESSIONS_MAX	256
/*
 * memory of one session (its ring, its scratch sample and its readers'
 * buffer), of one owner, of all sessions together
 */
#define KPM_SESSION_MEM_MAX	((size_t)16 << 20)
#define KPM_OWNER_MEM_MAX	((size_t)16 << 20)
#define KPM_TOTAL_MEM_MAX	((size_t)64 << 20)
/*
 * samples a session holds besides its ring: its scratch, its readers' two,
 * and with netdevs the one its work reads them into (struct kpm_session's
 * @devs_work)
 */
#define KPM_SESSION_BUFFERS(ndevs)	((ndevs) ? 4 : 3)

/*
 * The longest the sampler holds the lock of a netdev's queue statistics
 * before it lets go (and takes it again, if free, to go on), besides the
 * one call into the driver that ends the hold.
 */
#define KPM_HOLD_NS		(50 * NSEC_PER_USEC)

/* Order of the times in struct kpm_cpu_sample, as in /proc/stat. */
enum kpm_cpu_time {
	KPM_CPU_USER,
	KPM_CPU_NICE,
	KPM_CPU_SYSTEM,
	KPM_CPU_IDLE,
	KPM_CPU_IOWAIT,
	KPM_CPU_IRQ,
	KPM_CPU_SOFTIRQ,
	KPM_CPU_STEAL,
	KPM_CPU_GUEST,
	KPM_CPU_GUEST_NICE,
	KPM_CPU_NR_TIMES,
};

struct kpm_cpu_sample {
	u64 time[KPM_CPU_NR_TIMES];	/* ns, enum kpm_cpu_time order */
	bool online;
};

/*
 * Counts of a CPU's network processing, in the order of their attributes:
 * softnet_data's, as /proc/net/softnet_stat shows them, then the NET_RX
 * and NET_TX softirqs, as /proc/softirqs does.
 */
enum kpm_cpu_net_count {
	KPM_NET_PROCESSED,
	KPM_NET_DROPPED,
	KPM_NET_TIME_SQUEEZE,
	KPM_NET_RECEIVED_RPS,
	KPM_NET_RX_SOFTIRQ,
	KPM_NET_TX_SOFTIRQ,
	KPM_NET_NR_COUNTS,
};

/* The kernel's 32-bit counts, extended to 64 bits by kpm_extend32(). */
struct kpm_cpu_net {
	u64 count[KPM_NET_NR_COUNTS];
};

struct kpm_dev_sample {
	struct rtnl_link_stats64 stats;
	u64 time_ns;	/* CLOCK_MONOTONIC when the read of @stats began */
	u32 ifindex;
	bool gone;
};

/*
 * A netdev's queue statistics in a sample of a session with queues, as
 * netdev_stat_ops gives them (a counter the driver does not report is
 * all ones, as qstats-get leaves it): its base statistics, then those of
 * its first nqueues RX queues, then of its first nqueues TX queues;
 * kpm_qstats_rx() and kpm_qstats_tx() find them. They hold a read's
 * values with @read, and of a queue below the netdev's number of queues
 * only. A read skipped for its lock, or for the read budget, leaves them
 * as they were, @time_ns with them; one cut short between two holds of
 * the lock leaves none (@read false).
 */
struct kpm_dev_qstats {
	u64 time_ns;		/* CLOCK_MONOTONIC when their read began */
	bool read;		/* they hold the last read's values */
	bool skipped;		/* this sample's read was skipped: a lock */
	bool over_budget;	/* skipped: no room for its queues' calls */
	bool mapped;		/* the links hold the last read's */
	bool map_skipped;	/* this sample's read of them was skipped */
	u32 map_version;	/* of the links, 1 at the first read */
	u32 rx_queues;		/* real_num_rx_queues at the last read */
	u32 tx_queues;
	struct netdev_queue_stats_rx base_rx;
	struct netdev_queue_stats_tx base_tx;
};

/*
 * Where a queue's packets are handled, as netdev-genl shows it: the NAPI
 * instance the driver linked the queue to (queue-get's napi-id), that
 * instance's IRQ (napi-get's irq) and the one CPU the IRQ is delivered to
 * (its effective affinity, /proc/irq/N/effective_affinity). A netdev's
 * links follow its queue statistics in a sample: of its first nqueues RX
 * queues, then of its first nqueues TX queues; kpm_qstats_link() finds
 * them. A queue the netdev does not have, or with no NAPI instance, has
 * KPM_NO_LINK. Their version, map_version, goes up by one at each read
 * that finds any of them changed.
 */
struct kpm_queue_link {
	u32 napi_id;	/* 0: none */
	s32 irq;	/* -1: none */
	s32 cpu;	/* -1: none, or more than one */
};

#define KPM_NO_LINK ((struct kpm_queue_link){ .irq = -1, .cpu = -1 })

/*
 * One sample. It is followed by one struct kpm_dev_sample per netdev
 * (@ndevs), then one struct kpm_cpu_sample per possible CPU id
 * (nr_cpu_ids), then, with KPM_SAMPLE_CPU_NET, one struct kpm_cpu_net per
 * possible CPU id, then, with @nqueues, the queue statistics of each
 * netdev; kpm_sample_dev(), kpm_sample_cpu(), kpm_sample_cpu_net() and
 * kpm_sample_qstats() find them. A sample needs nothing of its session
 * to be read, so that a copy of it can be formatted with no lock held.
 */
struct kpm_sample {
	u64 seq;
	u64 time_ns;	/* CLOCK_MONOTONIC right before the CPUs were read */
	u64 cost_ns;	/* from then to the end of the CPUs' read */
	u64 delay_ns;	/* from the timer's expiry to time_ns */
	u64 dev_read;	/* the read of the netdevs it holds, from 1; or 0 */
	u32 ndevs;
	u32 flags;	/* KPM_SAMPLE_* */
	u32 nqueues;	/* queues of each direction of a netdev, or 0 */
};

/* the session samples its CPUs' network processing (cpu-net) */
#define KPM_SAMPLE_CPU_NET	BIT(0)

/*
 * A session's readers' buffer: room for two of its samples, which a
 * sample-get dump copies out of the ring and formats from, with no lock
 * held.
 */
struct kpm_reader {
	u32 sample_size;
	struct kpm_sample smp[];	/* two, of sample_size bytes each */
};

struct kpm_dev {
	/* what the sampler reads; NULL once the netdev is gone */
	struct net_device __rcu *dev;
	/* the reference the session holds, under kpm_mutex */
	struct net_device *held;
	netdevice_tracker tracker;
	u32 ifindex;
	/*
	 * with queues, the calls into its driver for its queue statistics
	 * the session is charged for each sample: its base and every queue
	 * it had at its last read (1 + real_num_rx + real_num_tx); written
	 * under kpm_budget_lock, read without it by the work, under the
	 * lock of the queue statistics, which keeps the notifier's write
	 * out (kpm_session_charge_queues())
	 */
	u32 charged;
};

/* The sampler's holds of the locks of queue statistics: how many, how long */
struct kpm_hold_stats {
	u64 holds;
	u64 calls;	/* into drivers, for queue statistics */
	u64 total_ns;
	u64 max_ns;
};

/**
 * struct kpm_session - one sampling session
 * @id: identifier, key in kpm_sessions
 * @cookie: unique for the module's lifetime, unlike @id, which an
 *	allocation may reuse once the session is gone
 * @owner: the netlink socket that owns the session, with a reference
 *	held, so that no other socket can be at its address while the
 *	session exists; NULL for the session started at insmod
 * @portid: netlink port of @owner, 0 for the session started at insmod
 * @items: reads of one read of its netdevs the session is charged for:
 *	each netdev and, with queues, each netdev's @charged; under
 *	kpm_budget_lock
 * @reads: reads per second the session takes of the module's read
 *	budget, @cpu_reads and @items once per dev interval; under
 *	kpm_budget_lock
 * @mem: bytes of the memory limits the session takes: its ring and
 *	KPM_SESSION_BUFFERS() samples
 * @reader: the readers' buffer, which one sample-get dump at a time
 *	borrows; NULL while one has it. Under kpm_mutex
 * @timer: the beat, a CLOCK_MONOTONIC soft hrtimer that samples the CPUs,
 *	or every @dev_every periods queues @work
 * @busy: bit 0 set from when the timer queues @work until it has run: at
 *	most one read of the netdevs is in flight
 * @stopping: set by kpm_session_destroy() before it waits for @work,
 *	which then cuts a read of queue statistics short at its next hold
 * @started: with netdevs, set by @work once the first sample is in: the
 *	timer takes none before
 * @period: timer periods since the first sample, which only the timer
 *	writes
 * @expires_ns: the expiry of the timer period @work samples; written by
 *	the timer when it sets @busy (or kpm_sample_first(), before the
 *	timer starts), read by @work before it clears it
 * @timer_cpu: the CPU the timer queued @work on, as @expires_ns
 * @missed: timer periods that took no sample, counted by the timer;
 *	atomic, outside @lock: not a snapshot with the counters under it
 * @dev_missed: reads of the netdevs due and not taken, as @missed
 * @work: reads the netdevs in process context, then takes a sample
 * @devs_work: the sample @work reads the netdevs into; it keeps the last
 *	read's queue statistics and map for the next. NULL without netdevs
 * @interval_ns: sampling period
 * @dev_interval_ns: period of the reads of the netdevs, @dev_every times
 *	@interval_ns
 * @dev_every: timer periods a read of the netdevs
 * @cpu_reads: reads per second its CPUs take of the read budget
 * @ring_size: number of slots in @ring
 * @sample_size: bytes of one slot
 * @sample_flags: what its samples hold besides CPU times and netdevs,
 *	KPM_SAMPLE_*
 * @nqueues: queues of each direction of a netdev its samples hold, or 0
 * @lock: protects @ring, @scratch and the counters below it; taken by
 *	the timer in softirq (on PREEMPT_RT, in its thread), so with BH off
 *	everywhere
 * @scratch: the sample the timer or @work reads the CPUs into, with the
 *	netdevs of their latest read, before it goes into the ring
 * @head: sequence number of the next sample, i.e. samples taken
 * @head_slot: slot the next sample goes to
 * @lost: samples readers asked for and found overwritten, each time a
 *	reader did, but those taken before its clock began
 *	(kpm_session_read())
 * @overwritten_ns: the time of the newest sample overwritten, 0 before
 *	one was
 * @cost_ns: time the sampler spent on this session
 * @qstats_skipped: reads of queue statistics skipped, their lock held or
 *	no room in the read budget for their queues
 * @on_timer_cpu: samples of @work that ran on the CPU its timer fired on
 * @hold: the sampler's holds of the locks of queue statistics
 * @ring: @ring_size slots of @sample_size bytes
 * @ndevs: number of entries in @devs
 * @devs: the netdevs sampled
 *
 * Sessions are created, found and destroyed under kpm_mutex.
 */
struct kpm_session {
	u32 id;
	u64 cookie;
	struct sock *owner;
	u32 portid;
	u64 items;
	u64 reads;
	size_t mem;
	struct kpm_reader *reader;
	struct hrtimer timer;
	unsigned long busy;
	bool stopping;
	bool started;
	u64 period;
	u64 expires_ns;
	int timer_cpu;
	atomic64_t missed;
	atomic64_t dev_missed;
	struct work_struct work;
	struct kpm_sample *devs_work;
	u64 interval_ns;
	u64 dev_interval_ns;
	u32 dev_every;
	u64 cpu_reads;
	u32 ring_size;
	u32 sample_size;
	u32 sample_flags;
	u32 nqueues;

	spinlock_t lock;	/* the ring and its counters vs the sampler */
	u64 head;
	u32 head_slot;
	u64 lost;
	u64 overwritten_ns;
	struct kpm_sample *scratch;
	u64 cost_ns;
	u64 qstats_skipped;
	u64 on_timer_cpu;
	struct kpm_hold_stats hold;
	void *ring;

	u32 ndevs;
	struct kpm_dev devs[] __counted_by(ndevs);
};

struct kpm_session_cfg {
	u64 interval_ns;
	u64 dev_interval_ns;	/* 0: interval_ns */
	u32 ring_size;
	u32 ndevs;
	u32 flags;	/* of its samples, KPM_SAMPLE_* */
	u32 nqueues;
	u32 ifindex[KSFT_PERFMON_DEVS_MAX];
	/* the request's attribute of each ifindex, for extack; may be NULL */
	const struct nlattr *ifindex_attr[KSFT_PERFMON_DEVS_MAX];
	const struct nlattr *interval_attr;
	const struct nlattr *dev_interval_attr;
	const struct nlattr *ring_size_attr;
};

/* A session's counters at one moment, as session-get and debugfs show them */
struct kpm_counts {
	u64 samples;
	u64 lost;
	u64 missed;
	u64 dev_missed;
	u64 cost_ns;
	u64 qstats_skipped;
	u64 on_timer_cpu;
	struct kpm_hold_stats hold;
};

extern struct mutex kpm_mutex;
extern struct xarray kpm_sessions;
extern struct workqueue_struct *kpm_wq;

/* session.c */
int kpm_session_new(struct net *net, const struct kpm_session_cfg *cfg,
		    struct sock *owner, u32 portid, u32 *id, u64 *cookie,
		    struct netlink_ext_ack *extack);
void kpm_session_destroy(struct kpm_session *s);
void kpm_session_destroy_cookie(u32 id, u64 cookie);
void kpm_session_destroy_all(void);
void kpm_session_destroy_released(void);
bool kpm_session_read(struct kpm_session *s, u64 *seq, u64 *end,
		      u64 since_ns, struct kpm_sample *buf);
bool kpm_session_latest(struct kpm_session *s, struct kpm_sample *buf);
void kpm_session_counters(struct kpm_session *s, struct kpm_counts *c);
bool kpm_session_charge_queues(struct kpm_session *s, u32 i, u32 calls);
struct kpm_reader *kpm_session_reader_take(struct kpm_session *s);
void kpm_session_reader_give(u32 id, u64 cookie, struct kpm_reader *buf);
int kpm_session_init(void);
void kpm_session_exit(void);

/* sampler.c */
enum hrtimer_restart kpm_timer_fn(struct hrtimer *timer);
void kpm_sample_work(struct work_struct *work);
void kpm_sample_first(struct kpm_session *s, u64 now_ns);
void kpm_sample_cpus(struct kpm_sample *smp);

static inline struct kpm_dev_sample *
kpm_sample_dev(const struct kpm_sample *smp, u32 i)
{
	return (struct kpm_dev_sample *)(smp + 1) + i;
}

static inline struct kpm_cpu_sample *
kpm_sample_cpu(const struct kpm_sample *smp, unsigned int cpu)
{
	return (struct kpm_cpu_sample *)kpm_sample_dev(smp, smp->ndevs) + cpu;
}

/* NULL without KPM_SAMPLE_CPU_NET */
static inline struct kpm_cpu_net *
kpm_sample_cpu_net(const struct kpm_sample *smp, unsigned int cpu)
{
	if (!(smp->flags & KPM_SAMPLE_CPU_NET))
		return NULL;
	return (struct kpm_cpu_net *)kpm_sample_cpu(smp, nr_cpu_ids) + cpu;
}

/*
 * bytes of one netdev's queue statistics and links with @nqueues of each
 * direction
 */
static inline u32 kpm_qstats_size(u32 nqueues)
{
	return sizeof(struct kpm_dev_qstats) +
	       nqueues * (sizeof(struct netdev_queue_stats_rx) +
			  sizeof(struct netdev_queue_stats_tx) +
			  2 * sizeof(struct kpm_queue_link));
}

/* netdev @i's queue statistics; NULL without nqueues */
static inline struct kpm_dev_qstats *
kpm_sample_qstats(const struct kpm_sample *smp, u32 i)
{
	void *end = kpm_sample_cpu(smp, nr_cpu_ids);

	if (!smp->nqueues)
		return NULL;
	if (smp->flags & KPM_SAMPLE_CPU_NET)
		end += nr_cpu_ids * sizeof(struct kpm_cpu_net);
	return end + i * kpm_qstats_size(smp->nqueues);
}

static inline struct netdev_queue_stats_rx *
kpm_qstats_rx(const struct kpm_dev_qstats *qs, u32 q)
{
	return (struct netdev_queue_stats_rx *)(qs + 1) + q;
}

static inline struct netdev_queue_stats_tx *
kpm_qstats_tx(const struct kpm_dev_qstats *qs, u32 nqueues, u32 q)
{
	return (struct netdev_queue_stats_tx *)kpm_qstats_rx(qs, nqueues) + q;
}

/* the link of RX (@rx) or TX queue @q */
static inline struct kpm_queue_link *
kpm_qstats_link(const struct kpm_dev_qstats *qs, u32 nqueues, bool rx, u32 q)
{
	struct kpm_queue_link *links = (void *)kpm_qstats_tx(qs, nqueues,
							     nqueues);

	return links + (rx ? 0 : nqueues) + q;
}

static inline u32 kpm_sample_size(u32 ndevs, u32 flags, u32 nqueues)
{
	u32 cpu = sizeof(struct kpm_cpu_sample);

	if (flags & KPM_SAMPLE_CPU_NET)
		cpu += sizeof(struct kpm_cpu_net);
	return sizeof(struct kpm_sample) +
	       ndevs * sizeof(struct kpm_dev_sample) + nr_cpu_ids * cpu +
	       (nqueues ? ndevs * kpm_qstats_size(nqueues) : 0);
}

/* netlink.c */
int kpm_nl_init(void);
void kpm_nl_exit(void);
struct kpm_session *
kpm_nl_session_find(const struct sk_buff *skb, const struct nlattr *attr,
		    struct netlink_ext_ack *extack);

/* debugfs.c */
void kpm_debugfs_init(void);
void kpm_debugfs_exit(void);

#endif /* _KSFT_PERFMON_KPM_H */
