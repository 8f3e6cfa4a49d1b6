// SPDX-License-Identifier: GPL-2.0
/*
 * Samples of the ksft_perfmon family: reassembled from sample-get messages
 * and turned into the KTAP metric lines of Documentation/metric-format.rst.
 */

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include "json.h"
#include "samples.h"

int sample_alloc(struct sample *smp, uint32_t cpus)
{
	memset(smp, 0, sizeof(*smp));
	smp->cpu = calloc(cpus ? cpus : 1, sizeof(*smp->cpu));
	return smp->cpu ? 0 : -1;
}

int sample_alloc_queues(struct sample *smp, const struct session *s)
{
	struct queue_stats *qmem;
	uint32_t d, nq = s->queues;

	if (!nq || !s->ndevs)
		return 0;
	smp->q = calloc(s->ndevs, sizeof(*smp->q));
	qmem = calloc((size_t)s->ndevs * 2 * nq, sizeof(*qmem));
	if (!smp->q || !qmem) {
		free(qmem);
		return -1;
	}
	smp->qdevs = s->ndevs;
	smp->nqueues = nq;
	/* the rx array of the first netdev holds all of them, for free() */
	for (d = 0; d < s->ndevs; d++) {
		smp->q[d].rx = qmem + (size_t)d * 2 * nq;
		smp->q[d].tx = smp->q[d].rx + nq;
	}
	return 0;
}

void sample_free(struct sample *smp)
{
	free(smp->cpu);
	if (smp->q)
		free(smp->q[0].rx);
	free(smp->q);
	smp->cpu = NULL;
	smp->q = NULL;
}

void sample_copy(struct sample *dst, const struct sample *src, uint32_t cpus)
{
	struct dev_qstats *q = dst->q;
	struct cpu_stats *cpu = dst->cpu;
	uint32_t d, nq = src->nqueues;

	*dst = *src;
	dst->cpu = cpu;
	dst->q = q;
	memcpy(dst->cpu, src->cpu, cpus * sizeof(*cpu));
	/* a copy with no room for them, of a record's base, has none */
	for (d = 0; src->q && q && d < src->qdevs; d++) {
		struct queue_stats *rx = q[d].rx, *tx = q[d].tx;

		q[d] = src->q[d];
		q[d].rx = rx;
		q[d].tx = tx;
		memcpy(rx, src->q[d].rx, nq * sizeof(*rx));
		memcpy(tx, src->q[d].tx, nq * sizeof(*tx));
	}
}

static int __attribute__((format(printf, 2, 3)))
drain_error(struct drain *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->error, sizeof(d->error), fmt, ap);
	va_end(ap);
	/* cur may be part this sample, part the one before: no base */
	d->based = false;
	return -1;
}

/* the last part of cur came: hand the sample on */
static void drain_hand_on(struct drain *d)
{
	if (d->cur.seq > d->cursor)
		d->lost += d->cur.seq - d->cursor;
	d->cursor = d->cur.seq + 1;
	d->samples++;
	d->fn(d, &d->cur);
	d->have = false;
	d->based = true;
}

int drain_end(struct drain *d)
{
	/* a dump's first sample is whole: none names one of another dump */
	d->based = false;
	if (d->have)
		return drain_error(d, "the dump ended within sample %llu, before its last part",
				   (unsigned long long)d->cur.seq);
	return 0;
}

/*
 * The attributes of a message, walked once without a policy: a sample of
 * 64 CPUs has 700 of them, and nla_parse() with a policy a nest, through
 * libnl's calls for each attribute, cost more than the rest of the read.
 * What nla_parse() accepts is accepted: unknown types are skipped, the
 * last of an attribute given twice counts, bytes after the last whole
 * attribute are ignored.
 */
#define attr_for_each(a, head, len, rem)				\
	for (a = (head), rem = (len);					\
	     rem >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&	\
	     a->nla_len <= rem;						\
	     rem -= NLA_ALIGN(a->nla_len),				\
	     a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))

