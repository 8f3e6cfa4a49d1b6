// SPDX-License-Identifier: GPL-2.0
/*
 * The layout of record's spool (tools/nl/spool.h) in this build of the
 * tools, as one JSON object, so that host/replay_test.py writes spools
 * byte by byte, bad ones too, with no kernel to record them: each
 * struct's size and the offset of each field the test sets.
 */

#include <stddef.h>
#include <stdio.h>

#include "spool.h"

#define FIELD(type, f)	printf("\"%s\":%zu,", #f, offsetof(type, f))
#define SIZE(type)	printf("\"size\":%zu}", sizeof(type))

int main(void)
{
	/* what the head's sizes[] must say */
	printf("{\"sizes\":[%zu,%zu,%zu,%zu,%zu],", sizeof(struct session),
	       sizeof(struct cpu_stats), sizeof(struct dev_stats),
	       sizeof(struct dev_qstats), sizeof(struct queue_stats));
	printf("\"head\":{");
	FIELD(struct spool_head, sizes);
	FIELD(struct spool_head, host_len);
	FIELD(struct spool_head, metrics);
	FIELD(struct spool_head, time_base);
	FIELD(struct spool_head, s);
	SIZE(struct spool_head);
	printf(",\"session\":{");
	FIELD(struct session, id);
	FIELD(struct session, interval);
	FIELD(struct session, cpus);
	FIELD(struct session, cpu_net);
	FIELD(struct session, queues);
	FIELD(struct session, ndevs);
	FIELD(struct session, ifindex);
	SIZE(struct session);
	/* a sample's head: what comes before its cpu pointer */
	printf(",\"sample\":{");
	FIELD(struct sample, seq);
	FIELD(struct sample, time);
	printf("\"size\":%zu,\"ndevs_size\":%zu}", offsetof(struct sample, cpu),
	       sizeof(((struct sample *)0)->ndevs));
	printf(",\"cpu_stats\":{");
	FIELD(struct cpu_stats, present);
	FIELD(struct cpu_stats, online);
	FIELD(struct cpu_stats, t);
	FIELD(struct cpu_stats, net);
	SIZE(struct cpu_stats);
	printf(",\"dev_stats\":{");
	FIELD(struct dev_stats, present);
	FIELD(struct dev_stats, gone);
	FIELD(struct dev_stats, ifindex);
	FIELD(struct dev_stats, time);
	FIELD(struct dev_stats, v);
	SIZE(struct dev_stats);
	/* a netdev's queue statistics: what comes before rx, then the queues */
	printf(",\"dev_qstats\":{");
	FIELD(struct dev_qstats, read);
	FIELD(struct dev_qstats, skipped);
	FIELD(struct dev_qstats, over_budget);
	FIELD(struct dev_qstats, time);
	FIELD(struct dev_qstats, mapped);
	FIELD(struct dev_qstats, map_skipped);
	FIELD(struct dev_qstats, rx_queues);
	FIELD(struct dev_qstats, tx_queues);
	printf("\"size\":%zu}", offsetof(struct dev_qstats, rx));
	printf(",\"queue_stats\":{\"size\":%zu}", sizeof(struct queue_stats));
	printf(",\"T_NR\":%d,\"N_NR\":%d,\"DEV_NR_STATS\":%d,\"M_CPU_NET\":%u,\"M_QUEUE\":%u}\n",
	       T_NR, N_NR, KPM_DEV_NR_STATS, (unsigned int)M_CPU_NET,
	       (unsigned int)M_QUEUE);
	return 0;
}
