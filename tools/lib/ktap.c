// SPDX-License-Identifier: GPL-2.0
/*
 * Samples into the KTAP metric lines of Documentation/metric-format.rst:
 * the policy line of each metric, then its observations, as
 * "ksft-perfmon-nl record" prints them. The compatibility set by
 * default, the CPUs' network counts and the queues' metrics on demand;
 * counters that go back are clamped and counted. samples.c decodes the
 * samples this takes.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ktap.h"

const char *const metric_names[M_NR] = {
	"cpu.time.usr", "cpu.time.sys", "cpu.time.sirq", "cpu.utilization",
	"nic.rx.dropped", "nic.rx.missed_errors", "nic.tx.dropped",
	"cpu.softnet.processed", "cpu.softnet.dropped", "cpu.softnet.squeezed",
	"cpu.softnet.rps", "cpu.softirq.net_rx", "cpu.softirq.net_tx",
	"nic.queue.rx.packets", "nic.queue.rx.bytes", "nic.queue.rx.alloc_fail",
	"nic.queue.rx.hw_drops", "nic.queue.tx.packets", "nic.queue.tx.bytes",
	"nic.queue.tx.stop", "nic.queue.rx.cpu", "nic.queue.tx.cpu",
};

/* the counter of each queue metric (-1: its link), and its display_label */
static const struct {
	bool rx;
	int stat;
	const char *label;
} queue_metric[M_QUEUE_NR] = {
	{ true, Q_STAT(RX_PACKETS), "Packets per second" },
	{ true, Q_STAT(RX_BYTES), "Bytes per second" },
	{ true, Q_STAT(RX_ALLOC_FAIL), "Allocation failures per second" },
	{ true, Q_STAT(RX_HW_DROPS), "Packets per second" },
	{ false, Q_STAT(TX_PACKETS), "Packets per second" },
	{ false, Q_STAT(TX_BYTES), "Bytes per second" },
	{ false, Q_STAT(TX_STOP), "Stops per second" },
	{ true, -1, "CPU" },
	{ false, -1, "CPU" },
};

/* the display_label of each count of cpu-net */
static const char *const cpu_net_labels[N_NR] = {
	"Packets per second", "Packets per second", "Squeezed rounds per second",
	"RPS IPIs per second", "Softirqs per second", "Softirqs per second",
};

static const int nic_stat[M_NR] = {
	[M_NIC_RX_DROPPED] = DEV_STAT(RX_DROPPED),
	[M_NIC_RX_MISSED] = DEV_STAT(RX_MISSED_ERRORS),
	[M_NIC_TX_DROPPED] = DEV_STAT(TX_DROPPED),
};

/* what a metric's policy line says but its name, in its keys' order */
struct policy {
	const char *aggregation;	/* NULL: none */
	const char *label;		/* display_label; NULL: none */
	enum { RANGE_NONE, RANGE_COUNT, RANGE_PERCENT } range;
	bool scale;			/* display_scale 100 */
	const char *summarize;
	const char *transform;		/* NULL: none */
};

static void policy_of(enum metric m, struct policy *p)
{
	memset(p, 0, sizeof(*p));
	if (m <= M_CPU_UTIL) {
		p->aggregation = "busy-core-equivalents";
		p->label = "Percent of one CPU";
		p->range = RANGE_PERCENT;
		p->scale = m != M_CPU_UTIL;
		p->summarize = "p90";
		p->transform = m != M_CPU_UTIL ? "rate" : NULL;
	} else if (m == M_QUEUE_RX_CPU || m == M_QUEUE_TX_CPU) {
		/* not a count: a CPU id, said when it changes */
		p->label = queue_metric[m - M_QUEUE_RX_PACKETS].label;
		p->summarize = "last";
	} else {
		/*
		 * No aggregation: the format's one (busy-core-equivalents)
		 * counts busy cores, not packets; each CPU is its own series,
		 * as each queue is. Events a healthy run has few of are
		 * summarized as the netdevs' drops are.
		 */
		if (m >= M_QUEUE_RX_PACKETS)
			p->label = queue_metric[m - M_QUEUE_RX_PACKETS].label;
		else if (m >= M_SOFTNET_PROCESSED)
			p->label = cpu_net_labels[m - M_SOFTNET_PROCESSED];
		p->range = RANGE_COUNT;
		p->summarize = m < M_SOFTNET_PROCESSED ||
			       m == M_SOFTNET_DROPPED ||
			       m == M_SOFTNET_SQUEEZED ||
			       m == M_QUEUE_RX_ALLOC_FAIL ||
			       m == M_QUEUE_RX_HW_DROPS || m == M_QUEUE_TX_STOP ?
			       "distribution" : "p90";
		p->transform = "rate";
	}
}

