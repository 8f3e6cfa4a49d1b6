// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions and samples of the ksft_perfmon family, decoded: a session
 * from session-get's reply, and samples reassembled from sample-get
 * messages, changed-only ones on the sample before them. No I/O here:
 * the tool, its tests and the fuzzer feed it messages. ktap.c turns the
 * samples into metric lines.
 */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/genl/genl.h>

#include "samples.h"

/* ---- sessions --------------------------------------------------------- */

static struct nla_policy session_policy[KSFT_PERFMON_A_SESSION_MAX + 1] = {
	[KSFT_PERFMON_A_SESSION_ID] = { .type = NLA_U32 },
	[KSFT_PERFMON_A_SESSION_IFINDEX] = { .type = NLA_U32 },
	[KSFT_PERFMON_A_SESSION_RING_SIZE] = { .type = NLA_U32 },
	[KSFT_PERFMON_A_SESSION_CPUS] = { .type = NLA_U32 },
	[KSFT_PERFMON_A_SESSION_SAMPLE_SIZE] = { .type = NLA_U32 },
	[KSFT_PERFMON_A_SESSION_CPU_NET] = { .type = NLA_FLAG },
	[KSFT_PERFMON_A_SESSION_QUEUES] = { .type = NLA_U32 },
};

int session_parse(struct nlmsghdr *nlh, struct session *s)
{
	struct nlattr *tb[KSFT_PERFMON_A_SESSION_MAX + 1];
	struct nlattr *a;
	int rem;

	memset(s, 0, sizeof(*s));
	if (genlmsg_parse(nlh, 0, tb, KSFT_PERFMON_A_SESSION_MAX,
			  session_policy) || !tb[KSFT_PERFMON_A_SESSION_ID])
		return -EINVAL;
	s->id = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_ID]);
	s->interval = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_INTERVAL]);
	if (tb[KSFT_PERFMON_A_SESSION_RING_SIZE])
		s->ring_size = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_RING_SIZE]);
	if (tb[KSFT_PERFMON_A_SESSION_CPUS])
		s->cpus = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_CPUS]);
	if (tb[KSFT_PERFMON_A_SESSION_SAMPLE_SIZE])
		s->sample_size =
			nla_get_u32(tb[KSFT_PERFMON_A_SESSION_SAMPLE_SIZE]);
	s->samples = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_SAMPLES]);
	s->lost = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_LOST]);
	s->cost = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_COST]);
	s->missed = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_MISSED]);
	s->dev_interval =
		kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_DEV_INTERVAL]);
	s->dev_missed = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_DEV_MISSED]);
	s->cpu_net = tb[KSFT_PERFMON_A_SESSION_CPU_NET];
	if (tb[KSFT_PERFMON_A_SESSION_QUEUES])
		s->queues = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_QUEUES]);
	s->qstats_skipped =
		kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_QSTATS_SKIPPED]);
	if (s->queues > KSFT_PERFMON_QUEUES_MAX)
		return -EINVAL;
	nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem)
		if (nla_type(a) == KSFT_PERFMON_A_SESSION_IFINDEX &&
		    s->ndevs < KSFT_PERFMON_DEVS_MAX)
			s->ifindex[s->ndevs++] = nla_get_u32(a);
	return 0;
}

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
 * Where an attribute of a set goes, in the struct its set is parsed into:
 * its value, at @off, and whether it came whole, at @have (or -1). A set's
 * table maps each attribute type to one; types of ATTR_SKIP are skipped.
 */
enum attr_kind {
	ATTR_SKIP,
	ATTR_U32,	/* an NLA_U32 */
	ATTR_LINK,	/* an NLA_U32 that is not Q_NO_LINK */
	ATTR_UINT,	/* an NLA_UINT */
	ATTR_UINTS,	/* NLA_UINTs of a run from @first: an array at @off */
	ATTR_FLAG,	/* an NLA_FLAG: a bool at @off */
};

struct attr_field {
	enum attr_kind kind;
	int first;
	size_t off;
	ptrdiff_t have;
};

#define ATTR(kind, type, member)					\
	{ kind, 0, offsetof(type, member), -1 }
#define ATTR_HAVE(kind, type, member, have)				\
	{ kind, 0, offsetof(type, member), offsetof(type, have) }

/*
 * The attributes from @head, @len bytes, into @out by @fields (of types 0
 * to @max); false when one of them is malformed.
 */
