// SPDX-License-Identifier: GPL-2.0
/*
 * A netlink fuzzer for the ksft_perfmon family. It mutates valid requests
 * of every command: the command, the genetlink version, the netlink flags,
 * attribute types, lengths and values, nesting, duplicates and truncation,
 * and sends them over a raw socket, reading whatever comes back (acks,
 * replies, dumps) without waiting for it. Sockets are replaced now and
 * then, which destroys their sessions.
 *
 * Afterwards the family must still answer correctly: a new session samples,
 * and once the fuzzer's sockets are closed no session is left. The kernel's
 * log is the guest's to check (KASAN, lockdep, ...).
 *
 * usage: nl_fuzz_test [--seed N] [--count N]
 *        (default: seed 1, 100000 messages)
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>
#include <linux/netlink.h>

#include "kselftest.h"
#include "nl.h"
#include "samples.h"

#define NSOCKS		4
#define MSG_MAX		4096

static uint64_t rng;

/* xorshift64*: the run is a function of the seed */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int below(unsigned int n)
{
	return rnd() % n;
}

struct msg {
	unsigned char buf[MSG_MAX];
	size_t len;
};

static struct nlattr *put(struct msg *m, uint16_t type, const void *data,
			  size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	if (m->len + NLA_HDRLEN + NLA_ALIGN(len) > MSG_MAX)
		return NULL;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (data)
		memcpy(a + 1, data, len);
	m->len += NLA_HDRLEN + NLA_ALIGN(len);
	return a;
}

static void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, sizeof(v));
}

static void put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	put(m, type, &v, sizeof(v));
}

/* a value near the interesting ones, or anything */
static uint64_t value(uint64_t valid)
{
	static const uint64_t edge[] = {
		0, 1, 2, 3, 63, 64, 65, 4095, 4096, 65535, 65536,
		KSFT_PERFMON_INTERVAL_MIN - 1, KSFT_PERFMON_INTERVAL_MIN,
		KSFT_PERFMON_INTERVAL_MAX, KSFT_PERFMON_INTERVAL_MAX + 1,
		KSFT_PERFMON_RING_SIZE_MIN, KSFT_PERFMON_RING_SIZE_MAX,
		KSFT_PERFMON_RING_SIZE_MAX + 1, UINT32_MAX, UINT64_MAX,
	};

	switch (below(4)) {
	case 0:
		return valid;
	case 1:
		return edge[below(sizeof(edge) / sizeof(edge[0]))];
	case 2:
		return valid ^ (1ULL << below(64));
	default:
		return rnd();
	}
}

/*
 * A valid request of a random command, with random ids; returns whether
 * it is a dump (sample-get always, any other command now and then).
 */
static bool request(struct msg *m, uint32_t id)
{
	struct genlmsghdr *g;
	struct nlattr *nest;
	bool dump;
	int i, n;

	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = 1 + below(KSFT_PERFMON_CMD_MAX);
	g->version = 1;
	g->reserved = 0;
	dump = g->cmd == KSFT_PERFMON_CMD_SAMPLE_GET || !below(8);
	switch (g->cmd) {
	case KSFT_PERFMON_CMD_SESSION_NEW:
		n = below(4);
		for (i = 0; i < n; i++)
			put_u32(m, KSFT_PERFMON_A_SESSION_IFINDEX, value(1));
		put_u64(m, KSFT_PERFMON_A_SESSION_INTERVAL,
			value(1000000000ULL));
		put_u32(m, KSFT_PERFMON_A_SESSION_RING_SIZE, value(16));
		break;
	case KSFT_PERFMON_CMD_SAMPLE_GET:
		put_u32(m, KSFT_PERFMON_A_SAMPLE_SESSION_ID, value(id));
		if (below(2))
			put_u64(m, KSFT_PERFMON_A_SAMPLE_CURSOR, value(0));
		break;
	case KSFT_PERFMON_CMD_SESSION_GET:
		/*
		 * The dump takes no attribute: 6.12 ignores one, 7.3 refuses
		 * it. Sent with one now and then.
		 */
		if (!dump || !below(4))
			put_u32(m, KSFT_PERFMON_A_SESSION_ID, value(id));
		break;
	default:
		put_u32(m, KSFT_PERFMON_A_SESSION_ID, value(id));
		break;
	}
	/* attributes of another set, or nested where none are */
	if (!below(8)) {
		nest = put(m, below(12) | (below(2) ? NLA_F_NESTED : 0), NULL, 0);
		n = below(3);
		for (i = 0; nest && i < n; i++) {
			put_u64(m, below(24), rnd());
			nest->nla_len += NLA_HDRLEN + 8;
		}
	}
	return dump;
}