#define attr_for_each_nested(a, nest, rem)				\
	attr_for_each(a, (const struct nlattr *)((const char *)(nest) +	\
						 NLA_HDRLEN),		\
		      (nest)->nla_len - NLA_HDRLEN, rem)

static int attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

/* an NLA_UINT: 4 or 8 bytes; false for another length */
static bool attr_uint(const struct nlattr *a, uint64_t *v)
{
	uint32_t v32;

	if (attr_len(a) == 8) {
		memcpy(v, attr_data(a), 8);
		return true;
	}
	if (attr_len(a) != 4)
		return false;
	memcpy(&v32, attr_data(a), 4);
	*v = v32;
	return true;
}

/* an NLA_U32, as libnl's policy takes it: 4 bytes or more */
static bool attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (attr_len(a) < 4)
		return false;
	memcpy(v, attr_data(a), 4);
	return true;
}

/*
 * What a cpu or dev nest says: its counters (attributes @first to @last),
 * the bit of each that it gave, its u32 key (id, ifindex: attribute 1),
 * its flag (online, gone: attribute 2) and, of a dev nest, its time
 * (attribute @time, 0 for none). False for a malformed one.
 */
struct nest_vals {
	uint64_t v[KPM_DEV_NR_STATS];
	uint32_t given;
	uint32_t key;
	bool flag;
	uint64_t time;
};

static bool nest_parse(const struct nlattr *nest, int first, int last,
		       int time, struct nest_vals *nv)
{
	const struct nlattr *a;
	bool have_key = false;
	int rem, type;

	nv->given = 0;
	nv->flag = false;
	nv->time = 0;
	attr_for_each_nested(a, nest, rem) {
		type = a->nla_type & NLA_TYPE_MASK;
		if (type >= first && type <= last) {
			if (!attr_uint(a, &nv->v[type - first]))
				return false;
			nv->given |= 1U << (type - first);
		} else if (time && type == time) {
			if (!attr_uint(a, &nv->time))
				return false;
		} else if (type == 1) {
			if (!attr_u32(a, &nv->key))
				return false;
			have_key = true;
		} else if (type == 2) {
			nv->flag = true;
		}
	}
	return have_key;
}

_Static_assert(KSFT_PERFMON_A_CPU_STATS_ID == 1 &&
	       KSFT_PERFMON_A_CPU_STATS_ONLINE == 2 &&
	       KSFT_PERFMON_A_DEV_STATS_IFINDEX == 1 &&
	       KSFT_PERFMON_A_DEV_STATS_GONE == 2, "the key and the flag");
_Static_assert(KSFT_PERFMON_A_CPU_STATS_MAX - KSFT_PERFMON_A_CPU_STATS_USER <
	       KPM_DEV_NR_STATS &&
	       KSFT_PERFMON_A_DEV_STATS_RX_OTHERHOST_DROPPED -
	       KSFT_PERFMON_A_DEV_STATS_RX_PACKETS < KPM_DEV_NR_STATS &&
	       KPM_DEV_NR_STATS <= 32, "counters of a nest");
/* a cpu nest's counters: its times, then its network counts */
_Static_assert(KSFT_PERFMON_A_CPU_STATS_GUEST_NICE -
	       KSFT_PERFMON_A_CPU_STATS_USER + 1 == T_NR &&
	       KSFT_PERFMON_A_CPU_STATS_SOFTIRQ_NET_TX -
	       KSFT_PERFMON_A_CPU_STATS_USER + 1 == T_NR + N_NR,
	       "the counters of a cpu nest");

/*
 * A cpu nest: its counters replace those cur holds for the CPU, which are
 * 0 in a whole sample and the base's in one of changed-only. CPU ids
 * come in order, each once.
 */
