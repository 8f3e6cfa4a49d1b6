// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler: a softirq hrtimer per session that snapshots kcpustat of
 * every possible CPU and the stats64 of the session's netdevs into the next
 * slot of the session's ring.
 */

#include <linux/cpumask.h>
#include <linux/kernel_stat.h>
#include <linux/netdevice.h>

#include "compat.h"
#include "kpm.h"

static void kpm_sample_cpus(struct kpm_session *s, struct kpm_sample *smp)
{
	unsigned int cpu;

	/* CPU ids that are not possible keep the zeroed slot of the ring */
	for_each_possible_cpu(cpu) {
		struct kpm_cpu_sample *cs = kpm_sample_cpu(s, smp, cpu);
		struct kernel_cpustat kcs;
		const u64 *t = kcs.cpustat;

		/* as /proc/stat reads them, idle and iowait NOHZ-aware */
		kpm_kcpustat_fetch(&kcs, cpu);
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
		cs->online = cpu_online(cpu);
	}
}

static void kpm_sample_devs(struct kpm_session *s, struct kpm_sample *smp)
{
	u32 i;

	for (i = 0; i < s->ndevs; i++) {
		struct kpm_dev_sample *ds = kpm_sample_dev(smp, i);
		struct net_device *dev = s->devs[i].dev;

		ds->gone = !dev;
		if (dev)
			dev_get_stats(dev, &ds->stats);
		else
			memset(&ds->stats, 0, sizeof(ds->stats));
	}
}

/**
 * kpm_sampler_fn() - take one sample of a session
 * @timer: the session's timer
 *
 * Writes the sample at the head of the ring. When the ring is full this
 * overwrites the oldest sample; one that no reader had read yet is counted
 * in @lost, so every gap a reader sees in the sequence numbers is counted.
 *
 * Context: softirq (HRTIMER_MODE_REL_SOFT; a thread on PREEMPT_RT), which
 * ndo_get_stats64 allows. Takes the session's lock.
 *
 * Return: HRTIMER_RESTART, forwarded by one interval.
 */
enum hrtimer_restart kpm_sampler_fn(struct hrtimer *timer)
{
	struct kpm_session *s = container_of(timer, struct kpm_session, timer);
	struct kpm_sample *smp;
	u64 start, cost;

	spin_lock(&s->lock);
	start = ktime_get_ns();

	if (s->head >= s->ring_size) {
		u64 overwritten = s->head - s->ring_size;

		if (overwritten >= s->read_seq) {
			s->lost++;
			s->read_seq = overwritten + 1;
		}
	}

	smp = s->ring + (size_t)s->head_slot * s->sample_size;
	smp->seq = s->head;
	smp->time_ns = start;
	kpm_sample_devs(s, smp);
	kpm_sample_cpus(s, smp);

	cost = ktime_get_ns() - start;
	smp->cost_ns = cost;
	s->cost_ns += cost;
	s->head++;
	if (++s->head_slot == s->ring_size)
		s->head_slot = 0;
	spin_unlock(&s->lock);

	hrtimer_forward_now(timer, ns_to_ktime(s->interval_ns));
	return HRTIMER_RESTART;
}
