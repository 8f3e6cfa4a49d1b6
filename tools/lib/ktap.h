/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Samples into the KTAP metric lines of Documentation/metric-format.rst:
 * the compatibility set and the metrics record --metrics adds, their
 * policy lines, and the observations of each sample (struct record).
 */
#ifndef KPM_KTAP_H
#define KPM_KTAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "samples.h"

enum metric {
	M_CPU_USR, M_CPU_SYS, M_CPU_SIRQ, M_CPU_UTIL,
	M_NIC_RX_DROPPED, M_NIC_RX_MISSED, M_NIC_TX_DROPPED,
	/* opt-in (record --metrics): a CPU's network counts, N_* order */
	M_SOFTNET_PROCESSED, M_SOFTNET_DROPPED, M_SOFTNET_SQUEEZED,
	M_SOFTNET_RPS, M_SOFTIRQ_NET_RX, M_SOFTIRQ_NET_TX,
	/* opt-in: a counter of each queue of each netdev */
	M_QUEUE_RX_PACKETS, M_QUEUE_RX_BYTES, M_QUEUE_RX_ALLOC_FAIL,
	M_QUEUE_RX_HW_DROPS, M_QUEUE_TX_PACKETS, M_QUEUE_TX_BYTES,
	M_QUEUE_TX_STOP,
	/* opt-in: the CPU of each queue's IRQ, from the netdev's map */
	M_QUEUE_RX_CPU, M_QUEUE_TX_CPU,
	M_NR,
};

#define M_FIRST_OPTIONAL	M_SOFTNET_PROCESSED
#define M_BIT(m)		(1U << (m))
/* the metrics record prints by default: the compatibility set */
#define M_DEFAULT		(M_BIT(M_FIRST_OPTIONAL) - 1)
#define M_CPU_NET		(M_BIT(M_QUEUE_RX_PACKETS) - \
				 M_BIT(M_SOFTNET_PROCESSED))
#define M_QUEUE			(M_BIT(M_NR) - M_BIT(M_QUEUE_RX_PACKETS))
#define M_QUEUE_NR		(M_NR - M_QUEUE_RX_PACKETS)

extern const char *const metric_names[M_NR];

struct record {
	uint32_t metrics;	/* M_BIT()s of the metrics it prints */
	uint32_t seen;		/* M_BIT()s of those it printed a line of */
	const char *host;
	uint64_t time_base;
	uint32_t cpus;
	FILE *out;		/* where the observations go */
	bool have_base;
	struct sample base;	/* the first sample: "since the start" */
	struct sample prev;	/* for cpu.utilization */
	/*
	 * what cpu.time.* and the counts of cpu-net said last, per CPU:
	 * they never go back; NULL for the other metrics
	 */
	uint64_t *cpu_last[M_NR];
	uint64_t nic_last[KSFT_PERFMON_DEVS_MAX][KPM_DEV_NR_STATS];
	/*
	 * Counters that went backwards from one sample to the next: in all,
	 * and per field, how often and by how much at most. cpu_back[T_IDLE]
	 * is idle + iowait, which utilization takes as one.
	 */
	unsigned long long decreases;
	struct back {
		unsigned long long n;
		uint64_t max;
	} cpu_back[T_NR], nic_back[KPM_DEV_NR_STATS];
	bool bad_output;
	/* each metric's lines up to the key "time", written once */
	char *head[M_NR];
	size_t head_len[M_NR];
	/*
	 * With queue metrics, of each netdev, metric and queue: the counter
	 * when the queue was first seen, and the total since then said last
	 */
	uint32_t qdevs, nqueues;
	uint64_t *qbase, *qlast;
	bool *qhave;
	/* of each netdev: whether a sample had its queue statistics */
	bool *qseen;
	/* of each netdev: the version of the map said last, 0 before one */
	uint32_t *qmap;
	uint32_t *qifindex;
};

/*
 * Observations of the compatibility set, and of the @optional metrics
 * (M_BIT()s from M_FIRST_OPTIONAL on; those of cpu-net need a session
 * that has it), go to @out. 0, or -1 when out of memory.
 */
int record_init(struct record *r, uint32_t optional, const char *host,
		uint64_t time_base, uint32_t cpus, FILE *out);
/*
 * With queue metrics, of the netdevs of session @s, which has queues. 0,
 * or -1 when out of memory.
 */
int record_init_queues(struct record *r, const struct session *s);
void record_free(struct record *r);
/* the observations of one sample; @nics: the session has netdevs */
void record_add(struct record *r, const struct sample *smp, bool nics);
/*
 * The diagnostic line of the counters that went back, by field, if any
 * did: "# ksft-perfmon: counter decreases, clamped: idle+iowait 2 (at most
 * 3000), ...". 0, or -1 if it could not be written.
 */
int record_print_decreases(FILE *f, const struct record *r);
/* record_add() as the sample_fn of a drain whose arg is a struct record */
void record_sample(struct drain *d, const struct sample *smp);
/*
 * The start of a ktap-metric-json line up to its "value" key, which the
 * caller writes and closes: time is seconds from @time_base to @time_ns
 * (CLOCK_MONOTONIC ns), rounded to microseconds.
 */
void obs_line_start(FILE *f, struct jw *w, const char *host,
		    const char *name, const char *shape, uint64_t time_ns,
		    uint64_t time_base);
/* The policy line of @m; 0, or -1 if it could not be written. */
int print_policy(FILE *f, enum metric m);

#endif