/* "@key":"@s", where there is an @s */
static void str_member(struct jw *w, const char *key, const char *s)
{
	if (!s)
		return;
	jw_key(w, key);
	jw_str(w, s);
}

int print_policy(FILE *f, enum metric m)
{
	struct policy p;
	struct jw w;

	policy_of(m, &p);
	jw_init(&w, f);
	fputs("# ktap-metric-policy-json: ", f);
	jw_obj_start(&w);
	str_member(&w, "aggregation", p.aggregation);
	str_member(&w, "display_label", p.label);
	if (p.range != RANGE_NONE) {
		jw_key(&w, "display_range");
		jw_obj_start(&w);
		if (p.range == RANGE_PERCENT) {
			jw_key(&w, "max");
			jw_double(&w, 100.0);
			jw_key(&w, "min");
			jw_double(&w, 0.0);
		} else {
			jw_key(&w, "min");
			jw_int(&w, 0);
		}
		jw_obj_end(&w);
	}
	if (p.scale) {
		jw_key(&w, "display_scale");
		jw_double(&w, 100.0);
	}
	str_member(&w, "name", metric_names[m]);
	str_member(&w, "summarize", p.summarize);
	str_member(&w, "transform", p.transform);
	jw_obj_end(&w);
	fputc('\n', f);
	return w.error ? -1 : 0;
}

/* an observation's members before its time, up to its key "time" */
static void obs_head(struct jw *w, const char *host, const char *name,
		     const char *shape)
{
	jw_obj_start(w);
	jw_key(w, "host");
	jw_str(w, host);
	jw_key(w, "name");
	jw_str(w, name);
	jw_key(w, "shape");
	jw_str(w, shape);
	jw_key(w, "time");
}

/* its time, and the key "value" */
static void obs_time(struct jw *w, uint64_t time_ns, uint64_t time_base)
{
	/* negative when the base is after the sample, by up to 2^64 - 1 */
	bool neg = time_base > time_ns;
	uint64_t a = neg ? time_base - time_ns : time_ns - time_base;

	/*
	 * round(d / 1e9, 6) as Python computes it: from the nanoseconds
	 * when they are not a tie at microseconds, for the double nearest
	 * d / 1e9 is within a nanosecond of it below 2^22 s; else through
	 * that double. The same result, without a printf and two strtod().
	 */
	if (a % 1000 != 500 && a < (1ULL << 22) * NSEC_PER_SEC) {
		long long us = (a + 500) / 1000;

		/* a negative time that rounds to zero is -0.0 in Python */
		if (neg && !us)
			jw_double(w, -0.0);
		else
			jw_decimal(w, neg ? -us : us, -6);
	} else {
		jw_round(w, (neg ? -(double)a : (double)a) / NSEC_PER_SEC, 6);
	}
	jw_key(w, "value");
}

void obs_line_start(FILE *f, struct jw *w, const char *host,
		    const char *name, const char *shape, uint64_t time_ns,
		    uint64_t time_base)
{
	jw_init(w, f);
	fputs("# ktap-metric-json: ", f);
	obs_head(w, host, name, shape);
	obs_time(w, time_ns, time_base);
}

static bool metric_per_cpu(enum metric m)
{
	return m <= M_CPU_UTIL ||
	       (m >= M_SOFTNET_PROCESSED && m < M_QUEUE_RX_PACKETS);
}

static const char *metric_shape(enum metric m)
{
	return metric_per_cpu(m) ? "per-cpu" : "scalar";
}

/*
 * The beginning of every line of metric @m, up to its key "time", as
 * obs_line_start() writes it, once: most of a short line.
 */
static char *obs_head_text(const char *host, enum metric m, size_t *len)
{
	char *text = NULL;
	struct jw w;
	FILE *f;

	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	jw_init(&w, f);
	fputs("# ktap-metric-json: ", f);
	obs_head(&w, host, metric_names[m], metric_shape(m));
	jw_flush(&w);
	if (fclose(f) || w.error) {
		free(text);
		return NULL;
	}
	return text;
}