static int parse_cpu(struct drain *d, const struct nlattr *nest,
		     uint32_t start, uint32_t end)
{
	struct nest_vals nv;
	struct cpu_stats *c;
	uint32_t id;
	int i;

	if (!nest_parse(nest, KSFT_PERFMON_A_CPU_STATS_USER,
			KSFT_PERFMON_A_CPU_STATS_MAX, 0, &nv))
		return drain_error(d, "malformed cpu-stats from the kernel");
	id = nv.key;
	if (id < start || id >= end)
		return drain_error(d, "kernel reports CPU %u in a part of CPUs %u to %u",
				   id, start, end);
	if (id < d->next_id)
		return drain_error(d, "kernel reports CPU %u after CPU %u",
				   id, d->next_id - 1);
	d->next_id = id + 1;
	c = &d->cur.cpu[id];
	c->present = true;
	c->online = nv.flag;
	for (i = 0; i < T_NR; i++)
		if (nv.given & (1U << i))
			c->t[i] = nv.v[i];
	for (i = 0; i < N_NR; i++)
		if (nv.given & (1U << (T_NR + i)))
			c->net[i] = nv.v[T_NR + i];
	return 0;
}

/*
 * A dev nest, the next of the session's netdevs: its counters replace
 * those cur holds for it, which are 0 in a whole sample and the base's in
 * one of changed-only (where the netdev must be the base's).
 */
static int parse_dev(struct drain *d, const struct nlattr *nest, bool based)
{
	struct nest_vals nv;
	struct dev_stats *ds;
	uint32_t ifindex;
	bool gone;
	int i;

	if (!nest_parse(nest, KSFT_PERFMON_A_DEV_STATS_RX_PACKETS,
			KSFT_PERFMON_A_DEV_STATS_RX_OTHERHOST_DROPPED,
			KSFT_PERFMON_A_DEV_STATS_TIME, &nv))
		return drain_error(d, "malformed dev-stats from the kernel");
	ifindex = nv.key;
	gone = nv.flag;
	if (d->cur.ndevs == KSFT_PERFMON_DEVS_MAX)
		return drain_error(d, "kernel reports more netdevs than a session has");
	ds = &d->cur.dev[d->cur.ndevs++];
	if (based && (ds->ifindex != ifindex || !ds->present))
		return drain_error(d, "kernel reports netdev %u where the base sample has %u",
				   ifindex, ds->ifindex);
	/*
	 * a netdev that was gone in the base has all its counters again,
	 * and one that is gone has none, as in a whole sample
	 */
	if (!based || ds->gone || gone)
		memset(ds->v, 0, sizeof(ds->v));
	ds->present = true;
	ds->ifindex = ifindex;
	ds->gone = gone;
	/*
	 * every dev nest with counters has its time, never the base's; a
	 * module without per-block times read it at the sample's
	 */
	ds->time = gone ? 0 : nv.time ? nv.time : d->cur.time;
	for (i = 0; i < KPM_DEV_NR_STATS; i++)
		if (nv.given & (1U << i))
			ds->v[i] = nv.v[i];
	return 0;
}

/* what a qstats or queue nest says */
struct qstats_vals {
	struct queue_stats qs;	/* Q_UNSET and Q_NO_LINK where not given */
	uint32_t ifindex, type, id, rx_queues, tx_queues, map_version;
	uint64_t time;
	bool have_ifindex, have_type, have_id, have_queues, have_map;
	bool have_time, skipped, over_budget, map_skipped;
};

