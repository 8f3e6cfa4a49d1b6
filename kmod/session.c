// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: creation with its limits, the netdev references they hold,
 * their ring and its readers, and destruction.
 */

#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "compat.h"
#include "kpm.h"

/* Serializes creation, lookup and destruction of sessions. */
DEFINE_MUTEX(kpm_mutex);
DEFINE_XARRAY_ALLOC1(kpm_sessions);

/*
 * Where the sessions' work runs: unbound, so that a sample runs wherever
 * there is room among the CPUs of the workqueue's cpumask (the
 * housekeeping CPUs, and what an admin sets in
 * /sys/devices/virtual/workqueue/ksft_perfmon/), not on the CPU its timer
 * fires on, which may be the one the test loads; high priority, for the
 * wake-up latency of a nice -20 worker.
 */
struct workqueue_struct *kpm_wq;

static u32 kpm_next_id;
static u64 kpm_next_cookie;		/* under kpm_mutex */

static unsigned int read_budget = 1000000;
module_param(read_budget, uint, 0644);
MODULE_PARM_DESC(read_budget,
		 "reads per second all sessions together may take, a read being one CPU, its cpu-net counts, one netdev, its queue statistics or one of its queues, of one sample (default 1000000)");

/* What all sessions together take of the limits; under kpm_mutex. */
static unsigned int kpm_nr_sessions;
static size_t kpm_mem;
/*
 * The reads per second they take, and each session's @items, @reads and
 * netdevs' @charged, under kpm_budget_lock, taken alone or under
 * kpm_mutex: the sampler changes them where a netdev's queues changed,
 * and the netdev notifier where a netdev went.
 */
static DEFINE_SPINLOCK(kpm_budget_lock);
static u64 kpm_reads;

/* @items reads a sample, once per @interval_ns, in reads per second */
static u64 kpm_reads_per_s(u64 items, u64 interval_ns)
{
	return DIV64_U64_ROUND_UP(items * NSEC_PER_SEC, interval_ns);
}

/*
 * The calls into @dev's driver that reading its queue statistics takes:
 * its base statistics and each queue, those beyond the session's queues
 * too, which the sampler adds to the base; none without queue statistics.
 */
static u32 kpm_queue_calls(const struct net_device *dev)
{
	if (!dev->stat_ops)
		return 0;
	/* racy: their lock's, for a charge the sampler puts right at a read */
	return data_race(1 + READ_ONCE(dev->real_num_rx_queues) +
			 READ_ONCE(dev->real_num_tx_queues));
}

/*
 * The reads per second of the CPUs of @cfg, each once per interval; with
 * cpu-net, each CPU's network counts as a read of its own.
 */
static u64 kpm_session_cpu_reads(const struct kpm_session_cfg *cfg)
{
	u64 items = num_possible_cpus();

	if (cfg->flags & KPM_SAMPLE_CPU_NET)
		items += num_possible_cpus();
	return kpm_reads_per_s(items, cfg->interval_ns);
}

/* the reads per second of @s: its CPUs', and its @items once a dev_interval */
static u64 kpm_session_reads(const struct kpm_session *s, u64 items)
{
	return s->cpu_reads + kpm_reads_per_s(items, s->dev_interval_ns);
}

/*
 * The reads per second of @cfg with the queues its netdevs have now, for
 * a check before the netdevs are held: one not found (yet) counts none,
 * and the check once they are held has the last word. Each netdev is a
 * read, and with queues kpm_queue_calls() of it come on top, once a
 * dev_interval.
 */
static u64 kpm_session_reads_now(struct net *net,
				 const struct kpm_session_cfg *cfg)
{
	u64 items = cfg->ndevs;
	struct net_device *dev;
	u32 i;

	if (cfg->nqueues) {
		rcu_read_lock();
		for (i = 0; i < cfg->ndevs; i++) {
			dev = dev_get_by_index_rcu(net, cfg->ifindex[i]);
			if (dev)
				items += kpm_queue_calls(dev);
		}
		rcu_read_unlock();
	}
	return kpm_session_cpu_reads(cfg) +
	       kpm_reads_per_s(items, cfg->dev_interval_ns);
}