/* a line of metric @m at @time_ns, up to its key "value" */
static void obs_start(struct record *r, struct jw *w, enum metric m,
		      uint64_t time_ns)
{
	r->seen |= M_BIT(m);
	jw_init(w, r->out);
	/* as obs_head() left it: four keys at depth 1, "time" the last */
	jw_resume(w, r->head[m], r->head_len[m], 4, "time");
	obs_time(w, time_ns, r->time_base);
}

int record_init(struct record *r, uint32_t optional, const char *host,
		uint64_t time_base, uint32_t cpus, FILE *out)
{
	uint32_t metrics = M_DEFAULT | optional;
	int m;

	memset(r, 0, sizeof(*r));
	r->metrics = metrics;
	r->host = host;
	r->time_base = time_base;
	r->cpus = cpus;
	r->out = out;
	if (sample_alloc(&r->base, cpus) || sample_alloc(&r->prev, cpus))
		return -1;
	for (m = 0; m < M_NR; m++) {
		/* a queue's line has labels: written whole each time */
		if (!(metrics & M_BIT(m)) || m >= M_QUEUE_RX_PACKETS)
			continue;
		r->head[m] = obs_head_text(host, m, &r->head_len[m]);
		if (!r->head[m])
			return -1;
		if (!metric_per_cpu(m) || m == M_CPU_UTIL)
			continue;
		r->cpu_last[m] = calloc(cpus ? cpus : 1, sizeof(uint64_t));
		if (!r->cpu_last[m])
			return -1;
	}
	return 0;
}

void record_free(struct record *r)
{
	int m;

	free(r->base.cpu);
	free(r->prev.cpu);
	for (m = 0; m < M_NR; m++) {
		free(r->head[m]);
		free(r->cpu_last[m]);
	}
	free(r->qbase);
	free(r->qlast);
	free(r->qhave);
	free(r->qseen);
	free(r->qmap);
	free(r->qifindex);
}

static void obs_end(struct record *r, struct jw *w)
{
	jw_obj_end(w);
	fputc('\n', r->out);
	if (w->error)
		r->bad_output = true;
}

/* b - a for a cumulative counter; one that went backwards counts 0 */
static uint64_t counter_delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

/* the same, from one sample to the next: a decrease is counted in @back */
static uint64_t step_delta(struct record *r, struct back *back, uint64_t a,
			   uint64_t b)
{
	if (b < a) {
		r->decreases++;
		back->n++;
		if (a - b > back->max)
			back->max = a - b;
	}
	return counter_delta(a, b);
}

static const char *const cpu_field_names[T_NR] = {
	"user", "nice", "system", "idle+iowait", "iowait", "irq", "softirq",
	"steal", "guest", "guest_nice",
};

int record_print_decreases(FILE *f, const struct record *r)
{
	const char *sep = "";
	int i;

	if (!r->decreases)
		return 0;
	fputs("# ksft-perfmon: counter decreases, clamped (count, largest step back):", f);
	for (i = 0; i < T_NR; i++) {
		if (!r->cpu_back[i].n)
			continue;
		fprintf(f, "%s cpu %s %llu (%llu ns)", sep, cpu_field_names[i],
			r->cpu_back[i].n,
			(unsigned long long)r->cpu_back[i].max);
		sep = ",";
	}
	for (i = 0; i < KPM_DEV_NR_STATS; i++) {
		if (!r->nic_back[i].n)
			continue;
		fprintf(f, "%s nic %s %llu (%llu)", sep, kpm_dev_stat_names[i],
			r->nic_back[i].n,
			(unsigned long long)r->nic_back[i].max);
		sep = ",";
	}
	return fputc('\n', f) == EOF ? -1 : 0;
}

/* a total since the start that is lower than the last one stays there */
static uint64_t never_back(uint64_t *last, uint64_t now)
{
	if (now > *last)
		*last = now;
	return *last;
}