static bool qstats_parse(const struct nlattr *nest, struct qstats_vals *qv)
{
	const struct nlattr *a;
	bool ok = true;
	int rem, type;

	memset(qv, 0, sizeof(*qv));
	memset(&qv->qs, 0xff, sizeof(qv->qs));
	attr_for_each_nested(a, nest, rem) {
		type = a->nla_type & NLA_TYPE_MASK;
		switch (type) {
		case KSFT_PERFMON_A_QSTATS_IFINDEX:
			ok &= qv->have_ifindex = attr_u32(a, &qv->ifindex);
			break;
		case KSFT_PERFMON_A_QSTATS_QUEUE_TYPE:
			ok &= qv->have_type = attr_u32(a, &qv->type);
			break;
		case KSFT_PERFMON_A_QSTATS_QUEUE_ID:
			ok &= qv->have_id = attr_u32(a, &qv->id);
			break;
		case KSFT_PERFMON_A_QSTATS_RX_QUEUES:
			ok &= qv->have_queues = attr_u32(a, &qv->rx_queues);
			break;
		case KSFT_PERFMON_A_QSTATS_TX_QUEUES:
			ok &= attr_u32(a, &qv->tx_queues);
			break;
		case KSFT_PERFMON_A_QSTATS_SKIPPED:
			qv->skipped = true;
			break;
		case KSFT_PERFMON_A_QSTATS_MAP_SKIPPED:
			qv->map_skipped = true;
			break;
		case KSFT_PERFMON_A_QSTATS_OVER_BUDGET:
			qv->over_budget = true;
			break;
		case KSFT_PERFMON_A_QSTATS_TIME:
			ok &= qv->have_time = attr_uint(a, &qv->time);
			break;
		case KSFT_PERFMON_A_QSTATS_MAP_VERSION:
			ok &= qv->have_map = attr_u32(a, &qv->map_version);
			break;
		case KSFT_PERFMON_A_QSTATS_NAPI_ID:
			ok &= attr_u32(a, &qv->qs.link.napi_id) &&
			      qv->qs.link.napi_id != Q_NO_LINK;
			break;
		case KSFT_PERFMON_A_QSTATS_IRQ:
			ok &= attr_u32(a, &qv->qs.link.irq);
			break;
		case KSFT_PERFMON_A_QSTATS_CPU:
			ok &= attr_u32(a, &qv->qs.link.cpu);
			break;
		default:
			if (type >= KSFT_PERFMON_A_QSTATS_RX_PACKETS &&
			    type <= KSFT_PERFMON_A_QSTATS_TX_WAKE)
				ok &= attr_uint(a, &qv->qs.v[type -
						KSFT_PERFMON_A_QSTATS_RX_PACKETS]);
		}
	}
	return ok && qv->have_ifindex;
}

/*
 * A qstats nest, of the next of the session's netdevs: whole. In a sample
 * of changes, the queues it had in the base keep their counters; those it
 * did not have start from nothing, as in a whole sample.
 */
static int parse_dev_qstats(struct drain *d, const struct nlattr *nest)
{
	uint32_t k = d->next_qdev, nq = d->s->queues, q;
	struct qstats_vals qv;
	struct dev_qstats *qs;
	bool was_read;

	if (!qstats_parse(nest, &qv))
		return drain_error(d, "malformed qstats from the kernel");
	if (!nq || k >= d->s->ndevs || k >= d->cur.ndevs ||
	    qv.ifindex != d->cur.dev[k].ifindex)
		return drain_error(d, "kernel reports the queue statistics of netdev %u out of turn",
				   qv.ifindex);
	d->next_qdev++;
	qs = &d->cur.q[k];
	was_read = d->changes && qs->read;
	for (q = was_read ? qs->rx_queues : 0; q < nq; q++)
		memset(qs->rx[q].v, 0xff, sizeof(qs->rx[q].v));
	for (q = was_read ? qs->tx_queues : 0; q < nq; q++)
		memset(qs->tx[q].v, 0xff, sizeof(qs->tx[q].v));
	/* a map that is not the base's is sent whole: its links start anew */
	if (!d->changes || !qs->mapped || !qv.have_map ||
	    qv.map_version != qs->map_version)
		for (q = 0; q < nq; q++)
			qs->rx[q].link = qs->tx[q].link = Q_NO_LINKS;
	qs->read = qv.have_queues;
	/* a module without per-block times read them at the sample's */
	qs->time = !qs->read ? 0 : qv.have_time ? qv.time : d->cur.time;
	qs->skipped = qv.skipped;
	qs->over_budget = qv.over_budget;
	qs->mapped = qv.have_map;
	qs->map_skipped = qv.map_skipped;
	qs->map_version = qv.map_version;
	qs->rx_queues = qv.rx_queues;
	qs->tx_queues = qv.tx_queues;
	qs->base = qv.qs;
	return 0;
}