/**
 * kpm_budget_check() - check that a new session fits every limit
 * @owner: the socket that would own it, NULL for the load-time session
 * @mem: its ring and buffers
 * @reads: its reads per second
 * @cfg: the request, for the attributes extack points at
 * @extack: where to say which limit, and its value
 * @take: on success, take what it needs of the module's limits, in the
 *	same section of kpm_budget_lock as the check of the reads
 *
 * The limits of one owner come first, so that an owner at its limits is
 * told so rather than of a module-wide limit it nearly filled alone.
 *
 * Context: under kpm_mutex; takes kpm_budget_lock.
 * Return: 0, or -ENOSPC with extack set.
 */
static int kpm_budget_check(const struct sock *owner, size_t mem, u64 reads,
			    const struct kpm_session_cfg *cfg,
			    struct netlink_ext_ack *extack, bool take)
{
	u64 budget = READ_ONCE(read_budget), left;
	unsigned int owned = 0;
	size_t owned_mem = 0;
	struct kpm_session *s;
	unsigned long id;

	lockdep_assert_held(&kpm_mutex);

	xa_for_each(&kpm_sessions, id, s) {
		if (s->owner != owner)
			continue;
		owned++;
		owned_mem += s->mem;
	}
	if (owned >= KPM_OWNER_SESSIONS_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "a socket may own %u sessions, and this one does",
				   KPM_OWNER_SESSIONS_MAX);
		return -ENOSPC;
	}
	if (owned_mem + mem > KPM_OWNER_MEM_MAX) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->ring_size_attr,
					"session of %zu bytes is over the %zu left of a socket's %zu",
					mem, KPM_OWNER_MEM_MAX - owned_mem,
					KPM_OWNER_MEM_MAX);
		return -ENOSPC;
	}
	if (kpm_nr_sessions >= KPM_SESSIONS_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "the module may have %u sessions, and does",
				   KPM_SESSIONS_MAX);
		return -ENOSPC;
	}
	if (kpm_mem + mem > KPM_TOTAL_MEM_MAX) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->ring_size_attr,
					"session of %zu bytes is over the %zu left of the module's %zu",
					mem, KPM_TOTAL_MEM_MAX - kpm_mem,
					KPM_TOTAL_MEM_MAX);
		return -ENOSPC;
	}
	spin_lock(&kpm_budget_lock);
	left = budget > kpm_reads ? budget - kpm_reads : 0;
	if (reads <= left && take)
		kpm_reads += reads;
	spin_unlock(&kpm_budget_lock);
	if (reads > left) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->interval_attr,
					"%llu reads/s is over the %llu left of read_budget=%llu",
					reads, left, budget);
		return -ENOSPC;
	}
	if (take) {
		kpm_nr_sessions++;
		kpm_mem += mem;
	}
	return 0;
}

/* Give back what kpm_budget_check() took. Context: under kpm_mutex. */
static void kpm_budget_put(size_t mem, u64 reads)
{
	lockdep_assert_held(&kpm_mutex);
	kpm_nr_sessions--;
	kpm_mem -= mem;
	spin_lock(&kpm_budget_lock);
	kpm_reads -= reads;
	spin_unlock(&kpm_budget_lock);
}

/**
 * kpm_session_charge_queues() - charge a netdev's queues anew
 * @s: the session
 * @i: its netdev
 * @calls: the calls into the driver that a read of its queue statistics
 *	takes now: its base and every queue
 *
 * The read budget charges a session for every queue of its netdevs,
 * whose count a change of channels changes. The sampler calls this at
 * each read, so that the session is charged what it reads: fewer calls
 * give room back, more take it, if the budget has it.
 *
 * Context: process, the session's work, under the lock of the netdev's
 * queue statistics, which keeps their count; takes kpm_budget_lock.
 * Return: whether the read may go on; false leaves the charge as it was.
 */