/* CPU time (cpu.time.*, in ns) or a count of cpu-net from @base to @now */
static uint64_t cpu_count(enum metric m, const struct cpu_stats *base,
			  const struct cpu_stats *now)
{
	switch (m) {
	case M_CPU_USR:
		return counter_delta(base->t[T_USER] + base->t[T_NICE],
				     now->t[T_USER] + now->t[T_NICE]);
	case M_CPU_SYS:
		return counter_delta(base->t[T_SYSTEM], now->t[T_SYSTEM]);
	case M_CPU_SIRQ:
		return counter_delta(base->t[T_SOFTIRQ], now->t[T_SOFTIRQ]);
	default:
		return counter_delta(base->net[m - M_SOFTNET_PROCESSED],
				     now->net[m - M_SOFTNET_PROCESSED]);
	}
}

/*
 * Time spent (cpu.time.*, in seconds) or a count of cpu-net since the
 * first sample, per CPU; null for a CPU that is offline. A CPU's count
 * never goes back in the output, even when its counter does (the kernel
 * extends cpu-net's to 64 bits: they do not), or when it was offline
 * at the first sample and counts from 0.
 */
static void emit_cpu_count(struct record *r, enum metric m,
			   const struct sample *smp, uint32_t cpus)
{
	struct jw w;
	uint32_t c;
	uint64_t v;

	obs_start(r, &w, m, smp->time);
	jw_arr_start(&w);
	for (c = 0; c < cpus; c++) {
		const struct cpu_stats *now = &smp->cpu[c];
		const struct cpu_stats *base = &r->base.cpu[c];

		if (!now->present || !now->online || !base->present) {
			jw_null(&w);
			continue;
		}
		v = never_back(&r->cpu_last[m][c], cpu_count(m, base, now));
		/* a time: the double nearest ns / 1e9, from the digits of ns */
		if (m >= M_SOFTNET_PROCESSED)
			jw_uint(&w, v);
		else if (v < 1000000000000000ULL)
			jw_decimal(&w, v, -9);
		else
			jw_double(&w, (double)v / NSEC_PER_SEC);
	}
	jw_arr_end(&w);
	obs_end(r, &w);
}

static void emit_cpu_util(struct record *r, const struct sample *smp,
			  uint32_t cpus)
{
	static const int busy_fields[] = { T_USER, T_NICE, T_SYSTEM, T_IRQ,
					   T_SOFTIRQ, T_STEAL };
	struct jw w;
	uint32_t c;
	size_t i;

	obs_start(r, &w, M_CPU_UTIL, smp->time);
	jw_arr_start(&w);
	for (c = 0; c < cpus; c++) {
		const struct cpu_stats *now = &smp->cpu[c];
		const struct cpu_stats *prev = &r->prev.cpu[c];
		uint64_t busy = 0, idle;
		double util;

		if (!now->present || !now->online || !prev->present ||
		    !prev->online) {
			jw_null(&w);
			continue;
		}
		/*
		 * Over user, nice, system, idle, iowait, irq, softirq, steal.
		 * Idle and iowait as one sum: a sleep moves from one to the
		 * other when its task's iowait state changes, which is why
		 * iowait alone can go backwards.
		 */
		for (i = 0; i < sizeof(busy_fields) / sizeof(busy_fields[0]); i++)
			busy += step_delta(r, &r->cpu_back[busy_fields[i]],
					   prev->t[busy_fields[i]],
					   now->t[busy_fields[i]]);
		idle = step_delta(r, &r->cpu_back[T_IDLE],
				  prev->t[T_IDLE] + prev->t[T_IOWAIT],
				  now->t[T_IDLE] + now->t[T_IOWAIT]);
		if (!(busy + idle)) {
			jw_null(&w);
			continue;
		}
		util = 100.0 * (double)busy / (double)(busy + idle);
		jw_round(&w, util, 4);
	}
	jw_arr_end(&w);
	obs_end(r, &w);
}

/*
 * The time of the sum of the netdevs' counters: the mean of the times
 * they were read at, each a little after the one before; the sample's
 * (its CPUs') when none has counters.
 */
static uint64_t nic_time(const struct sample *smp)
{
	uint64_t first = 0, off = 0;
	unsigned int i, n = 0;

	for (i = 0; i < smp->ndevs; i++) {
		if (smp->dev[i].gone)
			continue;
		if (!n++)
			first = smp->dev[i].time;
		else
			off += smp->dev[i].time - first;
	}
	return n ? first + off / n : smp->time;
}

