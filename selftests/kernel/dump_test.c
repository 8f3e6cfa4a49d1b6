// SPDX-License-Identifier: GPL-2.0
/*
 * sample-get as a reader with a plain socket sees it: the parts a sample is
 * split into, the buffer it takes, a reader too slow for the ring, and a
 * session destroyed under a dump. Sixteen veth netdevs and four CPUs make a
 * sample larger than NLMSG_GOODSIZE; 64 CPUs, larger than a page. Run as
 * root in a throwaway kernel (selftests/guest.sh).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "nl.h"

#define MS		1000000ULL
/*
 * Sixteen veth and thousands of messages: under KASAN and lockdep in TCG
 * a test takes longer than the harness's default 30 s. A limit, not a
 * measurement.
 */
#define SLOW		300
#define NDEVS		KSFT_PERFMON_DEVS_MAX
#define MAX_IDS		8192

/* What a dump delivered. */
struct dump {
	int samples;		/* complete ones */
	int parts;		/* messages */
	int most_parts;		/* of one sample */
	int truncated;		/* recvmsg()s with MSG_TRUNC */
	int done_err;		/* NLMSG_DONE's error, or NLMSG_ERROR's */
	size_t largest_skb;	/* bytes of the longest recvmsg() */
	size_t largest_sample;	/* bytes of the largest sample's parts */
	char done_msg[128];	/* its extack message */
	uint64_t first_seq, last_seq, gaps;
	char bad[256];		/* the first thing wrong, or "" */

	/* the sample being assembled */
	bool have;
	uint64_t seq;
	uint32_t next_cpu, devs, parts_now;
	size_t bytes_now;
};

static bool possible[MAX_IDS];
static uint32_t nr_ids;		/* the session's cpus */

static void bad(struct dump *d, const char *fmt, ...)
{
	va_list ap;

	if (d->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(d->bad, sizeof(d->bad), fmt, ap);
	va_end(ap);
}

static void read_possible(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo, hi, c;

	memset(possible, 0, sizeof(possible));
	while (f && fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if (fgetc(f) == '-' && fscanf(f, "%d", &hi) == 1)
			fgetc(f);
		for (c = lo; c <= hi && c < MAX_IDS; c++)
			possible[c] = true;
	}
	if (f)
		fclose(f);
}

/* One part: checks that it continues the sample being assembled. */
static void take_part(struct dump *d, struct nlmsghdr *nlh, const uint32_t *ifindex)
{
	struct nlattr *tb[KSFT_PERFMON_A_SAMPLE_MAX + 1], *a, *n[32];
	uint32_t start, end, cpu;
	uint64_t seq;
	int rem;

	d->parts++;
	if (genlmsg_parse(nlh, 0, tb, KSFT_PERFMON_A_SAMPLE_MAX, NULL) ||
	    !tb[KSFT_PERFMON_A_SAMPLE_SEQ] ||
	    !tb[KSFT_PERFMON_A_SAMPLE_CPU_START] ||
	    !tb[KSFT_PERFMON_A_SAMPLE_CPU_END])
		return bad(d, "a part without seq, cpu-start or cpu-end");
	seq = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SAMPLE_SEQ]);
	start = nla_get_u32(tb[KSFT_PERFMON_A_SAMPLE_CPU_START]);
	end = nla_get_u32(tb[KSFT_PERFMON_A_SAMPLE_CPU_END]);

	if (!d->have) {
		if (!tb[KSFT_PERFMON_A_SAMPLE_TIME] || start)
			return bad(d, "sample %llu begins with part from CPU %u",
				   (unsigned long long)seq, start);
		if (d->samples && seq > d->last_seq + 1)
			d->gaps += seq - d->last_seq - 1;
		if (d->samples && seq <= d->last_seq)
			return bad(d, "sample %llu after %llu",
				   (unsigned long long)seq,
				   (unsigned long long)d->last_seq);
		if (!d->samples)
			d->first_seq = seq;
		d->have = true;
		d->seq = seq;
		d->next_cpu = d->devs = d->parts_now = 0;
		d->bytes_now = 0;
	} else if (seq != d->seq) {
		return bad(d, "sample %llu before the last part of %llu",
			   (unsigned long long)seq, (unsigned long long)d->seq);
	} else if (tb[KSFT_PERFMON_A_SAMPLE_TIME]) {
		return bad(d, "a later part of %llu says its time",
			   (unsigned long long)seq);
	}
	d->parts_now++;
	d->bytes_now += nlh->nlmsg_len;
	if (start != d->next_cpu || end < start || end > nr_ids)
		return bad(d, "sample %llu: part of CPUs %u..%u after %u",
			   (unsigned long long)seq, start, end, d->next_cpu);

	nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem) {
		if (nla_type(a) == KSFT_PERFMON_A_SAMPLE_DEV) {
			nla_parse_nested(n, KSFT_PERFMON_A_DEV_STATS_MAX, a, NULL);
			if (d->next_cpu != start || start ||
			    d->devs >= NDEVS || !n[KSFT_PERFMON_A_DEV_STATS_IFINDEX] ||
			    nla_get_u32(n[KSFT_PERFMON_A_DEV_STATS_IFINDEX]) !=
			    ifindex[d->devs])
				return bad(d, "sample %llu: netdev %u out of place",
					   (unsigned long long)seq, d->devs);
			d->devs++;
		} else if (nla_type(a) == KSFT_PERFMON_A_SAMPLE_CPU) {
			nla_parse_nested(n, KSFT_PERFMON_A_CPU_STATS_MAX, a, NULL);
			cpu = n[KSFT_PERFMON_A_CPU_STATS_ID] ?
			      nla_get_u32(n[KSFT_PERFMON_A_CPU_STATS_ID]) : ~0U;
			/* every possible CPU of the range, in order, once */
			while (d->next_cpu < cpu && d->next_cpu < end &&
			       !possible[d->next_cpu])
				d->next_cpu++;
			if (cpu != d->next_cpu || cpu >= end || !possible[cpu])
				return bad(d, "sample %llu: CPU %u where %u was due",
					   (unsigned long long)seq, cpu,
					   d->next_cpu);
			d->next_cpu++;
		}
	}
	while (d->next_cpu < end && !possible[d->next_cpu])
		d->next_cpu++;
	if (d->next_cpu != end)
		return bad(d, "sample %llu: CPU %u missing from part %u..%u",
			   (unsigned long long)seq, d->next_cpu, start, end);

	if (!tb[KSFT_PERFMON_A_SAMPLE_LAST_PART])
		return;
	if (end != nr_ids || d->devs != NDEVS)
		return bad(d, "sample %llu ends at CPU %u of %u, %u netdevs",
			   (unsigned long long)seq, end, nr_ids, d->devs);
	d->have = false;
	d->samples++;
	d->last_seq = seq;
	if (d->parts_now > d->most_parts)
		d->most_parts = d->parts_now;
	if (d->bytes_now > d->largest_sample)
		d->largest_sample = d->bytes_now;
}