bool kpm_session_charge_queues(struct kpm_session *s, u32 i, u32 calls)
{
	struct kpm_dev *d = &s->devs[i];
	u64 items, reads, others;
	bool ok;

	/* the work changes it, or the netdev notifier once it is gone */
	if (READ_ONCE(d->charged) == calls)
		return true;
	spin_lock(&kpm_budget_lock);
	items = s->items - d->charged + calls;
	reads = kpm_session_reads(s, items);
	others = kpm_reads - s->reads;
	ok = reads <= s->reads || others + reads <= READ_ONCE(read_budget);
	if (ok) {
		kpm_reads = others + reads;
		s->items = items;
		s->reads = reads;
		WRITE_ONCE(d->charged, calls);
	}
	spin_unlock(&kpm_budget_lock);
	return ok;
}

/* The oldest sample in the ring, or head when it is empty; under @s->lock. */
static u64 kpm_session_first_seq(struct kpm_session *s)
{
	lockdep_assert_held(&s->lock);
	return s->head > s->ring_size ? s->head - s->ring_size : 0;
}

/* The slot of sample @seq, from first_seq to below head; under @s->lock. */
static struct kpm_sample *kpm_session_slot(struct kpm_session *s, u64 seq)
{
	u32 back = s->head - seq;	/* 1 .. ring_size */
	u32 slot;

	lockdep_assert_held(&s->lock);
	slot = s->head_slot >= back ? s->head_slot - back :
				      s->head_slot + s->ring_size - back;
	return s->ring + (size_t)slot * s->sample_size;
}

/*
 * Give back what netdev @i of @s is charged for, its stats64 and its
 * queues, once it is gone: the sampler reads neither any more. Under
 * kpm_mutex, in the netdev notifier, after it cleared the session's
 * pointer to it. The work charges a netdev's queues again only when it
 * finds it live (kpm_dev_live()) under the lock of its queue statistics:
 * up, registered and still the session's, which the netdev's close or
 * unregister, before its NETDEV_UNREGISTER, and the cleared pointer end.
 */
static void kpm_session_uncharge_dev(struct kpm_session *s, u32 i)
{
	struct kpm_dev *d = &s->devs[i];
	u64 reads;

	lockdep_assert_held(&kpm_mutex);
	spin_lock(&kpm_budget_lock);
	s->items -= 1 + d->charged;
	reads = kpm_session_reads(s, s->items);
	kpm_reads = kpm_reads - s->reads + reads;
	s->reads = reads;
	WRITE_ONCE(d->charged, 0);
	spin_unlock(&kpm_budget_lock);
}

/**
 * kpm_session_read() - copy a sample out of the ring for a reader
 * @s: session
 * @seq: the sample wanted; moved on to the oldest one in the ring when it
 *	was overwritten
 * @end: the reader wants none from this sequence number on; moved on to
 *	just past the oldest sample in the ring when the ring holds none
 *	below it any more, so that the reader gets that one and goes on
 *	from it, rather than asking again for what it has lost
 * @since_ns: the reader wants none taken before this CLOCK_MONOTONIC time
 *	(its time namespace's clock began then), 0 for all
 * @buf: room for one sample of @s (@s->sample_size bytes)
 *
 * The samples from *@seq to the oldest one in the ring were overwritten
 * before this reader read them: they count in @s->lost, as this reader's
 * loss, whatever other readers read of them: the gap it sees before the
 * sample it gets.
 * Of those taken before @since_ns, which it would not have been sent,
 * none count: none of them when the newest overwritten sample was taken
 * before then, and when it was after, no more than the timer periods
 * from @since_ns to it, at most one sample a period (an estimate, as
 * their times are gone). A reader that reads every sample it asks for
 * adds nothing.
 *
 * Context: process; takes @s->lock (BH off), for the copy only.
 * Return: true with sample *@seq in @buf; false when the ring has none
 * from *@seq to below *@end.
 */
bool kpm_session_read(struct kpm_session *s, u64 *seq, u64 *end,
		      u64 since_ns, struct kpm_sample *buf)
{
	u64 first;
	bool found;

	spin_lock_bh(&s->lock);
	first = kpm_session_first_seq(s);
	if (*seq < first && *seq < *end) {
		u64 gap = first - *seq;

		if (s->overwritten_ns < since_ns)
			gap = 0;
		else if (since_ns)
			gap = min(gap, div64_u64(s->overwritten_ns - since_ns,
						 s->interval_ns) + 1);
		s->lost += gap;
		*seq = first;
		*end = max(*end, first + 1);
	}
	found = *seq < min(*end, s->head);
	if (found)
		memcpy(buf, kpm_session_slot(s, *seq), s->sample_size);
	spin_unlock_bh(&s->lock);
	return found;
}

