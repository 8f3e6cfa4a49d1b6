// SPDX-License-Identifier: GPL-2.0
/*
 * Raw samples as JSON, as dump, record --raw and replay --raw print them:
 * every counter of a sample by the name the spec gives it, keys in
 * sort_keys order, one object a sample.
 */

#include <stdlib.h>
#include <string.h>

#include "nl-cmd.h"

/*
 * The keys of a netdev in dump: its counters, then "gone", "ifindex" and
 * "time"; dev_key_order lists them in sort_keys order (dev_keys_sort()).
 */
#define DEV_KEY_GONE	KPM_DEV_NR_STATS
#define DEV_KEY_IFINDEX	(KPM_DEV_NR_STATS + 1)
#define DEV_KEY_TIME	(KPM_DEV_NR_STATS + 2)
#define DEV_NR_KEYS	(KPM_DEV_NR_STATS + 3)
static int dev_key_order[DEV_NR_KEYS];

static const char *dev_key_name(int k)
{
	if (k == DEV_KEY_GONE)
		return "gone";
	if (k == DEV_KEY_IFINDEX)
		return "ifindex";
	if (k == DEV_KEY_TIME)
		return "time";
	return kpm_dev_stat_names[k];
}

static int cmp_dev_key(const void *a, const void *b)
{
	return strcmp(dev_key_name(*(const int *)a),
		      dev_key_name(*(const int *)b));
}

/* the keys of a netdev in sort_keys order, once */
static void dev_keys_sort(void)
{
	static bool sorted;
	int k;

	if (sorted)
		return;
	for (k = 0; k < DEV_NR_KEYS; k++)
		dev_key_order[k] = k;
	qsort(dev_key_order, DEV_NR_KEYS, sizeof(int), cmp_dev_key);
	sorted = true;
}

static int qstat_order[KPM_QSTAT_NR];

static int cmp_qstat(const void *a, const void *b)
{
	return strcmp(kpm_qstat_names[*(const int *)a],
		      kpm_qstat_names[*(const int *)b]);
}

/* the counters of @qs that the driver reports, by name, in sort_keys order */
static void queue_stats_json(struct jw *w, const struct queue_stats *qs)
{
	static bool sorted;
	int i;

	if (!sorted) {
		for (i = 0; i < KPM_QSTAT_NR; i++)
			qstat_order[i] = i;
		qsort(qstat_order, KPM_QSTAT_NR, sizeof(int), cmp_qstat);
		sorted = true;
	}
	jw_obj_start(w);
	for (i = 0; i < KPM_QSTAT_NR; i++) {
		int k = qstat_order[i];

		if (qs->v[k] == Q_UNSET)
			continue;
		jw_key(w, kpm_qstat_names[k]);
		jw_uint(w, qs->v[k]);
	}
	jw_obj_end(w);
}

/* the statistics of the queues of one direction: of @nq, the first @max */
static void queues_json(struct jw *w, const struct queue_stats *qs,
			uint32_t nq, uint32_t max)
{
	uint32_t q;

	jw_arr_start(w);
	for (q = 0; q < nq && q < max; q++)
		queue_stats_json(w, &qs[q]);
	jw_arr_end(w);
}