/*
 * Dump session @id from @cursor through @fd, receiving into @bufsize
 * bytes, or, when @bufsize is 0, peeking at each skb's length and reading
 * exactly that much; @between runs after each recvmsg() (or NULL).
 */
static void dump(int fd, int family, uint32_t id, uint64_t cursor,
		 size_t bufsize, const uint32_t *ifindex, struct dump *d,
		 void (*between)(void *), void *arg)
{
	/* libnl's nl_send_auto() would add NLM_F_REQUEST; send() does not */
	struct nl_msg *msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SAMPLE_GET,
					NLM_F_REQUEST | NLM_F_DUMP);
	size_t size = bufsize ?: 4096;
	char *buf = malloc(size);
	struct nlmsghdr *nlh;
	bool done = false;
	ssize_t len;

	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, id);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_CURSOR, cursor);
	nlmsg_hdr(msg)->nlmsg_seq = 1;
	if (send(fd, nlmsg_hdr(msg), nlmsg_hdr(msg)->nlmsg_len, 0) < 0)
		bad(d, "send: %s", strerror(errno));
	nlmsg_free(msg);

	while (!done && !d->bad[0]) {
		struct iovec iov = { buf, size };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

		if (!bufsize) {
			/* the kernel notes no read longer than the skb */
			len = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
			if (len <= 0) {
				bad(d, "peek: %s", len ? strerror(errno) : "0");
				break;
			}
			if ((size_t)len > size)
				buf = realloc(buf, size = len);
			iov.iov_base = buf;
			iov.iov_len = len;
		}
		len = recvmsg(fd, &mh, 0);
		if (len < 0) {
			bad(d, "recvmsg: %s", strerror(errno));
			break;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			d->truncated++;
			len = iov.iov_len;
		}
		if ((size_t)len > d->largest_skb)
			d->largest_skb = len;
		for (nlh = (void *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_type == NLMSG_DONE ||
			    nlh->nlmsg_type == NLMSG_ERROR) {
				int *err = NLMSG_DATA(nlh);
				struct nlattr *tlv = (void *)(err + 1);
				int rem = nlh->nlmsg_len - NLMSG_HDRLEN -
					  sizeof(*err);

				done = true;
				d->done_err = *err;
				if (nlh->nlmsg_type == NLMSG_ERROR)
					break;
				for (; rem >= NLA_HDRLEN && nla_ok(tlv, rem);
				     tlv = nla_next(tlv, &rem))
					if (nla_type(tlv) == NLMSGERR_ATTR_MSG)
						snprintf(d->done_msg,
							 sizeof(d->done_msg),
							 "%s", (char *)nla_data(tlv));
				break;
			}
			take_part(d, nlh, ifindex);
		}
		if (between && !done)
			between(arg);
	}
	if (d->have && !d->bad[0] && !d->done_err)
		bad(d, "the dump ended within sample %llu",
		    (unsigned long long)d->seq);
	free(buf);
}