/**
 * kpm_session_reader_take() - borrow the session's readers' buffer
 * @s: the session
 *
 * A sample-get dump copies samples into room for two (the one it sends,
 * and the one sent before it), which the session keeps from one dump to
 * the next, counted in its memory, so that a reader that dumps every few
 * milliseconds allocates nothing.
 *
 * Context: under kpm_mutex.
 * Return: the buffer; NULL while another dump has it.
 */
struct kpm_reader *kpm_session_reader_take(struct kpm_session *s)
{
	struct kpm_reader *buf = s->reader;

	lockdep_assert_held(&kpm_mutex);
	s->reader = NULL;
	return buf;
}

/**
 * kpm_session_reader_give() - give a dump's buffer back to its session
 * @id: the session's id
 * @cookie: the session's cookie: its id may be another's by now
 * @buf: the buffer, of the session's samples
 *
 * The session keeps it, if it is still there and has none; else it is
 * freed.
 *
 * Context: process. Takes kpm_mutex.
 */
void kpm_session_reader_give(u32 id, u64 cookie, struct kpm_reader *buf)
{
	struct kpm_session *s;

	mutex_lock(&kpm_mutex);
	s = xa_load(&kpm_sessions, id);
	if (s && s->cookie == cookie && !s->reader) {
		s->reader = buf;
		buf = NULL;
	}
	mutex_unlock(&kpm_mutex);
	kvfree(buf);
}

/**
 * kpm_session_latest() - copy the newest sample out of the ring
 * @s: session
 * @buf: room for one sample of @s (@s->sample_size bytes)
 *
 * For a look at the session: the sample does not count as read.
 *
 * Context: process; takes @s->lock (BH off), for the copy only.
 * Return: true with the sample in @buf; false before the first sample.
 */
bool kpm_session_latest(struct kpm_session *s, struct kpm_sample *buf)
{
	bool found;

	spin_lock_bh(&s->lock);
	found = s->head;
	if (found)
		memcpy(buf, kpm_session_slot(s, s->head - 1), s->sample_size);
	spin_unlock_bh(&s->lock);
	return found;
}

/**
 * kpm_session_counters() - read a session's counters
 * @s: the session
 * @c: where to put them
 *
 * @missed and @dev_missed are counted outside @s->lock, by the timer, and
 * read after the others: they are not a snapshot with them.
 *
 * Context: process; takes @s->lock (BH off).
 */
void kpm_session_counters(struct kpm_session *s, struct kpm_counts *c)
{
	spin_lock_bh(&s->lock);
	c->samples = s->head;
	c->lost = s->lost;
	c->cost_ns = s->cost_ns;
	c->qstats_skipped = s->qstats_skipped;
	c->on_timer_cpu = s->on_timer_cpu;
	c->hold = s->hold;
	spin_unlock_bh(&s->lock);
	c->missed = atomic64_read(&s->missed);
	c->dev_missed = atomic64_read(&s->dev_missed);
}

static void kpm_session_put_devs(struct kpm_session *s)
{
	u32 i;

	lockdep_assert_held(&kpm_mutex);
	for (i = 0; i < s->ndevs; i++) {
		if (!s->devs[i].held)
			continue;
		RCU_INIT_POINTER(s->devs[i].dev, NULL);
		netdev_put(s->devs[i].held, &s->devs[i].tracker);
		s->devs[i].held = NULL;
	}
}

/*
 * Hold each netdev of @cfg, and charge @s for the queue statistics it
 * will read of them: @s->items, the reads of one sample, with them.
 */
static int kpm_session_get_devs(struct kpm_session *s, struct net *net,
				const struct kpm_session_cfg *cfg,
				struct netlink_ext_ack *extack)
{
	u32 i;