/* the mutations, each applied with some probability */
static void mutate(struct msg *m, struct nlmsghdr *nlh)
{
	struct genlmsghdr *g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	size_t off;
	int i, n;

	if (!below(16))
		g->cmd = below(256);
	if (!below(32))
		g->version = below(256);
	if (!below(8))	/* request, ack, dump, echo, and junk */
		nlh->nlmsg_flags ^= 1 << below(16);
	/* flip, grow, shrink or retype one attribute */
	n = below(4);
	for (i = 0; i < n && m->len > NLMSG_HDRLEN + GENL_HDRLEN; i++) {
		off = NLMSG_HDRLEN + GENL_HDRLEN +
		      below(m->len - NLMSG_HDRLEN - GENL_HDRLEN);
		switch (below(5)) {
		case 0:
			m->buf[off] ^= 1 << below(8);
			break;
		case 1:
			m->buf[off] = rnd();
			break;
		default: {
			struct nlattr *a;
			size_t at = NLMSG_HDRLEN + GENL_HDRLEN;

			/* an attribute header on a 4-byte boundary */
			at += (below((m->len - at) / 4 + 1) * 4);
			if (at + NLA_HDRLEN > m->len)
				break;
			a = (struct nlattr *)(m->buf + at);
			if (below(2))
				a->nla_len = below(2) ? below(24) : rnd();
			else
				a->nla_type = below(2) ? below(24) : rnd();
			break;
		}
		}
	}
	/* duplicate a tail of the message */
	if (!below(16) && m->len * 2 <= MSG_MAX) {
		off = NLMSG_HDRLEN + GENL_HDRLEN;
		memcpy(m->buf + m->len, m->buf + off, m->len - off);
		m->len += m->len - off;
	}
	/* truncate */
	if (!below(16))
		m->len = below(m->len + 1);
}

/* what each kind of request got back: commands 1-4, 0 for any other */
#define KINDS		(KSFT_PERFMON_CMD_MAX + 1)
static const char *const kind_name[KINDS] = {
	"other", "session-new", "session-get", "session-del", "sample-get",
};

struct outcome {
	unsigned long requests, ok, replies, by_errno[256];
};

struct stats {
	unsigned long sent, send_failed, replies, acks, errors, dumps_done;
	unsigned long by_errno[256];
	uint8_t *kind_of;	/* [seq]: kind * 2 + dump */
	unsigned long count;
	struct outcome kind[KINDS][2];
};

static struct outcome *outcome_of(struct stats *st, uint32_t seq)
{
	uint8_t k = seq < st->count ? st->kind_of[seq] : 0;

	return &st->kind[k / 2][k % 2];
}

/*
 * The ids of sessions that replies named, the newest last: session ids are
 * not reused, so after the first few dozen sessions a random id finds none.
 */
#define KNOWN		16
static uint32_t known[KNOWN];
static unsigned int nknown;

static void learn_ids(struct nlmsghdr *nlh)
{
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a;
	int rem;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN ||
	    (g->cmd != KSFT_PERFMON_CMD_SESSION_NEW &&
	     g->cmd != KSFT_PERFMON_CMD_SESSION_GET))
		return;
	nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem)
		if (nla_type(a) == KSFT_PERFMON_A_SESSION_ID &&
		    nla_len(a) == sizeof(uint32_t))
			known[nknown++ % KNOWN] = nla_get_u32(a);
}

/*
 * A session id: mostly one the kernel named, else any small one. Takes as
 * many random numbers whatever it returns, so that the random numbers the
 * run draws stay a function of the seed (the ids the kernel names differ
 * with the kernel).
 */
static uint32_t pick_id(void)
{
	uint32_t any = 1 + below(80), j = below(KNOWN), r = below(4);

	if (!r || !nknown)
		return any;
	return known[j % (nknown < KNOWN ? nknown : KNOWN)];
}

/* read whatever the kernel has for @fd, without blocking */
static void drain(int fd, struct stats *st)
{
	static unsigned char buf[65536];
	struct nlmsghdr *nlh;
	ssize_t len;
	int err;

	while ((len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			struct outcome *o = outcome_of(st, nlh->nlmsg_seq);

			if (nlh->nlmsg_type == NLMSG_DONE ||
			    nlh->nlmsg_type == NLMSG_ERROR) {
				/*
				 * Both begin with the error: an ack's, or that
				 * of a dump that failed part-way.
				 */
				err = nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) ?
				      -*(int *)NLMSG_DATA(nlh) : 0;
				if (nlh->nlmsg_type == NLMSG_DONE)
					st->dumps_done++;
				else if (!err)
					st->acks++;
				if (err) {
					st->errors++;
					st->by_errno[err & 255]++;
					o->by_errno[err & 255]++;
				} else {
					o->ok++;
				}
			} else {
				st->replies++;
				o->replies++;
				learn_ids(nlh);
			}
		}
	}
}