/* a queue nest, of the netdev of the last qstats nest: whole */
static int parse_queue(struct drain *d, const struct nlattr *nest)
{
	struct queue_stats *t;
	struct qstats_vals qv;
	struct dev_qstats *qs;
	bool rx;

	if (!qstats_parse(nest, &qv) || !qv.have_type || !qv.have_id ||
	    qv.type > KSFT_PERFMON_QUEUE_TYPE_TX)
		return drain_error(d, "malformed queue from the kernel");
	if (!d->next_qdev ||
	    qv.ifindex != d->cur.dev[d->next_qdev - 1].ifindex)
		return drain_error(d, "kernel reports a queue of netdev %u out of turn",
				   qv.ifindex);
	qs = &d->cur.q[d->next_qdev - 1];
	rx = qv.type == KSFT_PERFMON_QUEUE_TYPE_RX;
	/* a queue with counters, or with a link of the netdev's map */
	if (qv.id >= d->s->queues ||
	    !((qs->read && qv.id < (rx ? qs->rx_queues : qs->tx_queues)) ||
	      (qs->mapped && qv.qs.link.napi_id != Q_NO_LINK)))
		return drain_error(d, "kernel reports queue %u of netdev %u, which it does not have",
				   qv.id, qv.ifindex);
	t = &(rx ? qs->rx : qs->tx)[qv.id];
	/* a queue of a map that did not change keeps its link */
	if (qv.qs.link.napi_id == Q_NO_LINK)
		qv.qs.link = t->link;
	*t = qv.qs;
	return 0;
}

/* what a part says of its sample, besides its CPUs and netdevs */
struct part {
	uint64_t seq, time, cost, delay, base;
	uint32_t start, end;
	bool have_seq, have_start, have_end, have_time, have_base, last;
};

static bool part_parse(const struct nlmsghdr *nlh, struct part *p)
{
	const struct nlattr *a;
	bool ok = true;
	int rem;

	memset(p, 0, sizeof(*p));
	attr_for_each(a, (const struct nlattr *)((const char *)nlmsg_data(nlh) +
						 GENL_HDRLEN),
		      (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, rem) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case KSFT_PERFMON_A_SAMPLE_SEQ:
			ok &= p->have_seq = attr_uint(a, &p->seq);
			break;
		case KSFT_PERFMON_A_SAMPLE_TIME:
			ok &= p->have_time = attr_uint(a, &p->time);
			break;
		case KSFT_PERFMON_A_SAMPLE_COST:
			ok &= attr_uint(a, &p->cost);
			break;
		case KSFT_PERFMON_A_SAMPLE_DELAY:
			ok &= attr_uint(a, &p->delay);
			break;
		case KSFT_PERFMON_A_SAMPLE_CPU_START:
			ok &= p->have_start = attr_u32(a, &p->start);
			break;
		case KSFT_PERFMON_A_SAMPLE_CPU_END:
			ok &= p->have_end = attr_u32(a, &p->end);
			break;
		case KSFT_PERFMON_A_SAMPLE_BASE_SEQ:
			ok &= p->have_base = attr_uint(a, &p->base);
			break;
		case KSFT_PERFMON_A_SAMPLE_LAST_PART:
			p->last = true;
			break;
		}
	}
	return ok && p->have_seq && p->have_start && p->have_end;
}