	/* the netdev notifier cannot drop a netdev we hold meanwhile */
	lockdep_assert_held(&kpm_mutex);
	s->items = cfg->ndevs;
	for (i = 0; i < cfg->ndevs; i++) {
		struct kpm_dev *d = &s->devs[i];

		d->ifindex = cfg->ifindex[i];
		d->held = netdev_get_by_index(net, d->ifindex, &d->tracker,
					      GFP_KERNEL);
		if (!d->held) {
			NL_SET_ERR_MSG_ATTR(extack, cfg->ifindex_attr[i],
					    "no netdev with this ifindex in the network namespace");
			return -ENODEV;
		}
		if (cfg->nqueues) {
			d->charged = kpm_queue_calls(d->held);
			s->items += d->charged;
		}
		rcu_assign_pointer(d->dev, d->held);
	}
	s->reads = kpm_session_reads(s, s->items);
	return 0;
}

/* a session's sample of @cfg with no reads yet: what it holds */
static void kpm_sample_init(struct kpm_sample *smp,
			    const struct kpm_session_cfg *cfg)
{
	smp->ndevs = cfg->ndevs;
	smp->flags = cfg->flags;
	smp->nqueues = cfg->nqueues;
}

static void kpm_session_free(struct kpm_session *s)
{
	if (s->owner)
		sock_put(s->owner);
	kvfree(s->ring);
	kvfree(s->scratch);
	kvfree(s->devs_work);
	kvfree(s->reader);
	kfree(s);
}

/**
 * kpm_session_new() - create a session and start sampling
 * @net: network namespace the ifindexes of @cfg are in
 * @cfg: what to sample; validated against the spec's bounds by the caller
 * @owner: the netlink socket that asks, which will own the session; NULL
 *	for none
 * @portid: netlink port of @owner, or 0
 * @id: where to put the new session's id
 * @cookie: where to put its cookie, which kpm_session_destroy_cookie()
 *	takes; may be NULL
 * @extack: where to report errors
 *
 * Context: process. Allocates the ring with no lock held, then takes
 * kpm_mutex. The limits are checked before the allocation, so that a
 * request over one allocates nothing, and again with the session's
 * insertion, since another request may have taken the room meanwhile, or
 * a netdev's queues changed. The netdevs are looked up under kpm_mutex,
 * which kpm_netdev_event() takes too, so a netdev cannot be unregistered
 * between the lookup and the session becoming visible. The session is not
 * returned: once kpm_mutex is dropped, a session-del may free it.
 *
 * Return: 0, or a negative errno with extack set.
 */
int kpm_session_new(struct net *net, const struct kpm_session_cfg *cfg,
		    struct sock *owner, u32 portid, u32 *id, u64 *cookie,
		    struct netlink_ext_ack *extack)
{
	u32 sample_size = kpm_sample_size(cfg->ndevs, cfg->flags,
					  cfg->nqueues);
	/* ids stay positive in a loff_t's high half (debugfs positions) */
	struct xa_limit limit = XA_LIMIT(1, INT_MAX);
	struct kpm_session *s;
	size_t ring_bytes, mem;
	u64 reads, every, rem;
	ktime_t start;
	int err;

