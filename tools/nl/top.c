// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl top": a live view from the module, a frame each
 * interval, until SIGINT, SIGTERM or --count. A CPU's percentages are its kcpustat
 * times' shares of the interval, over user, nice, system, idle, iowait,
 * irq, softirq and steal as /proc/stat's readers add them up; idle
 * includes iowait, busy is the rest. A CPU's network counts (cpu-net:
 * softnet_data's and the NET_RX/NET_TX softirqs'), NIC rates and, with
 * --queues, each queue's rates are per second of the samples' own times.
 */

#include <net/if.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "nl-cmd.h"

#define BAR_WIDTH	30
#define NET_COLS	6

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

/*
 * Each online CPU's network counts a second: the packets its softnet
 * processed, dropped and steered with RPS, the NAPI polls cut short
 * (squeezed), and its NET_RX and NET_TX softirqs; then their sum.
 */
static void cpu_net_rows(FILE *f, const struct session *s,
			 const struct sample *prev, const struct sample *now,
			 double secs)
{
	static const struct {
		int n;
		const char *head;
	} col[NET_COLS] = {
		{ N_PROCESSED, "rx pkt/s" }, { N_DROPPED, "drop/s" },
		{ N_SQUEEZED, "squeeze/s" }, { N_RPS, "rps/s" },
		{ N_NET_RX, "NET_RX/s" }, { N_NET_TX, "NET_TX/s" },
	};
	double r, sum[NET_COLS] = {};
	unsigned int online = 0;
	uint32_t c;
	int i;

	fprintf(f, "\n%-5s", "CPU");
	for (i = 0; i < NET_COLS; i++)
		fprintf(f, " %9s", col[i].head);
	fputc('\n', f);
	for (c = 0; c < s->cpus; c++) {
		const struct cpu_stats *a = &prev->cpu[c], *b = &now->cpu[c];

		if (!a->present || !b->present || !a->online || !b->online)
			continue;
		online++;
		fprintf(f, "%-5u", c);
		for (i = 0; i < NET_COLS; i++) {
			r = (double)delta(a->net[col[i].n], b->net[col[i].n]) /
			    secs;
			sum[i] += r;
			fprintf(f, " %9.0f", r);
		}
		fputc('\n', f);
	}
	if (!online)
		return;
	fprintf(f, "%-5s", "sum");
	for (i = 0; i < NET_COLS; i++)
		fprintf(f, " %9.0f", sum[i]);
	fputc('\n', f);
}

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* a queue counter a second, or "-" where the driver reports none */
static void queue_rate(FILE *f, const struct queue_stats *a,
		       const struct queue_stats *b, int stat, double scale,
		       const char *fmt)
{
	if (a->v[stat] == Q_UNSET || b->v[stat] == Q_UNSET)
		fprintf(f, " %10s", "-");
	else
		fprintf(f, fmt, (double)delta(a->v[stat], b->v[stat]) * scale);
}

/*
 * Each queue's rates of netdev @d, as netdev-genl's qstats-get counts
 * them: up to the session's queues of each direction, a row for the
 * queues both directions have or either has.
 */
static void queue_rows(FILE *f, const char *name, const struct sample *prev,
		       const struct sample *now, uint32_t d, double secs)
{
	const struct dev_qstats *a = &prev->q[d], *b = &now->q[d];
	uint32_t q, nrx, ntx, n;
	char row[32];

	if (!a->read || !b->read) {
		fprintf(f, "%-15s  no queue statistics\n", name);
		return;
	}
	/* the queues both samples hold */
	nrx = min3(a->rx_queues, b->rx_queues, now->nqueues);
	ntx = min3(a->tx_queues, b->tx_queues, now->nqueues);
	n = nrx > ntx ? nrx : ntx;
	for (q = 0; q < n; q++) {
		snprintf(row, sizeof(row), "%.15s %u", name, q);
		fprintf(f, "%-20s", row);
		if (q < nrx) {
			queue_rate(f, &a->rx[q], &b->rx[q], Q_STAT(RX_PACKETS),
				   1 / secs, " %10.0f");
			queue_rate(f, &a->rx[q], &b->rx[q], Q_STAT(RX_BYTES),
				   8 / 1e6 / secs, " %10.3f");
		} else {
			fprintf(f, " %10s %10s", "", "");
		}
		if (q < ntx) {
			queue_rate(f, &a->tx[q], &b->tx[q], Q_STAT(TX_PACKETS),
				   1 / secs, " %10.0f");
			queue_rate(f, &a->tx[q], &b->tx[q], Q_STAT(TX_BYTES),
				   8 / 1e6 / secs, " %10.3f");
		}
		fputc('\n', f);
	}
	if (b->skipped)
		fprintf(f, "%-15s  (the last read skipped: its lock was busy)\n",
			name);
}

