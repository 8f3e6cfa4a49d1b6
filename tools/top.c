// SPDX-License-Identifier: GPL-2.0
/*
 * One frame of "ksft-perfmon-nl top". A CPU's percentages are its kcpustat
 * times' shares of the interval, over user, nice, system, idle, iowait,
 * irq, softirq and steal as /proc/stat's readers add them up; idle
 * includes iowait, busy is the rest. NIC rates are per second of the
 * samples' own times.
 */

#include <string.h>

#include "nl.h"
#include "top.h"

#define BAR_WIDTH	30

/* @b - @a of a counter; a counter that went back counts as no change */
static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

enum { P_USR, P_SYS, P_SOFT, P_IRQ, P_IDLE, P_NR };

/* the shares of @a to @b in percent; false when no time elapsed */
static bool cpu_shares(const struct cpu_stats *a, const struct cpu_stats *b,
		       double pct[P_NR])
{
	uint64_t d[P_NR], total = 0;
	int i;

	d[P_USR] = delta(a->t[T_USER] + a->t[T_NICE],
			 b->t[T_USER] + b->t[T_NICE]);
	d[P_SYS] = delta(a->t[T_SYSTEM], b->t[T_SYSTEM]);
	d[P_SOFT] = delta(a->t[T_SOFTIRQ], b->t[T_SOFTIRQ]);
	d[P_IRQ] = delta(a->t[T_IRQ] + a->t[T_STEAL],
			 b->t[T_IRQ] + b->t[T_STEAL]);
	d[P_IDLE] = delta(a->t[T_IDLE] + a->t[T_IOWAIT],
			  b->t[T_IDLE] + b->t[T_IOWAIT]);
	for (i = 0; i < P_NR; i++)
		total += d[i];
	if (!total)
		return false;
	for (i = 0; i < P_NR; i++)
		pct[i] = 100.0 * (double)d[i] / (double)total;
	return true;
}

/* counter @stat of a netdev a second, from @a to @b */
static double rate(const struct dev_stats *a, const struct dev_stats *b,
		   int stat, double secs)
{
	return (double)delta(a->v[stat], b->v[stat]) / secs;
}

static void cpu_row(FILE *f, const char *name, const double pct[P_NR])
{
	double busy = 100.0 - pct[P_IDLE];
	int n = (int)(busy * BAR_WIDTH / 100.0 + 0.5);

	if (n < 0)
		n = 0;
	if (n > BAR_WIDTH)
		n = BAR_WIDTH;
	fprintf(f, "%-5s %6.1f %6.1f %6.1f %6.1f %6.1f  [%.*s%*s]\n", name,
		pct[P_USR], pct[P_SYS], pct[P_SOFT], pct[P_IRQ], pct[P_IDLE], n,
		"##############################", BAR_WIDTH - n, "");
}

void top_frame(FILE *f, const struct session *s, const struct sample *prev,
	       const struct sample *now, const char *const *ifnames)
{
	double secs = (double)delta(prev->time, now->time) / NSEC_PER_SEC;
	double pct[P_NR], sum[P_NR] = {};
	unsigned int online = 0, i;
	char name[16];
	uint32_t c;
	int p;

	fprintf(f, "ksft_perfmon top: session %u, sample %llu over %.3f s, sampler %.1f us a sample\n\n",
		s->id, (unsigned long long)now->seq, secs,
		(double)now->cost / 1000.0);
	fprintf(f, "CPU     %%usr   %%sys  %%soft   %%irq  %%idle  busy\n");
	for (c = 0; c < s->cpus; c++) {
		const struct cpu_stats *a = &prev->cpu[c], *b = &now->cpu[c];

		if (!a->present || !b->present)
			continue;	/* not a possible CPU */
		if (!a->online || !b->online || !cpu_shares(a, b, pct)) {
			fprintf(f, "%-5u offline\n", c);
			continue;
		}
		for (p = 0; p < P_NR; p++)
			sum[p] += pct[p];
		online++;
		snprintf(name, sizeof(name), "%u", c);
		cpu_row(f, name, pct);
	}
	if (online) {
		for (p = 0; p < P_NR; p++)
			sum[p] /= online;
		cpu_row(f, "all", sum);
	}
	if (!now->ndevs || !secs)
		return;

	fprintf(f, "\nNIC              rx pkt/s  rx Mbit/s  rx drop/s");
	fprintf(f, "   tx pkt/s  tx Mbit/s  tx drop/s\n");
	for (i = 0; i < now->ndevs && i < prev->ndevs; i++) {
		const struct dev_stats *a = &prev->dev[i], *b = &now->dev[i];

		if (ifnames && ifnames[i])
			snprintf(name, sizeof(name), "%s", ifnames[i]);
		else
			snprintf(name, sizeof(name), "%u", b->ifindex);
		if (a->gone || b->gone) {
			fprintf(f, "%-15s  gone\n", name);
			continue;
		}
		fprintf(f, "%-15s %10.0f %10.3f %10.0f %10.0f %10.3f %10.0f\n",
			name, rate(a, b, DEV_STAT(RX_PACKETS), secs),
			rate(a, b, DEV_STAT(RX_BYTES), secs) * 8 / 1e6,
			rate(a, b, DEV_STAT(RX_DROPPED), secs) +
			rate(a, b, DEV_STAT(RX_MISSED_ERRORS), secs),
			rate(a, b, DEV_STAT(TX_PACKETS), secs),
			rate(a, b, DEV_STAT(TX_BYTES), secs) * 8 / 1e6,
			rate(a, b, DEV_STAT(TX_DROPPED), secs));
	}
}