	ring_bytes = array_size(sample_size, cfg->ring_size);
	mem = array_size(sample_size,
			 cfg->ring_size + KPM_SESSION_BUFFERS(cfg->ndevs));
	if (mem > KPM_SESSION_MEM_MAX) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->ring_size_attr,
					"session of %zu bytes is over the %zu byte limit of a session",
					mem, KPM_SESSION_MEM_MAX);
		return -EINVAL;
	}
	/* the timer moves on by whole intervals of at least its resolution */
	if (cfg->interval_ns < hrtimer_resolution) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->interval_attr,
					"interval below the timer resolution of %u ns",
					hrtimer_resolution);
		return -EINVAL;
	}
	/*
	 * the timer asks for the netdevs every dev_every of its periods (a
	 * u32: the interval is 100 us at least, dev-interval 60 s at most)
	 */
	every = div64_u64_rem(cfg->dev_interval_ns, cfg->interval_ns, &rem);
	if (!every || rem) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->dev_interval_attr,
					"dev-interval is %s the interval of %llu ns",
					every ? "not a multiple of" : "below",
					cfg->interval_ns);
		return -EINVAL;
	}
	mutex_lock(&kpm_mutex);
	reads = kpm_session_reads_now(net, cfg);
	err = kpm_budget_check(owner, mem, reads, cfg, extack, false);
	mutex_unlock(&kpm_mutex);
	if (err)
		return err;

	s = kzalloc(struct_size(s, devs, cfg->ndevs), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->ndevs = cfg->ndevs;
	s->interval_ns = cfg->interval_ns;
	s->dev_interval_ns = cfg->dev_interval_ns;
	s->dev_every = every;
	s->cpu_reads = kpm_session_cpu_reads(cfg);
	s->ring_size = cfg->ring_size;
	s->sample_size = sample_size;
	s->mem = mem;
	s->scratch = kvzalloc(sample_size, GFP_KERNEL_ACCOUNT);
	s->reader = kvmalloc(struct_size(s->reader, smp, 0) +
			     2 * (size_t)sample_size, GFP_KERNEL_ACCOUNT);
	s->ring = kvzalloc(ring_bytes, GFP_KERNEL_ACCOUNT);
	err = -ENOMEM;
	if (!s->scratch || !s->reader || !s->ring)
		goto err_free;
	if (cfg->ndevs) {
		s->devs_work = kvzalloc(sample_size, GFP_KERNEL_ACCOUNT);
		if (!s->devs_work)
			goto err_free;
		kpm_sample_init(s->devs_work, cfg);
	}
	s->reader->sample_size = sample_size;
	kpm_sample_init(s->scratch, cfg);
	s->sample_flags = cfg->flags;
	s->nqueues = cfg->nqueues;
	spin_lock_init(&s->lock);
	INIT_WORK(&s->work, kpm_sample_work);
	kpm_hrtimer_setup(&s->timer, kpm_timer_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL_SOFT);

	mutex_lock(&kpm_mutex);
	err = kpm_session_get_devs(s, net, cfg, extack);
	if (err)
		goto err_put_devs;
	err = kpm_budget_check(owner, mem, s->reads, cfg, extack, true);
	if (err)
		goto err_put_devs;

	err = xa_alloc_cyclic(&kpm_sessions, &s->id, s, limit, &kpm_next_id,
			      GFP_KERNEL);
	if (err < 0)
		goto err_put_budget;

	s->cookie = ++kpm_next_cookie;
	if (owner) {
		sock_hold(owner);
		s->owner = owner;
	}
	s->portid = portid;
	*id = s->id;
	if (cookie)
		*cookie = s->cookie;
	/*
	 * the first sample, at once, is the baseline of the session, and
	 * its period's expiry, now, the timer's grid
	 */
	start = ktime_get();
	kpm_sample_first(s, ktime_to_ns(start));
	hrtimer_start(&s->timer, ktime_add_ns(start, s->interval_ns),
		      HRTIMER_MODE_ABS_SOFT);
	mutex_unlock(&kpm_mutex);
	return 0;

err_put_budget:
	kpm_budget_put(mem, s->reads);
err_put_devs:
	kpm_session_put_devs(s);
	mutex_unlock(&kpm_mutex);
err_free:
	kpm_session_free(s);
	return err;
}

/**
 * kpm_session_destroy() - stop a session and free it
 * @s: session
 *
 * Waits for a sample in flight: the timer is cancelled first, since it
 * queues the work, then the work. A sample-get dump that has the readers'
 * buffer keeps it, and frees it when it ends.
 *
 * Context: process, under kpm_mutex (which the work never takes).
 */
void kpm_session_destroy(struct kpm_session *s)
{
	lockdep_assert_held(&kpm_mutex);

	xa_erase(&kpm_sessions, s->id);
	/* a read of many holds in flight ends at its next one */
	WRITE_ONCE(s->stopping, true);
	hrtimer_cancel(&s->timer);
	cancel_work_sync(&s->work);
	kpm_session_put_devs(s);
	kpm_budget_put(s->mem, s->reads);
	kpm_session_free(s);
}