/*
 * The work the fuzzer must have done, per 100,000 messages, on any kernel:
 * each command's success and its main refusals, dumps that bring sessions,
 * dumps of commands that have none. About a fifth of the lesser of what a
 * run with seed 1 reaches on Debian's 6.12 and on the debug kernel; a
 * kernel, or a change of the fuzzer, that reaches less of the family fails
 * instead of passing on less. The samples dumped are counted but not
 * required: they depend on how long sessions live in real time (463 on
 * 6.12, 2730 on the debug kernel), and family_still_answers dumps some on
 * every kernel.
 */
#define REPLIES		(-1)
static const struct need {
	unsigned int kind, dump;
	int outcome;		/* 0: ok, REPLIES, or an errno */
	unsigned long per_100k;
	const char *name;
} needs[] = {
	{ KSFT_PERFMON_CMD_SESSION_NEW, 0, 0, 100, "session_new_ok" },
	{ KSFT_PERFMON_CMD_SESSION_NEW, 0, EINVAL, 1000, "session_new_einval" },
	{ KSFT_PERFMON_CMD_SESSION_NEW, 0, ERANGE, 1000, "session_new_erange" },
	{ KSFT_PERFMON_CMD_SESSION_NEW, 0, ENODEV, 100, "session_new_enodev" },
	{ KSFT_PERFMON_CMD_SESSION_NEW, 1, EOPNOTSUPP, 300, "session_new_dump_eopnotsupp" },
	{ KSFT_PERFMON_CMD_SESSION_GET, 0, 0, 100, "session_get_ok" },
	{ KSFT_PERFMON_CMD_SESSION_GET, 0, ENOENT, 1000, "session_get_enoent" },
	{ KSFT_PERFMON_CMD_SESSION_GET, 1, 0, 300, "session_get_dump_ok" },
	{ KSFT_PERFMON_CMD_SESSION_GET, 1, REPLIES, 500, "session_get_dump_replies" },
	{ KSFT_PERFMON_CMD_SESSION_DEL, 0, 0, 100, "session_del_ok" },
	{ KSFT_PERFMON_CMD_SESSION_DEL, 0, ENOENT, 1000, "session_del_enoent" },
	{ KSFT_PERFMON_CMD_SAMPLE_GET, 1, 0, 100, "sample_get_dump_ok" },
	{ KSFT_PERFMON_CMD_SAMPLE_GET, 1, ENOENT, 1000, "sample_get_dump_enoent" },
	{ 0, 0, EOPNOTSUPP, 300, "unknown_command_eopnotsupp" },
};

static unsigned long reached(const struct stats *st, const struct need *n)
{
	const struct outcome *o = &st->kind[n->kind][n->dump];

	if (!n->outcome)
		return o->ok;
	if (n->outcome == REPLIES)
		return o->replies;
	return o->by_errno[n->outcome];
}

static int open_sock(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		ksft_exit_fail_perror("netlink socket");
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (!below(2))
		setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one,
			   sizeof(one));
	return fd;
}

static int count_cb(struct nl_msg *msg, void *arg)
{
	(*(int *)arg)++;
	return NL_OK;
}

static int id_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KSFT_PERFMON_A_SESSION_MAX + 1];

	if (!genlmsg_parse(nlmsg_hdr(msg), 0, tb, KSFT_PERFMON_A_SESSION_MAX,
			   NULL) && tb[KSFT_PERFMON_A_SESSION_ID])
		*(uint32_t *)arg = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_ID]);
	return NL_OK;
}

/* session-get's reply, with the tool's own decoder */
static int session_cb(struct nl_msg *msg, void *arg)
{
	session_parse(nlmsg_hdr(msg), arg);
	return NL_OK;
}

/*
 * The family still does its job: a session that samples, and goes. It
 * waits for two samples by the session's own count of its timer's
 * periods, not by the clock: a guest that the host does not run for a
 * while gets its samples later. Twenty periods, taken or missed, with
 * fewer than two samples is a sampler that stopped; a timer that never
 * fires is left to the step's time limit.
 */
static int still_answers(void)
{
	struct session c = {};
	struct kpm_ack ack;
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, n = 0;
	uint32_t id = 0;
	int ok = 0;

	sk = kpm_nl_socket(&family);
	if (!sk || family < 0)
		return 0;
	msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, 10000000);
	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 64);
	if (kpm_nl_talk(sk, msg, id_cb, &id, &ack) || !id)
		goto out;
	do {
		usleep(10000);
		msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_GET, 0);
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, id);
		if (kpm_nl_talk(sk, msg, session_cb, &c, &ack))
			goto out;
	} while (c.samples < 2 && c.samples + c.missed < 20);
	msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SAMPLE_GET, NLM_F_DUMP);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, id);
	if (kpm_nl_talk(sk, msg, count_cb, &n, &ack) || n < 2)
		goto out;
	msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_DEL, 0);
	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	ok = !kpm_nl_talk(sk, msg, NULL, NULL, &ack);
