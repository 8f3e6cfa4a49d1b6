/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sessions and samples of the ksft_perfmon family: decoding a session
 * from session-get's reply, and reassembling samples from sample-get
 * messages. No I/O on sockets here: the tool, its tests and the fuzzer
 * feed it messages. ktap.h turns the samples into metric lines.
 */
#ifndef KPM_SAMPLES_H
#define KPM_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/ksft_perfmon.h>
#include <linux/netlink.h>

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
	uint64_t dev_interval;	/* ns between reads of its netdevs */
	uint64_t dev_missed;	/* reads of them due and not taken */
	bool cpu_net;	/* its samples carry the CPUs' network counts */
	uint32_t queues;	/* queues of each direction a netdev's hold */
	uint64_t qstats_skipped;
	uint32_t ndevs;
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX];
};

/*
 * The session of session-get's reply, or of one message of its dump,
 * into @s; 0, or -EINVAL when the message is malformed: no id, an
 * attribute of the wrong size, more queues than a session may have.
 */
int session_parse(struct nlmsghdr *nlh, struct session *s);

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
	/* which read of its netdevs it has, from 1: each new one once */
	uint64_t dev_read;
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

#endif