static int raw_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC), one = 1;

	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return fd;
}

struct sess {
	uint32_t id;
	uint64_t samples, lost;
	uint32_t cpus;
};

static int sess_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KSFT_PERFMON_A_SESSION_MAX + 1];
	struct sess *s = arg;

	genlmsg_parse(nlmsg_hdr(msg), 0, tb, KSFT_PERFMON_A_SESSION_MAX, NULL);
	if (tb[KSFT_PERFMON_A_SESSION_ID])
		s->id = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_ID]);
	s->samples = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_SAMPLES]);
	s->lost = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_LOST]);
	if (tb[KSFT_PERFMON_A_SESSION_CPUS])
		s->cpus = nla_get_u32(tb[KSFT_PERFMON_A_SESSION_CPUS]);
	return NL_OK;
}

static int sess_op(struct nl_sock *sk, int family, uint8_t cmd, uint32_t id,
		   struct sess *s)
{
	struct nl_msg *msg = kpm_nl_msg(family, cmd, 0);
	struct kpm_ack ack;

	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return kpm_nl_talk(sk, msg, sess_cb, s, &ack);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

FIXTURE(dump) {
	struct nl_sock *sk;
	int family, fd;
	uint32_t ifindex[NDEVS];
	struct sess s;
};

/* "ip -force -batch -" of one command per veth, @fmt taking its index */
static int ip_batch(const char *fmt, bool quiet)
{
	FILE *ip = popen(quiet ? "ip -force -batch - 2>/dev/null" :
			 "ip -force -batch -", "w");
	int i;

	if (!ip)
		return -1;
	for (i = 0; i < NDEVS; i++) {
		fprintf(ip, fmt, i);
		fputc('\n', ip);
	}
	return pclose(ip);
}

/*
 * The sixteen veth, made once for all tests (the harness forks each from
 * this process) and deleted when it exits: under KASAN and lockdep in TCG,
 * making and deleting them for each test took most of the run. Ones that
 * a killed run left are replaced.
 */
static void __attribute__((constructor)) make_veths(void)
{
	ip_batch("link del kpmd%d", true);
	if (ip_batch("link add kpmd%1$d type veth peer name kpmd%1$dp", false) ||
	    ip_batch("link set kpmd%d up", false))
		fprintf(stderr, "# dump_test: cannot make the veth\n");
}

static void __attribute__((destructor)) delete_veths(void)
{
	ip_batch("link del kpmd%d", true);
}

FIXTURE_SETUP(dump)
{
	struct nl_msg *msg;
	struct kpm_ack ack;
	char name[IF_NAMESIZE];
	int i;

	read_possible();
	self->sk = kpm_nl_socket(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LE(0, self->family);
	self->fd = raw_socket();
	ASSERT_LE(0, self->fd);
	for (i = 0; i < NDEVS; i++) {
		snprintf(name, sizeof(name), "kpmd%d", i);
		self->ifindex[i] = if_nametoindex(name);
		ASSERT_NE(0, self->ifindex[i]);
	}
	memset(&self->s, 0, sizeof(self->s));
	msg = kpm_nl_msg(self->family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	for (i = 0; i < NDEVS; i++)
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, self->ifindex[i]);
	/* the fastest the kernel takes, into a ring of four */
	nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, 100000);
	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 4);
	ASSERT_EQ(0, kpm_nl_talk(self->sk, msg, sess_cb, &self->s, &ack)) {
		TH_LOG("session-new: %s", ack.msg);
	}
	ASSERT_EQ(0, sess_op(self->sk, self->family,
			     KSFT_PERFMON_CMD_SESSION_GET, self->s.id, &self->s));
	nr_ids = self->s.cpus;
	ASSERT_LT(0, nr_ids);
	ASSERT_GE(MAX_IDS, nr_ids);
}