static bool attrs_parse(const struct nlattr *head, int len,
			const struct attr_field *fields, int max, void *out)
{
	const struct attr_field *f;
	const struct nlattr *a;
	char *p = out;
	bool ok = true, got;
	int rem, type;

	attr_for_each(a, head, len, rem) {
		type = a->nla_type & NLA_TYPE_MASK;
		if (type > max)
			continue;
		f = &fields[type];
		switch (f->kind) {
		case ATTR_U32:
			got = attr_u32(a, (uint32_t *)(p + f->off));
			break;
		case ATTR_LINK:
			got = attr_u32(a, (uint32_t *)(p + f->off)) &&
			      *(uint32_t *)(p + f->off) != Q_NO_LINK;
			break;
		case ATTR_UINT:
			got = attr_uint(a, (uint64_t *)(p + f->off));
			break;
		case ATTR_UINTS:
			got = attr_uint(a, (uint64_t *)(p + f->off) +
					   (type - f->first));
			break;
		case ATTR_FLAG:
			got = *(bool *)(p + f->off) = true;
			break;
		default:	/* ATTR_SKIP */
			continue;
		}
		if (f->have >= 0)
			*(bool *)(p + f->have) = got;
		ok &= got;
	}
	return ok;
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

static const struct attr_field qstats_fields[KSFT_PERFMON_A_QSTATS_MAX + 1] = {
	[KSFT_PERFMON_A_QSTATS_IFINDEX] = ATTR_HAVE(ATTR_U32, struct qstats_vals,
						    ifindex, have_ifindex),
	[KSFT_PERFMON_A_QSTATS_QUEUE_TYPE] = ATTR_HAVE(ATTR_U32,
						       struct qstats_vals,
						       type, have_type),
	[KSFT_PERFMON_A_QSTATS_QUEUE_ID] = ATTR_HAVE(ATTR_U32, struct qstats_vals,
						     id, have_id),
	[KSFT_PERFMON_A_QSTATS_RX_QUEUES] = ATTR_HAVE(ATTR_U32,
						      struct qstats_vals,
						      rx_queues, have_queues),
	[KSFT_PERFMON_A_QSTATS_TX_QUEUES] = ATTR(ATTR_U32, struct qstats_vals,
						 tx_queues),
	[KSFT_PERFMON_A_QSTATS_SKIPPED] = ATTR(ATTR_FLAG, struct qstats_vals,
					       skipped),
	[KSFT_PERFMON_A_QSTATS_RX_PACKETS ... KSFT_PERFMON_A_QSTATS_TX_WAKE] = {
		ATTR_UINTS, KSFT_PERFMON_A_QSTATS_RX_PACKETS,
		offsetof(struct qstats_vals, qs.v), -1,
	},
	[KSFT_PERFMON_A_QSTATS_MAP_VERSION] = ATTR_HAVE(ATTR_U32,
							struct qstats_vals,
							map_version, have_map),
	[KSFT_PERFMON_A_QSTATS_NAPI_ID] = ATTR(ATTR_LINK, struct qstats_vals,
					       qs.link.napi_id),
	[KSFT_PERFMON_A_QSTATS_IRQ] = ATTR(ATTR_U32, struct qstats_vals,
					   qs.link.irq),
	[KSFT_PERFMON_A_QSTATS_CPU] = ATTR(ATTR_U32, struct qstats_vals,
					   qs.link.cpu),
	[KSFT_PERFMON_A_QSTATS_MAP_SKIPPED] = ATTR(ATTR_FLAG, struct qstats_vals,
						   map_skipped),
	[KSFT_PERFMON_A_QSTATS_TIME] = ATTR_HAVE(ATTR_UINT, struct qstats_vals,
						 time, have_time),
	[KSFT_PERFMON_A_QSTATS_OVER_BUDGET] = ATTR(ATTR_FLAG, struct qstats_vals,
						   over_budget),
};

static bool qstats_parse(const struct nlattr *nest, struct qstats_vals *qv)
{
	memset(qv, 0, sizeof(*qv));
	memset(&qv->qs, 0xff, sizeof(qv->qs));
	return attrs_parse(attr_data(nest), attr_len(nest), qstats_fields,
			   KSFT_PERFMON_A_QSTATS_MAX, qv) && qv->have_ifindex;
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
	uint64_t seq, time, cost, delay, base, dev_read;
	uint32_t start, end;
	bool have_seq, have_start, have_end, have_time, have_base, last;
};

static const struct attr_field part_fields[KSFT_PERFMON_A_SAMPLE_MAX + 1] = {
	[KSFT_PERFMON_A_SAMPLE_SEQ] = ATTR_HAVE(ATTR_UINT, struct part,
						seq, have_seq),
	[KSFT_PERFMON_A_SAMPLE_TIME] = ATTR_HAVE(ATTR_UINT, struct part,
						 time, have_time),
	[KSFT_PERFMON_A_SAMPLE_COST] = ATTR(ATTR_UINT, struct part, cost),
	[KSFT_PERFMON_A_SAMPLE_DELAY] = ATTR(ATTR_UINT, struct part, delay),
	[KSFT_PERFMON_A_SAMPLE_DEV_READ] = ATTR(ATTR_UINT, struct part,
						dev_read),
	[KSFT_PERFMON_A_SAMPLE_CPU_START] = ATTR_HAVE(ATTR_U32, struct part,
						      start, have_start),
	[KSFT_PERFMON_A_SAMPLE_CPU_END] = ATTR_HAVE(ATTR_U32, struct part,
						    end, have_end),
	[KSFT_PERFMON_A_SAMPLE_LAST_PART] = ATTR(ATTR_FLAG, struct part, last),
	[KSFT_PERFMON_A_SAMPLE_BASE_SEQ] = ATTR_HAVE(ATTR_UINT, struct part,
						     base, have_base),
};

static bool part_parse(const struct nlmsghdr *nlh, struct part *p)
{
	memset(p, 0, sizeof(*p));
	return attrs_parse((const struct nlattr *)((const char *)nlmsg_data(nlh) +
						   GENL_HDRLEN),
			   (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
			   part_fields, KSFT_PERFMON_A_SAMPLE_MAX, p) &&
	       p->have_seq && p->have_start && p->have_end;
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
	d->cur.dev_read = p->dev_read;
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