out:
	if (!ok)
		ksft_print_msg("session %u: %llu samples taken, %llu periods missed, %d dumped: %s\n",
			       id, (unsigned long long)c.samples,
			       (unsigned long long)c.missed, n, ack.msg);
	nl_socket_free(sk);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{}
	};
	unsigned long count = 100000, i, seed = 1;
	int fd[NSOCKS], family, s, opt, e, k;
	struct nl_sock *probe;
	struct stats st = {};
	struct msg m;

	while ((opt = getopt_long(argc, argv, "s:c:", opts, NULL)) != -1) {
		if (opt == 's')
			seed = strtoul(optarg, NULL, 0);
		else if (opt == 'c')
			count = strtoul(optarg, NULL, 0);
		else
			return KSFT_FAIL;
	}
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	st.count = count;
	st.kind_of = calloc(count ? count : 1, 1);
	if (!st.kind_of)
		ksft_exit_fail_msg("out of memory\n");

	ksft_print_header();
	ksft_set_plan(3 + ARRAY_SIZE(needs));
	probe = kpm_nl_socket(&family);
	if (!probe || family < 0)
		ksft_exit_fail_msg("no ksft_perfmon family\n");
	nl_socket_free(probe);

	for (s = 0; s < NSOCKS; s++)
		fd[s] = open_sock();
	for (i = 0; i < count; i++) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)m.buf;

		s = below(NSOCKS);
		/* now and then a new socket: its sessions die with the old */
		if (!below(2000)) {
			close(fd[s]);
			fd[s] = open_sock();
		}
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		if (request(&m, pick_id()))
			nlh->nlmsg_flags |= NLM_F_DUMP;
		nlh->nlmsg_type = family;
		nlh->nlmsg_seq = i;
		nlh->nlmsg_pid = 0;
		mutate(&m, nlh);
		if (m.len >= sizeof(*nlh))
			nlh->nlmsg_len = below(32) ? m.len : rnd();
		if (m.len > NLMSG_HDRLEN && m.buf[NLMSG_HDRLEN] < KINDS)
			st.kind_of[i] = m.buf[NLMSG_HDRLEN] * 2;
		/* genetlink dumps when both bits are set, not one */
		st.kind_of[i] |= (nlh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
		outcome_of(&st, i)->requests++;
		if (send(fd[s], m.buf, m.len, 0) < 0)
			st.send_failed++;
		else
			st.sent++;
		drain(fd[s], &st);
	}
	for (s = 0; s < NSOCKS; s++)
		drain(fd[s], &st);

	ksft_print_msg("seed %lu: %lu messages, %lu sent, %lu refused by send(), %lu replies, %lu acks, %lu errors, %lu dumps done\n",
		       seed, count, st.sent, st.send_failed, st.replies,
		       st.acks, st.errors, st.dumps_done);
	for (e = 1; e < 256; e++)
		if (st.by_errno[e])
			ksft_print_msg("  %s: %lu\n", strerror(e),
				       st.by_errno[e]);
	for (k = 0; k < KINDS * 2; k++) {
		struct outcome *o = &st.kind[k / 2][k % 2];

		ksft_print_msg("  %s %s: %lu requests, %lu ok, %lu replies;",
			       kind_name[k / 2], k % 2 ? "dump" : "do",
			       o->requests, o->ok, o->replies);
		for (e = 1; e < 256; e++)
			if (o->by_errno[e])
				printf(" %s %lu", strerrorname_np(e),
				       o->by_errno[e]);
		printf("\n");
	}
	ksft_test_result(st.sent >= count / 2 && st.acks && st.errors,
			 "fuzz_sent_and_answered\n");
	for (k = 0; k < (int)ARRAY_SIZE(needs); k++) {
		const struct need *n = &needs[k];
		unsigned long got = reached(&st, n);
		unsigned long want = n->per_100k * count / 100000;

		if (got < want)
			ksft_print_msg("%s: %lu, fewer than %lu\n", n->name,
				       got, want);
		ksft_test_result(got >= want, "reached_%s\n", n->name);
	}

	for (s = 0; s < NSOCKS; s++)
		close(fd[s]);
	ksft_test_result(still_answers(), "family_still_answers\n");
	/* sockets are released after an RCU grace period */
	for (i = 0; i < 500 && kpm_nr_sessions(); i++)
		usleep(10000);
	ksft_test_result(kpm_nr_sessions() == 0, "no_session_left\n");
	ksft_finished();
}