/**
 * kpm_session_destroy_cookie() - destroy a session, if it is still the one
 * @id: its id
 * @cookie: its cookie, as kpm_session_new() gave it
 *
 * For a request that created a session and could not say so: the session
 * may have been destroyed meanwhile, and its id taken by another.
 *
 * Context: process. Takes kpm_mutex.
 */
void kpm_session_destroy_cookie(u32 id, u64 cookie)
{
	struct kpm_session *s;

	mutex_lock(&kpm_mutex);
	s = xa_load(&kpm_sessions, id);
	if (s && s->cookie == cookie)
		kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);
}

/**
 * kpm_session_destroy_all() - destroy every session
 *
 * Context: process, takes kpm_mutex.
 */
void kpm_session_destroy_all(void)
{
	struct kpm_session *s;
	unsigned long id;

	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s)
		kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);
}

/**
 * kpm_session_destroy_released() - destroy the sessions of released sockets
 *
 * For NETLINK_URELEASE, which comes after the socket left the netlink
 * table: another socket may have bound its port meanwhile, so a session
 * goes by its owner's state, never by the port. sock_orphan() marked the
 * released socket dead before the event; the reference a session holds
 * keeps it from being freed, and so its address from being reused.
 * genetlink's per-socket private data (genl_sk_priv_get(), 6.10), which
 * would do the same, is not exported to modules in 6.12 or 7.3.
 *
 * Context: process, takes kpm_mutex.
 */
void kpm_session_destroy_released(void)
{
	struct kpm_session *s;
	unsigned long id;

	/*
	 * Every generic netlink socket of the host that closes comes here:
	 * with no session, which a released socket's would still be, there
	 * is nothing to take kpm_mutex for.
	 */
	if (xa_empty(&kpm_sessions))
		return;
	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s)
		if (s->owner && sock_flag(s->owner, SOCK_DEAD))
			kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);
}

/**
 * kpm_netdev_event() - drop the references to a netdev that goes away
 * @nb: notifier block
 * @event: netdev event
 * @ptr: netdev notifier info
 *
 * NETDEV_UNREGISTER comes both when a netdev is unregistered and when it
 * leaves its network namespace; either way the ifindex no longer means it,
 * so the sessions that sample it go on without it and report it as gone.
 * The sampler reads the netdev's stats under RCU: its pointer is cleared,
 * synchronize_net() waits for a sample in flight, and only then is the
 * reference dropped, and what the session was charged for its queues
 * given back to the read budget.
 *
 * Context: process, under RTNL. From 6.15 on, the kernel calls netdev
 * notifiers under the netdev's instance lock for some events, but not
 * NETDEV_UNREGISTER, and this one returns at once for the others. Takes
 * kpm_mutex.
 *
 * Return: NOTIFY_DONE.
 */
static int kpm_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct kpm_session *s;
	bool sampled = false;
	unsigned long id;
	u32 i;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	/* the sampler's kpm_dev_live() relies on it */
	ASSERT_RTNL();
	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s) {
		for (i = 0; i < s->ndevs; i++) {
			if (s->devs[i].held != dev)
				continue;
			RCU_INIT_POINTER(s->devs[i].dev, NULL);
			sampled = true;
		}
	}
	if (sampled) {
		synchronize_net();
		xa_for_each(&kpm_sessions, id, s) {
			for (i = 0; i < s->ndevs; i++) {
				if (s->devs[i].held != dev)
					continue;
				netdev_put(dev, &s->devs[i].tracker);
				s->devs[i].held = NULL;
				kpm_session_uncharge_dev(s, i);
			}
		}
	}
	mutex_unlock(&kpm_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kpm_netdev_nb = {
	.notifier_call = kpm_netdev_event,
};

int kpm_session_init(void)
{
	int err;

	kpm_wq = alloc_workqueue("ksft_perfmon",
				 WQ_UNBOUND | WQ_HIGHPRI | WQ_SYSFS, 0);
	if (!kpm_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&kpm_netdev_nb);
	if (err)
		destroy_workqueue(kpm_wq);
	return err;
}

void kpm_session_exit(void)
{
	kpm_session_destroy_all();
	unregister_netdevice_notifier(&kpm_netdev_nb);
	destroy_workqueue(kpm_wq);
}
