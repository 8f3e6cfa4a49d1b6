// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: ksft_perfmon/sessions lists the sessions, ksft_perfmon/latest
 * prints the newest sample of each, for quick checks with cat.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kpm.h"

static struct dentry *kpm_debugfs_dir;

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
 * Context: process. Takes kpm_mutex, then each session's lock with
 * spin_lock_bh(), against the sampler.
 * Return: 0.
 */
static int kpm_sessions_show(struct seq_file *m, void *v)
{
	struct kpm_session *s;
	unsigned long id;
	u32 i;

	seq_puts(m, "id interval_ns ring_size sample_size samples lost cost_ns portid ifindex\n");
	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s) {
		spin_lock_bh(&s->lock);
		seq_printf(m, "%u %llu %u %u %llu %llu %llu %u", s->id,
			   s->interval_ns, s->ring_size, s->sample_size,
			   s->head, s->lost, s->cost_ns, s->portid);
		for (i = 0; i < s->ndevs; i++)
			seq_printf(m, "%c%u%s", i ? ',' : ' ', s->devs[i].ifindex,
				   s->devs[i].dev ? "" : "(gone)");
		if (!s->ndevs)
			seq_puts(m, " -");
		seq_putc(m, '\n');
		spin_unlock_bh(&s->lock);
	}
	mutex_unlock(&kpm_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpm_sessions);

static void kpm_latest_show_one(struct seq_file *m, struct kpm_session *s)
{
	struct kpm_sample *smp;
	unsigned int cpu;
	u32 i, t;

	seq_printf(m, "session %u", s->id);
	if (!s->head) {
		seq_puts(m, " no sample yet\n");
		return;
	}
	smp = kpm_session_sample(s, s->head - 1);
	seq_printf(m, " seq %llu time_ns %llu cost_ns %llu\n", smp->seq,
		   smp->time_ns, smp->cost_ns);

	for (i = 0; i < s->ndevs; i++) {
		const struct kpm_dev_sample *ds = kpm_sample_dev(smp, i);
		const struct rtnl_link_stats64 *st = &ds->stats;

		seq_printf(m, "  dev %u", s->devs[i].ifindex);
		if (ds->gone) {
			seq_puts(m, " gone\n");
			continue;
		}
		seq_printf(m, " rx_packets %llu tx_packets %llu rx_bytes %llu tx_bytes %llu rx_dropped %llu tx_dropped %llu rx_missed_errors %llu\n",
			   st->rx_packets, st->tx_packets, st->rx_bytes,
			   st->tx_bytes, st->rx_dropped, st->tx_dropped,
			   st->rx_missed_errors);
	}

	seq_puts(m, "  cpu    ");
	for (t = 0; t < KPM_CPU_NR_TIMES; t++)
		seq_printf(m, " %s", kpm_cpu_time_names[t]);
	seq_puts(m, " (ns)\n");
	for_each_possible_cpu(cpu) {
		const struct kpm_cpu_sample *cs = kpm_sample_cpu(s, smp, cpu);

		seq_printf(m, "  cpu%-4u%s", cpu, cs->online ? "" : " offline");
		for (t = 0; t < KPM_CPU_NR_TIMES; t++)
			seq_printf(m, " %llu", cs->time[t]);
		seq_putc(m, '\n');
	}
}

/**
 * kpm_latest_show() - print the newest sample of each session
 * @m: the seq_file of the open file
 * @v: unused (single_open())
 *
 * Context: process. Takes kpm_mutex, then each session's lock with
 * spin_lock_bh(), against the sampler.
 * Return: 0.
 */
static int kpm_latest_show(struct seq_file *m, void *v)
{
	struct kpm_session *s;
	unsigned long id;

	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s) {
		spin_lock_bh(&s->lock);
		kpm_latest_show_one(m, s);
		spin_unlock_bh(&s->lock);
	}
	mutex_unlock(&kpm_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpm_latest);

void kpm_debugfs_init(void)
{
	kpm_debugfs_dir = debugfs_create_dir("ksft_perfmon", NULL);
	debugfs_create_file("sessions", 0444, kpm_debugfs_dir, NULL,
			    &kpm_sessions_fops);
	debugfs_create_file("latest", 0444, kpm_debugfs_dir, NULL,
			    &kpm_latest_fops);
}

void kpm_debugfs_exit(void)
{
	debugfs_remove_recursive(kpm_debugfs_dir);
}