/*
 * Print the frame of @prev to @now (samples of @s) to @f; @ifnames names
 * the session's netdevs (NULL entries print as their ifindex).
 */
static void top_frame(FILE *f, const struct session *s,
		      const struct sample *prev, const struct sample *now,
		      const char *const *ifnames)
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
	if (!secs)
		return;
	if (s->cpu_net)
		cpu_net_rows(f, s, prev, now, secs);
	if (!now->ndevs)
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
	if (!now->q || !prev->q)
		return;
	fprintf(f, "\n%-20s %10s %10s %10s %10s\n", "QUEUE", "rx pkt/s",
		"rx Mbit/s", "tx pkt/s", "tx Mbit/s");
	for (i = 0; i < now->ndevs && i < prev->ndevs; i++) {
		if (ifnames && ifnames[i])
			snprintf(name, sizeof(name), "%s", ifnames[i]);
		else
			snprintf(name, sizeof(name), "%u", now->dev[i].ifindex);
		queue_rows(f, name, prev, now, i, secs);
	}
}

struct top_state {
	struct sample latest;
	bool have;
};

static void top_keep(struct drain *d, const struct sample *smp)
{
	struct top_state *st = d->arg;

	sample_copy(&st->latest, smp, d->s->cpus);
	st->have = true;
}

int do_top(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &top_cmd };
	struct session_opts so = { .cpu_net = true };
	char names[KSFT_PERFMON_DEVS_MAX][IF_NAMESIZE];
	const char *ifnames[KSFT_PERFMON_DEVS_MAX] = {};
	struct sample_args sa = { .interval = NSEC_PER_SEC };
	uint64_t refresh, count = 0, frames = 0;
	bool tty = isatty(STDOUT_FILENO);
	unsigned int i;
	struct top_state st = {};
	struct sample prev = {};
	struct session s;
	struct kpm_nl nl;
	struct drain d;
	int opt;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0) {
		if (!sample_arg(&sa, opt, optarg) && opt == 'n')
			count = parse_u64("--count", optarg, UINT64_MAX);
	}
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (optind < argc) {
		kpm_usage_error(&top_cmd);
		return EXIT_USAGE;
	}
	so.queues = sa.queues;
	if (so.queues && !sa.ndevs)
		die("--queues: the queues are of netdevs: give --ifname or --ifindex");
	for (i = 0; i < sa.ndevs; i++)
		ifnames[i] = if_indextoname(sa.ifindex[i], names[i]);
	refresh = sa.interval > 100 * NSEC_PER_MSEC ? sa.interval :
		100 * NSEC_PER_MSEC;

	kpm_nl_open(&nl);
	if (session_new(&nl, sa.ifindex, sa.ndevs, sa.interval, 16,
			&so, &s, NULL) ||
	    session_get(&nl, s.id, &s))
		return EXIT_ERROR;
	if (sample_alloc(&st.latest, s.cpus) || sample_alloc(&prev, s.cpus) ||
	    sample_alloc_queues(&st.latest, &s) ||
	    sample_alloc_queues(&prev, &s) ||
	    drain_init(&d, &s, top_keep, &st))
		die("out of memory");
	install_handlers();
	/* the session's first sample, taken when it started */
	if (drain(&nl, &d))
		return EXIT_ERROR;
	if (st.have)
		sample_copy(&prev, &st.latest, s.cpus);
	while (!stop_signal && (!count || frames < count)) {
		sleep_ns(refresh);
		if (drain(&nl, &d))
			return EXIT_ERROR;
		if (!st.have || st.latest.seq == prev.seq)
			continue;
		if (prev.time) {
			if (tty)
				fputs("\033[H\033[2J", stdout);
			else if (frames)
				putchar('\n');
			top_frame(stdout, &s, &prev, &st.latest, ifnames);
			fflush(stdout);
			frames++;
		}
		sample_copy(&prev, &st.latest, s.cpus);
	}
	if (session_del(&nl, s.id))
		return EXIT_ERROR;
	sample_free(&prev);
	sample_free(&st.latest);
	drain_free(&d);
	return 0;
}