/* the first part of a sample: what it says of the whole sample */
static int sample_start(struct drain *d, const struct part *p)
{
	if (!p->have_time)
		return drain_error(d, "sample %llu begins with a part that is not its first",
				   (unsigned long long)p->seq);
	if (p->have_base && (!d->based || p->base != d->cur.seq))
		return drain_error(d, "sample %llu has the changes since sample %llu, which is not the one before it in the dump",
				   (unsigned long long)p->seq,
				   (unsigned long long)p->base);
	/* a whole sample starts from nothing; one of changes, from its base */
	if (!p->have_base) {
		memset(d->cur.cpu, 0, d->s->cpus * sizeof(*d->cur.cpu));
		memset(d->cur.dev, 0, sizeof(d->cur.dev));
	}
	d->changes = p->have_base;
	d->cur.ndevs = 0;
	d->next_id = 0;
	d->next_qdev = 0;
	d->cur.seq = p->seq;
	d->cur.time = p->time;
	d->cur.cost = p->cost;
	d->cur.delay = p->delay;
	d->next_cpu = 0;
	d->have = true;
	return 0;
}

int drain_msg(struct drain *d, const struct nlmsghdr *nlh)
{
	const struct nlattr *a;
	bool cpus = false;
	uint32_t start, end;
	struct part p;
	uint64_t seq;
	int rem;

	if (!genlmsg_valid_hdr((struct nlmsghdr *)nlh, 0) ||
	    !part_parse(nlh, &p))
		return drain_error(d, "malformed sample from the kernel");
	seq = p.seq;
	start = p.start;
	end = p.end;

	/* the parts of a sample come in order, its netdevs then its CPUs */
	if (d->have && d->cur.seq != seq)
		return drain_error(d, "sample %llu came before the last part of sample %llu",
				   (unsigned long long)seq,
				   (unsigned long long)d->cur.seq);
	if (!d->have && sample_start(d, &p))
		return -1;
	if (start != d->next_cpu || end < start || end > d->s->cpus)
		return drain_error(d, "sample %llu: a part of CPUs %u to %u after CPU %u of %u",
				   (unsigned long long)seq, start, end,
				   d->next_cpu, d->s->cpus);
	attr_for_each(a, (const struct nlattr *)((const char *)nlmsg_data(nlh) +
						 GENL_HDRLEN),
		      (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, rem) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type == KSFT_PERFMON_A_SAMPLE_CPU) {
			if (parse_cpu(d, a, start, end))
				return -1;
			cpus = true;
		}
		if ((type == KSFT_PERFMON_A_SAMPLE_DEV ||
		     type == KSFT_PERFMON_A_SAMPLE_QSTATS ||
		     type == KSFT_PERFMON_A_SAMPLE_QUEUE) && (start || cpus))
			return drain_error(d, "sample %llu: a netdev after its CPUs",
					   (unsigned long long)seq);
		if (type == KSFT_PERFMON_A_SAMPLE_DEV && d->next_qdev)
			return drain_error(d, "sample %llu: a netdev after the queue statistics",
					   (unsigned long long)seq);
		if (type == KSFT_PERFMON_A_SAMPLE_DEV &&
		    parse_dev(d, a, d->changes))
			return -1;
		if (type == KSFT_PERFMON_A_SAMPLE_QSTATS &&
		    parse_dev_qstats(d, a))
			return -1;
		if (type == KSFT_PERFMON_A_SAMPLE_QUEUE && parse_queue(d, a))
			return -1;
	}
	d->next_cpu = end;

	if (!p.last)
		return 0;
	if (end != d->s->cpus || d->cur.ndevs != d->s->ndevs)
		return drain_error(d, "sample %llu ends after CPU %u of %u and %u of %u netdevs",
				   (unsigned long long)seq, end, d->s->cpus,
				   d->cur.ndevs, d->s->ndevs);
	if (d->s->queues && d->next_qdev != d->s->ndevs)
		return drain_error(d, "sample %llu ends after the queue statistics of %u of %u netdevs",
				   (unsigned long long)seq, d->next_qdev,
				   d->s->ndevs);
	drain_hand_on(d);
	return 0;
}