FIXTURE_TEARDOWN(dump)
{
	struct sess s;

	sess_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL,
		self->s.id, &s);
	close(self->fd);
	nl_socket_free(self->sk);
}

/* wait until the session has taken @n samples */
static void wait_samples(FIXTURE_DATA(dump) *self, uint64_t n)
{
	int i;

	for (i = 0; i < 2000 && self->s.samples < n; i++) {
		sleep_ns(5 * MS);
		sess_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_GET,
			self->s.id, &self->s);
	}
}

/*
 * Dump from the cursor after the last sample received until @n samples
 * have come, waiting a millisecond after a dump that brought none: a dump
 * returns at once with what the ring holds, and 64 vCPUs under TCG take
 * far fewer samples than the interval asks for.
 */
static void dump_until(FIXTURE_DATA(dump) *self, struct dump *d, int n,
		       int bufsize)
{
	int i, had;

	for (i = 0; i < 5000 && d->samples < n && !d->bad[0] && !d->done_err;
	     i++) {
		had = d->samples;
		dump(self->fd, self->family, self->s.id,
		     d->samples ? d->last_seq + 1 : 0, bufsize, self->ifindex,
		     d, NULL, NULL);
		if (d->samples == had)
			sleep_ns(MS);
	}
}

/*
 * A reader that peeks at each skb and reads just that much never asks for
 * more than NLMSG_GOODSIZE, so netlink gives it skbs of that size, less
 * than a page. A sample of sixteen netdevs and four CPUs (about 3.9 KB;
 * twenty-five stats of 8 bytes at least a netdev) does not fit in one: it
 * comes in several parts, each continuing the last, every netdev and
 * every possible CPU once, the last part marked. (A reader of 4 KiB gets
 * skbs of 4 KiB, and whether such a sample is split depends on the size
 * of its counters.)
 */
TEST_F_TIMEOUT(dump, parts_cover_every_netdev_and_cpu_once, SLOW)
{
	struct dump d = {};

	wait_samples(self, 8);
	dump_until(self, &d, 8, 0);
	EXPECT_STREQ("", d.bad);
	EXPECT_EQ(0, d.done_err);
	EXPECT_EQ(0, d.truncated);
	EXPECT_LE(8, d.samples);
	/* with fewer than four CPUs (KPM_SMP) a sample may fit */
	if (d.largest_sample <= d.largest_skb)
		SKIP(return, "samples of %zu B fit reads of %zu B",
		     d.largest_sample, d.largest_skb);
	EXPECT_LE(2, d.most_parts);
	TH_LOG("%d samples in %d parts, at most %d a sample, %u CPU ids; skbs of %zu B, samples of %zu B",
	       d.samples, d.parts, d.most_parts, nr_ids, d.largest_skb,
	       d.largest_sample);
}

/*
 * A reader that receives into 32 KiB never sees MSG_TRUNC, whatever the
 * size of a sample: the family asks netlink for no larger skb.
 */
TEST_F_TIMEOUT(dump, no_message_truncated_in_32k, SLOW)
{
	struct dump d = {};

	wait_samples(self, 8);
	dump_until(self, &d, 8, 32768);
	EXPECT_EQ(0, d.truncated);
	EXPECT_STREQ("", d.bad);
	EXPECT_LE(8, d.samples);
	TH_LOG("%d samples in %d parts, at most %d a sample",
	       d.samples, d.parts, d.most_parts);
}

static void pause_1ms(void *arg)
{
	sleep_ns(MS);
}

/*
 * A reader far slower than the sampler (a ring of four at 100 us, and
 * 1 ms between its reads): the ring is overwritten under it, between the
 * parts of a sample too. What it receives are whole samples; what it
 * misses are whole samples, and the kernel counted each of them lost.
 */