static void emit_nic(struct record *r, enum metric m, const struct sample *smp)
{
	int stat = nic_stat[m];
	uint64_t total = 0;
	unsigned int i;
	struct jw w;

	/* a netdev that went away keeps counting what it had counted */
	for (i = 0; i < smp->ndevs && i < r->base.ndevs; i++) {
		const struct dev_stats *now = &smp->dev[i];
		const struct dev_stats *base = &r->base.dev[i];

		if (base->gone)
			continue;
		if (!now->gone) {
			if (i < r->prev.ndevs && !r->prev.dev[i].gone)
				step_delta(r, &r->nic_back[stat],
					   r->prev.dev[i].v[stat], now->v[stat]);
			never_back(&r->nic_last[i][stat],
				   counter_delta(base->v[stat], now->v[stat]));
		}
		total += r->nic_last[i][stat];
	}
	obs_start(r, &w, m, nic_time(smp));
	jw_uint(&w, total);
	obs_end(r, &w);
}

/* a queue's line up to its labels of netdev @d: host and ifindex */
static void queue_obs_start(struct record *r, struct jw *w,
			    const struct sample *smp, uint32_t d)
{
	jw_init(w, r->out);
	fputs("# ktap-metric-json: ", r->out);
	jw_obj_start(w);
	jw_key(w, "host");
	jw_str(w, r->host);
	jw_key(w, "ifindex");
	jw_uint(w, smp->dev[d].ifindex);
}

/* after its other labels, queue @q's label, its shape and time */
static void queue_obs_time(struct record *r, struct jw *w, uint64_t time_ns,
			   uint32_t q)
{
	jw_key(w, "queue");
	jw_uint(w, q);
	jw_key(w, "shape");
	jw_str(w, "scalar");
	jw_key(w, "time");
	obs_time(w, time_ns, r->time_base);
}

/*
 * Queue metric @m of queue @q of netdev @d (struct dev_qstats @qs): the
 * counter since the queue was first seen with it, a scalar labelled with
 * the netdev's ifindex and the queue's id, at the time of their read.
 */
static void emit_queue(struct record *r, const struct sample *smp,
		       uint32_t d, const struct dev_qstats *qs, int m,
		       uint32_t q)
{
	int qm = m - M_QUEUE_RX_PACKETS;
	uint64_t v = (queue_metric[qm].rx ? qs->rx : qs->tx)[q].v[queue_metric[qm].stat];
	size_t i = ((size_t)d * M_QUEUE_NR + qm) * r->nqueues + q;
	struct jw w;

	if (v == Q_UNSET)
		return;
	if (!r->qhave[i]) {
		r->qbase[i] = v;
		r->qhave[i] = true;
	}
	r->seen |= M_BIT(m);
	queue_obs_start(r, &w, smp, d);
	jw_key(&w, "name");
	jw_str(&w, metric_names[m]);
	queue_obs_time(r, &w, qs->time, q);
	jw_uint(&w, never_back(&r->qlast[i], counter_delta(r->qbase[i], v)));
	obs_end(r, &w);
}

/*
 * Link metric @m of the queues of netdev @d (struct dev_qstats @qs): the
 * CPU of each queue's IRQ, a scalar labelled with the netdev's ifindex,
 * the queue's id, its NAPI instance, the IRQ and the map's version; none
 * for a queue whose IRQ is not on one CPU. At the time of the netdev's
 * queue statistics, read in the same hold of their lock, or when there
 * are none of this sample's, the sample's.
 */
static void emit_links(struct record *r, const struct sample *smp,
		       uint32_t d, const struct dev_qstats *qs, int m)
{
	bool rx = queue_metric[m - M_QUEUE_RX_PACKETS].rx;
	const struct queue_stats *l = rx ? qs->rx : qs->tx;
	uint64_t t = qs->read && !qs->over_budget ? qs->time : smp->time;
	struct jw w;
	uint32_t q;

	for (q = 0; q < r->nqueues; q++) {
		if (l[q].link.cpu == Q_NO_LINK)
			continue;
		r->seen |= M_BIT(m);
		queue_obs_start(r, &w, smp, d);
		jw_key(&w, "irq");
		jw_uint(&w, l[q].link.irq);
		jw_key(&w, "map_version");
		jw_uint(&w, qs->map_version);
		jw_key(&w, "name");
		jw_str(&w, metric_names[m]);
		jw_key(&w, "napi_id");
		jw_uint(&w, l[q].link.napi_id);
		queue_obs_time(r, &w, t, q);
		jw_uint(&w, l[q].link.cpu);
		obs_end(r, &w);
	}
}