int drain_init(struct drain *d, const struct session *s, sample_fn fn,
	       void *arg)
{
	memset(d, 0, sizeof(*d));
	d->s = s;
	d->fn = fn;
	d->arg = arg;
	return sample_alloc(&d->cur, s->cpus) ||
	       sample_alloc_queues(&d->cur, s);
}

void drain_free(struct drain *d)
{
	sample_free(&d->cur);
}

/* ---- the compatibility set (Documentation/metric-format.rst) ---------- */

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

int print_policy(FILE *f, enum metric m)
{
	struct jw w;

	jw_init(&w, f);
	fputs("# ktap-metric-policy-json: ", f);
	jw_obj_start(&w);
	if (m <= M_CPU_UTIL) {
		jw_key(&w, "aggregation");
		jw_str(&w, "busy-core-equivalents");
		jw_key(&w, "display_label");
		jw_str(&w, "Percent of one CPU");
		jw_key(&w, "display_range");
		jw_obj_start(&w);
		jw_key(&w, "max");
		jw_double(&w, 100.0);
		jw_key(&w, "min");
		jw_double(&w, 0.0);
		jw_obj_end(&w);
		if (m != M_CPU_UTIL) {
			jw_key(&w, "display_scale");
			jw_double(&w, 100.0);
		}
		jw_key(&w, "name");
		jw_str(&w, metric_names[m]);
		jw_key(&w, "summarize");
		jw_str(&w, "p90");
		if (m != M_CPU_UTIL) {
			jw_key(&w, "transform");
			jw_str(&w, "rate");
		}
	} else if (m == M_QUEUE_RX_CPU || m == M_QUEUE_TX_CPU) {
		/* not a count: a CPU id, said when it changes */
		jw_key(&w, "display_label");
		jw_str(&w, queue_metric[m - M_QUEUE_RX_PACKETS].label);
		jw_key(&w, "name");
		jw_str(&w, metric_names[m]);
		jw_key(&w, "summarize");
		jw_str(&w, "last");
	} else if (m >= M_SOFTNET_PROCESSED) {
		/*
		 * No aggregation: the format's one (busy-core-equivalents)
		 * counts busy cores, not packets; each CPU is its own series,
		 * as each queue is. Events a healthy run has few of are
		 * summarized as the netdevs' drops are.
		 */
		jw_key(&w, "display_label");
		jw_str(&w, m >= M_QUEUE_RX_PACKETS ?
			   queue_metric[m - M_QUEUE_RX_PACKETS].label :
			   cpu_net_labels[m - M_SOFTNET_PROCESSED]);
		jw_key(&w, "display_range");
		jw_obj_start(&w);
		jw_key(&w, "min");
		jw_int(&w, 0);
		jw_obj_end(&w);
		jw_key(&w, "name");
		jw_str(&w, metric_names[m]);
		jw_key(&w, "summarize");
		jw_str(&w, m == M_SOFTNET_DROPPED || m == M_SOFTNET_SQUEEZED ||
			   m == M_QUEUE_RX_ALLOC_FAIL ||
			   m == M_QUEUE_RX_HW_DROPS || m == M_QUEUE_TX_STOP ?
			   "distribution" : "p90");
		jw_key(&w, "transform");
		jw_str(&w, "rate");
	} else {
		jw_key(&w, "display_range");
		jw_obj_start(&w);
		jw_key(&w, "min");
		jw_int(&w, 0);
		jw_obj_end(&w);
		jw_key(&w, "name");
		jw_str(&w, metric_names[m]);
		jw_key(&w, "summarize");
		jw_str(&w, "distribution");
		jw_key(&w, "transform");
		jw_str(&w, "rate");
	}
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
	/* negative when the base is after the sample */
	int64_t d = (int64_t)(time_ns - time_base);
	uint64_t a = d < 0 ? -(uint64_t)d : (uint64_t)d;

	/*
	 * round(d / 1e9, 6) as Python computes it: from the nanoseconds
	 * when they are not a tie at microseconds, for the double nearest
	 * d / 1e9 is within a nanosecond of it below 2^22 s; else through
	 * that double. The same result, without a printf and two strtod().
	 */
	if (a % 1000 != 500 && a < (1ULL << 22) * NSEC_PER_SEC) {
		long long us = (a + 500) / 1000;

		/* a negative time that rounds to zero is -0.0 in Python */
		if (d < 0 && !us)
			jw_double(w, -0.0);
		else
			jw_decimal(w, d < 0 ? -us : us, -6);
	} else
		jw_round(w, (double)d / NSEC_PER_SEC, 6);
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

/*
 * Time spent since the first sample, per CPU; null for a CPU that is
 * offline. A CPU's time never goes back in the output, even when its
 * counter does or when it was offline at the first sample.
 */
static void emit_cpu_time(struct record *r, enum metric m,
			  const struct sample *smp, uint32_t cpus)
{
	struct jw w;
	uint32_t c;

	obs_start(r, &w, m, smp->time);
	jw_arr_start(&w);
	for (c = 0; c < cpus; c++) {
		const struct cpu_stats *now = &smp->cpu[c];
		const struct cpu_stats *base = &r->base.cpu[c];
		uint64_t ns = 0;

		if (!now->present || !now->online || !base->present) {
			jw_null(&w);
			continue;
		}
		switch (m) {
		case M_CPU_USR:
			ns = counter_delta(base->t[T_USER] + base->t[T_NICE],
					   now->t[T_USER] + now->t[T_NICE]);
			break;
		case M_CPU_SYS:
			ns = counter_delta(base->t[T_SYSTEM], now->t[T_SYSTEM]);
			break;
		default:
			ns = counter_delta(base->t[T_SOFTIRQ], now->t[T_SOFTIRQ]);
			break;
		}
		ns = never_back(&r->cpu_last[m][c], ns);
		/* the double nearest ns / 1e9, written from the digits of ns */
		if (ns < 1000000000000000ULL)
			jw_decimal(&w, ns, -9);
		else
			jw_double(&w, (double)ns / NSEC_PER_SEC);
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

/*
 * A count of cpu-net since the first sample, per CPU; null for a CPU that
 * is offline, as cpu.time.* has it. The kernel extends the counts to 64
 * bits: they never go back, but a CPU that was offline at the first
 * sample counts from 0 as cpu.time.* does, and never_back() holds it.
 */
static void emit_cpu_net(struct record *r, enum metric m,
			 const struct sample *smp, uint32_t cpus)
{
	int n = m - M_SOFTNET_PROCESSED;
	struct jw w;
	uint32_t c;

	obs_start(r, &w, m, smp->time);
	jw_arr_start(&w);
	for (c = 0; c < cpus; c++) {
		const struct cpu_stats *now = &smp->cpu[c];
		const struct cpu_stats *base = &r->base.cpu[c];

		if (!now->present || !now->online || !base->present) {
			jw_null(&w);
			continue;
		}
		jw_uint(&w, never_back(&r->cpu_last[m][c],
				       counter_delta(base->net[n],
						     now->net[n])));
	}
	jw_arr_end(&w);
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
	int m;

	if (!r->have_base) {
		sample_copy(&r->base, smp, cpus);
		r->have_base = true;
	}
	for (m = M_CPU_USR; m <= M_CPU_SIRQ; m++)
		emit_cpu_time(r, m, smp, cpus);
	if (smp->seq != r->base.seq)
		emit_cpu_util(r, smp, cpus);
	if (nics)
		for (m = M_NIC_RX_DROPPED; m <= M_NIC_TX_DROPPED; m++)
			emit_nic(r, m, smp);
	for (m = M_FIRST_OPTIONAL; m < M_QUEUE_RX_PACKETS; m++)
		if (r->metrics & M_BIT(m))
			emit_cpu_net(r, m, smp, cpus);
	if (r->qhave && smp->q)
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