TEST_F_TIMEOUT(dump, slow_reader_loses_only_whole_samples, SLOW)
{
	struct dump d = {};
	int i;

	/* a dump brings what the ring holds: up to four, or none */
	for (i = 0; i < 2000 && d.samples < 100 && !d.bad[0]; i++)
		dump(self->fd, self->family, self->s.id,
		     d.samples ? d.last_seq + 1 : 0, 4096, self->ifindex, &d,
		     pause_1ms, NULL);
	ASSERT_EQ(0, sess_op(self->sk, self->family,
			     KSFT_PERFMON_CMD_SESSION_GET, self->s.id,
			     &self->s));
	EXPECT_STREQ("", d.bad);
	EXPECT_LE(100, d.samples);
	/* every gap the reader saw the kernel counted; it counts on later */
	EXPECT_LE(d.gaps + d.first_seq, self->s.lost);
	EXPECT_LT(0, d.gaps);
	TH_LOG("%d samples received, %llu missed between them, %llu lost by the kernel's count",
	       d.samples, (unsigned long long)d.gaps,
	       (unsigned long long)self->s.lost);
}

struct deleter {
	FIXTURE_DATA(dump) *self;
	uint32_t id;
	int recvs;
};

static void delete_after_first(void *arg)
{
	struct deleter *del = arg;
	struct sess s;

	if (del->recvs++ == 0)
		sess_op(del->self->sk, del->self->family,
			KSFT_PERFMON_CMD_SESSION_DEL, del->id, &s);
}

/*
 * A session destroyed under a dump ends it with an error, not success.
 * A session of its own, 10 ms and a ring of 64, so that twenty samples
 * wait in it and the dump is far from its end when the session goes.
 */
TEST_F_TIMEOUT(dump, session_destroyed_mid_dump_fails_it, SLOW)
{
	struct deleter del = { self, 0, 0 };
	struct sess s = {};
	struct nl_msg *msg;
	struct kpm_ack ack;
	struct dump d = {};
	int i;

	msg = kpm_nl_msg(self->family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	for (i = 0; i < NDEVS; i++)
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, self->ifindex[i]);
	nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, 10 * MS);
	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 64);
	ASSERT_EQ(0, kpm_nl_talk(self->sk, msg, sess_cb, &s, &ack));
	del.id = s.id;
	for (i = 0; i < 2000 && s.samples < 20; i++) {
		sleep_ns(5 * MS);
		sess_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_GET,
			del.id, &s);
	}
	ASSERT_LE(20, s.samples);
	dump(self->fd, self->family, del.id, 0, 4096, self->ifindex, &d,
	     delete_after_first, &del);
	EXPECT_STREQ("", d.bad);
	EXPECT_EQ(-ENOENT, d.done_err);
	EXPECT_STREQ("the session was destroyed during the dump", d.done_msg);
	EXPECT_GT(20, d.samples);
	TH_LOG("%d samples, %d parts before the error", d.samples, d.parts);
}

/*
 * debugfs's latest: the session's newest sample, its sixteen netdevs and
 * every possible CPU once and in order, through as many reads of a
 * small buffer as it takes (the file is a line at a time).
 */
TEST_F_TIMEOUT(dump, debugfs_latest_has_every_netdev_and_cpu, SLOW)
{
	char want[64], line[512];
	uint32_t devs = 0, next = 0, cpu;
	bool mine = false, found = false;
	FILE *f;

	wait_samples(self, 2);
	f = fopen("/sys/kernel/debug/ksft_perfmon/latest", "r");
	ASSERT_NE(NULL, f);
	/* stdio's reads of a page at most, so the file is read in many */
	setvbuf(f, NULL, _IOFBF, 512);
	snprintf(want, sizeof(want), "session %u seq ", self->s.id);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "session ", 8)) {
			mine = !strncmp(line, want, strlen(want));
			found |= mine;
			continue;
		}
		if (!mine)
			continue;
		if (!strncmp(line, "  dev ", 6)) {
			EXPECT_EQ(self->ifindex[devs], strtoul(line + 6, NULL, 10));
			devs++;
		} else if (sscanf(line, "  cpu%u", &cpu) == 1) {
			while (next < cpu && !possible[next])
				next++;
			EXPECT_EQ(next, cpu);
			next = cpu + 1;
		}
	}
	fclose(f);
	while (next < nr_ids && !possible[next])
		next++;
	EXPECT_TRUE(found);
	EXPECT_EQ(NDEVS, devs);
	EXPECT_EQ(nr_ids, next);
}

TEST_HARNESS_MAIN
