// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: ksft_perfmon/sessions lists the sessions, ksft_perfmon/latest
 * prints the newest sample of each (with the CPUs' network counts and the
 * queues' packets where the session has them), for quick checks with cat;
 * ksft_perfmon/copy_cost times the sampler's read of the CPUs, with and
 * without their network counts, against a bare copy of their counters,
 * for make bench.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel_stat.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/sort.h>

#include "kpm.h"

static struct dentry *kpm_debugfs_dir;

static const char * const kpm_cpu_net_names[KPM_NET_NR_COUNTS] = {
	[KPM_NET_PROCESSED] = "processed",
	[KPM_NET_DROPPED] = "dropped",
	[KPM_NET_TIME_SQUEEZE] = "time_squeeze",
	[KPM_NET_RECEIVED_RPS] = "received_rps",
	[KPM_NET_RX_SOFTIRQ] = "net_rx",
	[KPM_NET_TX_SOFTIRQ] = "net_tx",
};

static const char * const kpm_cpu_time_names[KPM_CPU_NR_TIMES] = {
	[KPM_CPU_USER] = "user",
	[KPM_CPU_NICE] = "nice",
	[KPM_CPU_SYSTEM] = "system",
	[KPM_CPU_IDLE] = "idle",
	[KPM_CPU_IOWAIT] = "iowait",
	[KPM_CPU_IRQ] = "irq",
	[KPM_CPU_SOFTIRQ] = "softirq",
	[KPM_CPU_STEAL] = "steal",
	[KPM_CPU_GUEST] = "guest",
	[KPM_CPU_GUEST_NICE] = "guest_nice",
};

/**
 * kpm_sessions_show() - print the sessions file, one session a line
 * @m: the seq_file of the open file
 * @v: unused (single_open())
 *
 * Context: process. Takes kpm_mutex, then each session's lock for its
 * counters.
 * Return: 0.
 */
static int kpm_sessions_show(struct seq_file *m, void *v)
{
	struct kpm_counts c;
	struct kpm_session *s;
	unsigned long id;
	u32 i;

	seq_puts(m, "id interval_ns ring_size sample_size samples lost missed cost_ns portid ifindex mem_bytes on_timer_cpu holds hold_max_ns hold_mean_ns hold_calls dev_interval_ns dev_missed\n");
	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s) {
		kpm_session_counters(s, &c);
		seq_printf(m, "%u %llu %u %u %llu %llu %llu %llu %u", s->id,
			   s->interval_ns, s->ring_size, s->sample_size,
			   c.samples, c.lost, c.missed, c.cost_ns, s->portid);
		/* ->held is under kpm_mutex */
		for (i = 0; i < s->ndevs; i++)
			seq_printf(m, "%c%u%s", i ? ',' : ' ', s->devs[i].ifindex,
				   s->devs[i].held ? "" : "(gone)");
		if (!s->ndevs)
			seq_puts(m, " -");
		seq_printf(m, " %zu %llu %llu %llu %llu %llu %llu %llu\n",
			   s->mem, c.on_timer_cpu, c.hold.holds, c.hold.max_ns,
			   c.hold.holds ? div64_u64(c.hold.total_ns, c.hold.holds) : 0,
			   c.hold.calls, s->ndevs ? s->dev_interval_ns : 0,
			   c.dev_missed);
	}
	mutex_unlock(&kpm_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpm_sessions);

/*
 * latest: a record per line, so that a seq_file buffer that overflows
 * makes one line be formatted again, not every CPU of every session. A
 * position is a session id (high 32 bits) and a line of it (low 32). The
 * iterator holds a copy of the session's newest sample, taken at its
 * first line, and formats every line from it with no lock held.
 */
struct kpm_latest_iter {
	struct kpm_sample *smp;	/* the newest sample of session @id */
	size_t size;		/* of @smp's buffer */
	bool loaded;		/* @smp holds session @id's newest sample */
	u32 id;
	u32 line;
	bool have;		/* the session had a sample */
};

#define KPM_LATEST_POS(id, line)	(((loff_t)(id) << 32) | (line))

/* its header, then its netdevs, the CPU header and every CPU id */
static u32 kpm_latest_lines(const struct kpm_latest_iter *it)
{
	return it->have ? 1 + it->smp->ndevs + 1 + nr_cpu_ids : 1;
}

/* Copy the newest sample of the first session from *@id on. */
static int kpm_latest_load(struct kpm_latest_iter *it, unsigned long *id)
{
	struct kpm_session *s;
	size_t size;

	for (;;) {
		mutex_lock(&kpm_mutex);
		s = xa_find(&kpm_sessions, id, U32_MAX, XA_PRESENT);
		size = s ? s->sample_size : 0;
		if (s && size <= it->size) {
			it->have = kpm_session_latest(s, it->smp);
			it->id = s->id;
			it->loaded = true;
		}
		mutex_unlock(&kpm_mutex);
		if (!s)
			return -ENOENT;
		if (size <= it->size)
			return 0;

		/* a larger buffer, taken with no lock held; then again */
		kvfree(it->smp);
		it->loaded = false;
		it->smp = kvmalloc(size, GFP_KERNEL_ACCOUNT);
		it->size = it->smp ? size : 0;
		if (!it->smp)
			return -ENOMEM;
	}
}

/*
 * Context: process. Takes kpm_mutex, then the session's lock, to copy a
 * session's newest sample at its first line.
 */
static void *kpm_latest_start(struct seq_file *m, loff_t *pos)
{
	struct kpm_latest_iter *it = m->private;
	unsigned long id = *pos >> 32;
	u32 line = *pos & U32_MAX;
	int err;

	for (;;) {
		if (!line || !it->loaded || it->id != id) {
			unsigned long want = id;

			err = kpm_latest_load(it, &id);
			if (err)
				return err == -ENOENT ? NULL : ERR_PTR(err);
			if (id != want)
				line = 0;
		}
		if (line < kpm_latest_lines(it))
			break;
		id++;
		line = 0;
	}
	it->line = line;
	*pos = KPM_LATEST_POS(id, line);
	return it;
}

static void *kpm_latest_next(struct seq_file *m, void *v, loff_t *pos)
{
	*pos = KPM_LATEST_POS(*pos >> 32, (*pos & U32_MAX) + 1);
	return kpm_latest_start(m, pos);
}

static void kpm_latest_stop(struct seq_file *m, void *v)
{
}

/* a queue counter, "-" where the driver reports none (all ones) */
static void kpm_latest_counter(struct seq_file *m, char sep, u64 v)
{
	if (v == U64_MAX)
		seq_printf(m, "%c-", sep);
	else
		seq_printf(m, "%c%llu", sep, v);
}

/* the CPU of each RX (@rx) or TX queue's IRQ in order, "-" for none */
static void kpm_latest_cpus(struct seq_file *m,
			    const struct kpm_dev_qstats *qs, u32 nq, bool rx)
{
	u32 q;
	s32 cpu;

	seq_puts(m, rx ? " rx_cpus" : " tx_cpus");
	for (q = 0; q < nq; q++) {
		cpu = kpm_qstats_link(qs, nq, rx, q)->cpu;
		seq_printf(m, cpu < 0 ? "%c-" : "%c%d", q ? ',' : ' ', cpu);
	}
}

/*
 * The map of a netdev's queues: its version ("skipped" after it when the
 * read found the instance lock held, the map the last read's), and the
 * CPU of each queue's IRQ.
 */
static void kpm_latest_map(struct seq_file *m, const struct kpm_sample *smp,
			   const struct kpm_dev_qstats *qs)
{
	seq_printf(m, " map %u%s", qs->map_version,
		   qs->map_skipped ? " skipped" : "");
	kpm_latest_cpus(m, qs, smp->nqueues, true);
	kpm_latest_cpus(m, qs, smp->nqueues, false);
}

/*
 * The end of a netdev's line: its queues' packets, each queue's in
 * order, and its map, when the session has queues.
 */
static void kpm_latest_qstats(struct seq_file *m, const struct kpm_sample *smp,
			      u32 i)
{
	const struct kpm_dev_qstats *qs = kpm_sample_qstats(smp, i);
	u32 q, n;

	if (!qs)
		return;
	/* a skipped read keeps the last read's values, if there was one */
	if (!qs->read) {
		seq_puts(m, qs->skipped ? " qstats skipped" : " qstats none");
		if (qs->mapped)
			kpm_latest_map(m, smp, qs);
		return;
	}
	seq_printf(m, " qstats%s rx_queues %u tx_queues %u rx_packets",
		   qs->skipped ? " skipped" : "", qs->rx_queues, qs->tx_queues);
	n = min(qs->rx_queues, smp->nqueues);
	for (q = 0; q < n; q++)
		kpm_latest_counter(m, q ? ',' : ' ',
				   kpm_qstats_rx(qs, q)->packets);
	seq_puts(m, " tx_packets");
	n = min(qs->tx_queues, smp->nqueues);
	for (q = 0; q < n; q++)
		kpm_latest_counter(m, q ? ',' : ' ',
				   kpm_qstats_tx(qs, smp->nqueues, q)->packets);
	if (qs->mapped)
		kpm_latest_map(m, smp, qs);
}

/* one line of the newest sample of it->id, from the copy; no lock held */
static int kpm_latest_show(struct seq_file *m, void *v)
{
	struct kpm_latest_iter *it = v;
	const struct kpm_sample *smp = it->smp;
	const struct kpm_cpu_sample *cs;
	const struct kpm_cpu_net *cn;
	u32 line = it->line, t;
	unsigned int cpu;

	if (!line) {
		if (!it->have)
			seq_printf(m, "session %u no sample yet\n", it->id);
		else
			seq_printf(m, "session %u seq %llu time_ns %llu cost_ns %llu delay_ns %llu\n",
				   it->id, smp->seq, smp->time_ns, smp->cost_ns,
				   smp->delay_ns);
		return 0;
	}
	if (line <= smp->ndevs) {
		const struct kpm_dev_sample *ds = kpm_sample_dev(smp, line - 1);
		const struct rtnl_link_stats64 *st = &ds->stats;

		if (ds->gone) {
			seq_printf(m, "  dev %u gone\n", ds->ifindex);
			return 0;
		}
		seq_printf(m, "  dev %u rx_packets %llu tx_packets %llu rx_bytes %llu tx_bytes %llu rx_dropped %llu tx_dropped %llu rx_missed_errors %llu",
			   ds->ifindex, st->rx_packets, st->tx_packets,
			   st->rx_bytes, st->tx_bytes, st->rx_dropped,
			   st->tx_dropped, st->rx_missed_errors);
		kpm_latest_qstats(m, smp, line - 1);
		seq_putc(m, '\n');
		return 0;
	}
	if (line == smp->ndevs + 1) {
		seq_puts(m, "  cpu    ");
		for (t = 0; t < KPM_CPU_NR_TIMES; t++)
			seq_printf(m, " %s", kpm_cpu_time_names[t]);
		seq_puts(m, " (ns)");
		if (smp->flags & KPM_SAMPLE_CPU_NET) {
			seq_puts(m, " |");
			for (t = 0; t < KPM_NET_NR_COUNTS; t++)
				seq_printf(m, " %s", kpm_cpu_net_names[t]);
		}
		seq_putc(m, '\n');
		return 0;
	}
	cpu = line - smp->ndevs - 2;
	if (!cpu_possible(cpu))
		return 0;
	cs = kpm_sample_cpu(smp, cpu);
	seq_printf(m, "  cpu%-4u%s", cpu, cs->online ? "" : " offline");
	for (t = 0; t < KPM_CPU_NR_TIMES; t++)
		seq_printf(m, " %llu", cs->time[t]);
	cn = kpm_sample_cpu_net(smp, cpu);
	if (cn) {
		seq_puts(m, " |");
		for (t = 0; t < KPM_NET_NR_COUNTS; t++)
			seq_printf(m, " %llu", cn->count[t]);
	}
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations kpm_latest_sops = {
	.start	= kpm_latest_start,
	.next	= kpm_latest_next,
	.stop	= kpm_latest_stop,
	.show	= kpm_latest_show,
};

static int kpm_latest_open(struct inode *inode, struct file *file)
{
	return seq_open_private(file, &kpm_latest_sops,
				sizeof(struct kpm_latest_iter));
}

static int kpm_latest_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;
	struct kpm_latest_iter *it = m->private;

	kvfree(it->smp);
	return seq_release_private(inode, file);
}

static const struct file_operations kpm_latest_fops = {
	.owner		= THIS_MODULE,
	.open		= kpm_latest_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= kpm_latest_release,
};

#define KPM_COPY_COST_PASSES	32

/* what copy_cost times, in the order it prints them */
enum {
	KPM_COST_SAMPLER,	/* kpm_sample_cpus() */
	KPM_COST_BARE,		/* a memcpy() of each CPU's kcpustat */
	KPM_COST_BARE_CLOCK,	/* that, and two clock reads an online CPU */
	KPM_COST_SAMPLER_NET,	/* kpm_sample_cpus() with KPM_SAMPLE_CPU_NET */
	KPM_COST_KINDS,
};

static int kpm_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/**
 * kpm_copy_cost_show() - what reading every CPU costs, against a bare copy
 * @m: the seq_file of the open file
 * @v: unused (single_open())
 *
 * A benchmark: %KPM_COPY_COST_PASSES passes, 10 ms apart as a session's
 * samples may be, each of the sampler's read of every possible CPU
 * (kpm_sample_cpus()), of a bare copy of the same kcpustat counters, with
 * no seqcount and no NOHZ idle time, into a buffer of the same size, and
 * of that copy with the two ktime_get() an online CPU's NOHZ idle and
 * iowait time take (get_cpu_idle_time_us() and get_cpu_iowait_time_us()
 * each read the clock), and of the sampler's read with each CPU's network
 * counts (a cpu-net session's); the order of the four turns, so that none
 * always finds the counters in the cache. Prints the median nanoseconds
 * of each; the bare copy is the floor any reader of these counters pays.
 *
 * Context: process; sleeps, takes no lock of the module.
 * Return: 0 or -ENOMEM.
 */
static int kpm_copy_cost_show(struct seq_file *m, void *v)
{
	u64 *bare, t, (*ns)[KPM_COPY_COST_PASSES];
	struct kpm_sample *smp;
	unsigned int cpu, i, k;
	int err = 0;

	/* one buffer for both reads of the sampler, which differ in the flag */
	smp = kvzalloc(kpm_sample_size(0, KPM_SAMPLE_CPU_NET, 0), GFP_KERNEL);
	bare = kvcalloc(nr_cpu_ids, sizeof(kcpustat_cpu(0).cpustat),
			GFP_KERNEL);
	ns = kcalloc(KPM_COST_KINDS, sizeof(*ns), GFP_KERNEL);
	if (!smp || !bare || !ns) {
		err = -ENOMEM;
		goto out;
	}

	for (i = 0; i < KPM_COPY_COST_PASSES; i++) {
		for (k = 0; k < KPM_COST_KINDS; k++) {
			unsigned int what = (i + k) % KPM_COST_KINDS;

			t = ktime_get_ns();
			if (what == KPM_COST_SAMPLER ||
			    what == KPM_COST_SAMPLER_NET) {
				smp->flags = what == KPM_COST_SAMPLER_NET ?
					     KPM_SAMPLE_CPU_NET : 0;
				kpm_sample_cpus(smp);
			} else {
				for_each_possible_cpu(cpu) {
					memcpy(bare + cpu * NR_STATS,
					       kcpustat_cpu(cpu).cpustat,
					       sizeof(kcpustat_cpu(cpu).cpustat));
					if (what == KPM_COST_BARE_CLOCK &&
					    cpu_online(cpu)) {
						ktime_get();
						ktime_get();
					}
				}
			}
			ns[what][i] = ktime_get_ns() - t;
		}
		fsleep(10 * USEC_PER_MSEC);
	}
	for (k = 0; k < KPM_COST_KINDS; k++)
		sort(ns[k], KPM_COPY_COST_PASSES, sizeof(u64), kpm_cmp_u64,
		     NULL);

	seq_printf(m, "passes %u cpus %u sampler_ns %llu bare_ns %llu bare_clock_ns %llu sampler_net_ns %llu\n",
		   KPM_COPY_COST_PASSES, num_possible_cpus(),
		   ns[KPM_COST_SAMPLER][KPM_COPY_COST_PASSES / 2],
		   ns[KPM_COST_BARE][KPM_COPY_COST_PASSES / 2],
		   ns[KPM_COST_BARE_CLOCK][KPM_COPY_COST_PASSES / 2],
		   ns[KPM_COST_SAMPLER_NET][KPM_COPY_COST_PASSES / 2]);
out:
	kfree(ns);
	kvfree(bare);
	kvfree(smp);
	return err;
}
DEFINE_SHOW_ATTRIBUTE(kpm_copy_cost);

void kpm_debugfs_init(void)
{
	kpm_debugfs_dir = debugfs_create_dir("ksft_perfmon", NULL);
	debugfs_create_file("sessions", 0400, kpm_debugfs_dir, NULL,
			    &kpm_sessions_fops);
	debugfs_create_file("latest", 0400, kpm_debugfs_dir, NULL,
			    &kpm_latest_fops);
	debugfs_create_file("copy_cost", 0400, kpm_debugfs_dir, NULL,
			    &kpm_copy_cost_fops);
}

void kpm_debugfs_exit(void)
{
	debugfs_remove_recursive(kpm_debugfs_dir);
}
