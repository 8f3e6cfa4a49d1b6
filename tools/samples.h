/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Samples of the ksft_perfmon family: reassembling them from sample-get
 * messages, and turning them into the KTAP metric lines of
 * Documentation/metric-format.rst. No I/O on sockets here: the tool, its
 * tests and the fuzzer feed it messages.
 */
#ifndef KPM_SAMPLES_H
#define KPM_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/ksft_perfmon.h>
#include <linux/netlink.h>

#include "json.h"
#include "nl.h"

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

/* what session-get reports of a session */
struct session {
	uint32_t id;
	uint64_t interval;
	uint32_t ring_size;
	uint32_t cpus;
	uint32_t sample_size;
	uint64_t samples;
	uint64_t lost;
	uint64_t cost;
	uint64_t missed;
	bool cpu_net;	/* its samples carry the CPUs' network counts */
	uint32_t queues;	/* queues of each direction a netdev's hold */
	uint64_t qstats_skipped;
	uint32_t ndevs;
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX];
};

/* The CPU times of a sample, in the order of their attributes. */
enum { T_USER, T_NICE, T_SYSTEM, T_IDLE, T_IOWAIT, T_IRQ, T_SOFTIRQ, T_STEAL,
       T_GUEST, T_GUEST_NICE, T_NR };

/* A CPU's network counts (cpu-net), in the order of their attributes. */
enum { N_PROCESSED, N_DROPPED, N_SQUEEZED, N_RPS, N_NET_RX, N_NET_TX, N_NR };

#define DEV_STAT(name) (KSFT_PERFMON_A_DEV_STATS_ ## name - \
			KSFT_PERFMON_A_DEV_STATS_RX_PACKETS)

struct cpu_stats {
	bool present;	/* the sample carried this CPU */
	bool online;
	uint64_t t[T_NR];
	uint64_t net[N_NR];	/* 0 unless the session has cpu-net */
};

struct dev_stats {
	bool present;
	bool gone;
	uint32_t ifindex;
	uint64_t time;	/* when its counters were read; 0 when gone */
	uint64_t v[KPM_DEV_NR_STATS];
};

/*
 * Queue statistics (qstats): the counters of a netdev's base statistics
 * or of one of its queues, in the order of their attributes; Q_UNSET
 * where the driver reports none.
 */
#define Q_NR_STATS	KPM_QSTAT_NR
#define Q_STAT(name)	(KSFT_PERFMON_A_QSTATS_ ## name - \
			 KSFT_PERFMON_A_QSTATS_RX_PACKETS)
#define Q_UNSET		UINT64_MAX

/*
 * A queue's link in its netdev's map: its NAPI instance, that one's IRQ,
 * and the CPU the IRQ goes to; Q_NO_LINK where it has none.
 */
struct queue_link {
	uint32_t napi_id, irq, cpu;
};

#define Q_NO_LINK	UINT32_MAX
#define Q_NO_LINKS	((struct queue_link){ Q_NO_LINK, Q_NO_LINK, Q_NO_LINK })

/* a queue's counters, and its link */
struct queue_stats {
	uint64_t v[Q_NR_STATS];
	struct queue_link link;
};

/* a netdev's queue statistics in a sample of a session with queues */
struct dev_qstats {
	bool read;		/* the sample has them */
	bool skipped;		/* its read was skipped: they are older */
	bool over_budget;	/* skipped too: no room in the read budget */
	uint64_t time;		/* when they were read, with read */
	bool mapped;		/* the sample has its map: the queues' links */
	bool map_skipped;	/* its read was skipped: the map is older */
	uint32_t map_version;
	uint32_t rx_queues;	/* the netdev's queues, of which the sample */
	uint32_t tx_queues;	/* has the first session.queues */
	struct queue_stats base;
	struct queue_stats *rx;	/* [session.queues] */
	struct queue_stats *tx;
};

struct sample {
	uint64_t seq;
	uint64_t time;	/* of its CPUs; its netdevs have their own */
	uint64_t cost;
	uint64_t delay;
	struct cpu_stats *cpu;	/* [session.cpus] */
	unsigned int ndevs;
	struct dev_stats dev[KSFT_PERFMON_DEVS_MAX];
	/* with queues, of each netdev; NULL without */
	struct dev_qstats *q;	/* [qdevs] */
	uint32_t qdevs;		/* the session's netdevs */
	uint32_t nqueues;	/* session.queues */
};

/* a zeroed sample with room for @cpus CPUs; 0, or -1 when out of memory */
int sample_alloc(struct sample *smp, uint32_t cpus);
/*
 * room in @smp, allocated, for the queue statistics of the netdevs of
 * session @s, if it has queues; 0, or -1 when out of memory
 */
int sample_alloc_queues(struct sample *smp, const struct session *s);
void sample_free(struct sample *smp);
/* @src into @dst, which has room for @cpus CPUs and as many queues */
void sample_copy(struct sample *dst, const struct sample *src, uint32_t cpus);

struct drain;
typedef void (*sample_fn)(struct drain *d, const struct sample *smp);

/* Reassembles samples from sample-get messages and hands them on. */
struct drain {
	const struct session *s;
	uint64_t cursor;	/* next seq wanted */
	uint64_t lost;		/* gaps in seq */
	bool have;		/* cur holds a sample being assembled */
	/*
	 * cur holds the sample handed on last in this dump, which the next
	 * one may name as its base-seq (changed-only)
	 */
	bool based;
	bool changes;		/* cur is a sample of changes on its base */
	uint32_t next_cpu;	/* where the next part of cur must start */
	uint32_t next_id;	/* the lowest CPU id cur may report next */
	uint32_t next_qdev;	/* the netdev whose qstats come next */
	struct sample cur;
	sample_fn fn;
	void *arg;
	unsigned long long samples;
	char error[128];	/* why drain_msg() failed */
};

/* 0, or -1 when out of memory */
int drain_init(struct drain *d, const struct session *s, sample_fn fn,
	       void *arg);
void drain_free(struct drain *d);
/*
 * Take one sample-get message: one part of a sample. A sample is handed
 * on with its last part. A sample with a base-seq (a dump asked for with
 * changed-only) has what it leaves out from the sample handed on before
 * it, which must be that one. 0, or -1 with d->error set when the message
 * is malformed or does not continue the sample being assembled. After an
 * error the drain has no base, but may hold the part of a sample it had:
 * record stops there, and a caller that goes on clears d->have first.
 */
int drain_msg(struct drain *d, const struct nlmsghdr *nlh);
/* At the end of a dump: 0, or -1 with d->error set when it ended within a
 * sample.
 */
int drain_end(struct drain *d);

/* ---- the compatibility set (Documentation/metric-format.rst) ---------- */

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