/*
 * The queue metrics of a sample: of each netdev whose queue statistics
 * were read for it (not those of a read skipped for its lock or the read
 * budget: they are an older read's, said with it), each queue it has, by
 * metric; and of each netdev whose map, so read, is not the one said
 * last, its links.
 */
static void emit_queues(struct record *r, const struct sample *smp)
{
	uint32_t d, q, nq;
	int m;

	for (d = 0; d < r->qdevs && d < smp->qdevs; d++) {
		const struct dev_qstats *qs = &smp->q[d];

		/* a skipped read's links are older than the sample's time */
		if (qs->mapped && !qs->skipped && !qs->map_skipped &&
		    qs->map_version != r->qmap[d]) {
			r->qmap[d] = qs->map_version;
			for (m = M_QUEUE_RX_CPU; m <= M_QUEUE_TX_CPU; m++)
				if (r->metrics & M_BIT(m))
					emit_links(r, smp, d, qs, m);
		}
		if (!qs->read || qs->skipped || qs->over_budget)
			continue;
		r->qseen[d] = true;
		for (m = M_QUEUE_RX_PACKETS; m < M_NR; m++) {
			if (!(r->metrics & M_BIT(m)) ||
			    queue_metric[m - M_QUEUE_RX_PACKETS].stat < 0)
				continue;
			nq = queue_metric[m - M_QUEUE_RX_PACKETS].rx ?
			     qs->rx_queues : qs->tx_queues;
			for (q = 0; q < nq && q < r->nqueues; q++)
				emit_queue(r, smp, d, qs, m, q);
		}
	}
}

void record_sample(struct drain *d, const struct sample *smp)
{
	record_add(d->arg, smp, d->s->ndevs);
}

void record_add(struct record *r, const struct sample *smp, bool nics)
{
	uint32_t cpus = r->cpus;
	/*
	 * the netdevs' read of the sample before is one said already: a
	 * sample with netdevs read less often than its CPUs has none of
	 * its own (0: a sample that does not say)
	 */
	bool devs = !r->have_base || !smp->dev_read ||
		    smp->dev_read != r->prev.dev_read;
	int m;

	if (!r->have_base) {
		sample_copy(&r->base, smp, cpus);
		r->have_base = true;
	}
	for (m = M_CPU_USR; m <= M_CPU_SIRQ; m++)
		emit_cpu_count(r, m, smp, cpus);
	if (smp->seq != r->base.seq)
		emit_cpu_util(r, smp, cpus);
	if (nics && devs)
		for (m = M_NIC_RX_DROPPED; m <= M_NIC_TX_DROPPED; m++)
			emit_nic(r, m, smp);
	for (m = M_FIRST_OPTIONAL; m < M_QUEUE_RX_PACKETS; m++)
		if (r->metrics & M_BIT(m))
			emit_cpu_count(r, m, smp, cpus);
	if (r->qhave && smp->q && devs)
		emit_queues(r, smp);
	sample_copy(&r->prev, smp, cpus);
}

int record_init_queues(struct record *r, const struct session *s)
{
	size_t n = (size_t)s->ndevs * M_QUEUE_NR * s->queues;

	if (!(r->metrics & M_QUEUE) || !n)
		return 0;
	r->qdevs = s->ndevs;
	r->nqueues = s->queues;
	r->qbase = calloc(n, sizeof(*r->qbase));
	r->qlast = calloc(n, sizeof(*r->qlast));
	r->qhave = calloc(n, sizeof(*r->qhave));
	r->qseen = calloc(s->ndevs, sizeof(*r->qseen));
	r->qmap = calloc(s->ndevs, sizeof(*r->qmap));
	r->qifindex = calloc(s->ndevs, sizeof(*r->qifindex));
	if (!r->qbase || !r->qlast || !r->qhave || !r->qseen || !r->qmap ||
	    !r->qifindex)
		return -1;
	memcpy(r->qifindex, s->ifindex, s->ndevs * sizeof(*r->qifindex));
	return 0;
}