/* the queues of one direction that have a link, with it */
static void queue_links_json(struct jw *w, const struct queue_stats *qs,
			     uint32_t nq)
{
	uint32_t q;

	jw_arr_start(w);
	for (q = 0; q < nq; q++) {
		if (qs[q].link.napi_id == Q_NO_LINK)
			continue;
		jw_obj_start(w);
		if (qs[q].link.cpu != Q_NO_LINK) {
			jw_key(w, "cpu");
			jw_uint(w, qs[q].link.cpu);
		}
		if (qs[q].link.irq != Q_NO_LINK) {
			jw_key(w, "irq");
			jw_uint(w, qs[q].link.irq);
		}
		jw_key(w, "napi_id");
		jw_uint(w, qs[q].link.napi_id);
		jw_key(w, "queue");
		jw_uint(w, q);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/*
 * The queue statistics of each netdev of @smp: with a read's, its base
 * statistics, and those of its queues the sample has; with its map, the
 * map's version and the queues linked to a NAPI instance.
 */
static void qstats_json(struct jw *w, const struct session *s,
			const struct sample *smp)
{
	uint32_t d;

	jw_arr_start(w);
	for (d = 0; d < s->ndevs; d++) {
		const struct dev_qstats *qs = &smp->q[d];

		jw_obj_start(w);
		if (qs->read) {
			jw_key(w, "base");
			queue_stats_json(w, &qs->base);
		}
		jw_key(w, "ifindex");
		jw_uint(w, smp->dev[d].ifindex);
		if (qs->mapped) {
			jw_key(w, "map");
			jw_obj_start(w);
			jw_key(w, "rx");
			queue_links_json(w, qs->rx, s->queues);
			jw_key(w, "tx");
			queue_links_json(w, qs->tx, s->queues);
			jw_key(w, "version");
			jw_uint(w, qs->map_version);
			jw_obj_end(w);
		}
		if (qs->map_skipped) {
			jw_key(w, "map_skipped");
			jw_bool(w, true);
		}
		jw_key(w, "over_budget");
		jw_bool(w, qs->over_budget);
		jw_key(w, "read");
		jw_bool(w, qs->read);
		if (qs->read) {
			jw_key(w, "rx");
			queues_json(w, qs->rx, qs->rx_queues, s->queues);
			jw_key(w, "rx_queues");
			jw_uint(w, qs->rx_queues);
		}
		jw_key(w, "skipped");
		jw_bool(w, qs->skipped);
		if (qs->read) {
			jw_key(w, "time");
			jw_uint(w, qs->time);
			jw_key(w, "tx");
			queues_json(w, qs->tx, qs->tx_queues, s->queues);
			jw_key(w, "tx_queues");
			jw_uint(w, qs->tx_queues);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* the keys of a CPU in dump, in sort_keys order, and where each value is */
enum { CPU_TIME, CPU_ONLINE, CPU_NET };

static const struct {
	const char *key;
	int of;		/* CPU_TIME: t[@i]; CPU_NET: net[@i], with cpu-net */
	int i;
} cpu_keys[] = {
	{ "guest", CPU_TIME, T_GUEST },
	{ "guest_nice", CPU_TIME, T_GUEST_NICE },
	{ "idle", CPU_TIME, T_IDLE },
	{ "iowait", CPU_TIME, T_IOWAIT },
	{ "irq", CPU_TIME, T_IRQ },
	{ "nice", CPU_TIME, T_NICE },
	{ "online", CPU_ONLINE, 0 },
	{ "softirq", CPU_TIME, T_SOFTIRQ },
	{ "softirq_net_rx", CPU_NET, N_NET_RX },
	{ "softirq_net_tx", CPU_NET, N_NET_TX },
	{ "softnet_dropped", CPU_NET, N_DROPPED },
	{ "softnet_processed", CPU_NET, N_PROCESSED },
	{ "softnet_received_rps", CPU_NET, N_RPS },
	{ "softnet_time_squeeze", CPU_NET, N_SQUEEZED },
	{ "steal", CPU_TIME, T_STEAL },
	{ "system", CPU_TIME, T_SYSTEM },
	{ "user", CPU_TIME, T_USER },
};

/* a CPU of a sample of session @s: null when the sample has none */
static void cpu_json(struct jw *w, const struct session *s,
		     const struct cpu_stats *cs)
{
	size_t k;

	if (!cs->present) {
		jw_null(w);
		return;
	}
	jw_obj_start(w);
	for (k = 0; k < ARRAY_SIZE(cpu_keys); k++) {
		int i = cpu_keys[k].i;

		if (cpu_keys[k].of == CPU_NET && !s->cpu_net)
			continue;
		jw_key(w, cpu_keys[k].key);
		if (cpu_keys[k].of == CPU_ONLINE)
			jw_bool(w, cs->online);
		else
			jw_uint(w, cpu_keys[k].of == CPU_NET ? cs->net[i] :
				cs->t[i]);
	}
	jw_obj_end(w);
}

/* One raw sample of session @s as a JSON object, as dump prints it. */
void sample_json(struct jw *w, const struct session *s,
		 const struct sample *smp)
{
	uint32_t c;
	unsigned int i;

	dev_keys_sort();
	jw_obj_start(w);
	jw_key(w, "cost");
	jw_uint(w, smp->cost);
	jw_key(w, "cpus");
	jw_arr_start(w);
	for (c = 0; c < s->cpus; c++)
		cpu_json(w, s, &smp->cpu[c]);
	jw_arr_end(w);
	jw_key(w, "delay");
	jw_uint(w, smp->delay);
	if (s->ndevs) {
		jw_key(w, "dev_read");
		jw_uint(w, smp->dev_read);
	}
	jw_key(w, "devs");
	jw_arr_start(w);
	for (i = 0; i < smp->ndevs; i++) {
		const struct dev_stats *ds = &smp->dev[i];
		int n;

		jw_obj_start(w);
		for (n = 0; n < DEV_NR_KEYS; n++) {
			int k = dev_key_order[n];

			if (k == DEV_KEY_GONE) {
				jw_key(w, "gone");
				jw_bool(w, ds->gone);
			} else if (k == DEV_KEY_IFINDEX) {
				jw_key(w, "ifindex");
				jw_uint(w, ds->ifindex);
			} else if (k == DEV_KEY_TIME) {
				if (!ds->gone) {
					jw_key(w, "time");
					jw_uint(w, ds->time);
				}
			} else if (!ds->gone) {
				jw_key(w, kpm_dev_stat_names[k]);
				jw_uint(w, ds->v[k]);
			}
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (smp->q) {
		jw_key(w, "qstats");
		qstats_json(w, s, smp);
	}
	jw_key(w, "seq");
	jw_uint(w, smp->seq);
	jw_key(w, "session");
	jw_uint(w, s->id);
	jw_key(w, "time");
	jw_uint(w, smp->time);
	jw_obj_end(w);
}

/* @smp as a line of its own on @f */
void sample_json_line(FILE *f, const struct session *s,
		      const struct sample *smp)
{
	struct jw w;

	jw_init(&w, f);
	sample_json(&w, s, smp);
	fputc('\n', f);
	if (w.error)
		die("internal error: a sample as JSON");
}
