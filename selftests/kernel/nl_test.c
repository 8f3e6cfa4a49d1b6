// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the ksft_perfmon netlink family and of what it samples, against
 * the real module. Run as root in a throwaway kernel (selftests/run.sh).
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ksft_perfmon.h>

#include "kselftest_harness.h"
#include "nl.h"
#include "samples.h"

#define MS	1000000ULL
/*
 * For tests that create and delete netdevs and netns, or loop a thousand
 * times: under KASAN and lockdep in TCG, on a busy host, they can take
 * longer than the harness's default 30 s. A limit, not a measurement.
 */
#define KPM_SLOW_TIMEOUT 300
#define MAX_CPUS 512

/* The outcome of one request. */
struct res {
	struct kpm_ack ack;
	/* session replies: how many, how many session_parse() refused, the last */
	int nsessions, malformed;
	struct session s;
};

struct smp {
	uint64_t seq, time;
	bool cpu_present[MAX_CPUS], cpu_online[MAX_CPUS];
	uint64_t cpu[MAX_CPUS][10];
	int ndevs;
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX];
	bool gone[KSFT_PERFMON_DEVS_MAX];
	uint64_t stats[KSFT_PERFMON_DEVS_MAX][KPM_DEV_NR_STATS];
};

struct samples {
	int n;
	struct smp s[512];
};

static int session_cb(struct nl_msg *msg, void *arg)
{
	struct res *r = arg;

	r->nsessions++;
	if (session_parse(nlmsg_hdr(msg), &r->s))
		r->malformed++;
	return NL_OK;
}

static int sample_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KSFT_PERFMON_A_SAMPLE_MAX + 1], *a, *n[32];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct samples *ss = arg;
	struct smp *s;
	uint64_t seq;
	int rem, i;

	genlmsg_parse(nlh, 0, tb, KSFT_PERFMON_A_SAMPLE_MAX, NULL);
	seq = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SAMPLE_SEQ]);
	if (!ss->n || ss->s[ss->n - 1].seq != seq) {
		if (ss->n == (int)(sizeof(ss->s) / sizeof(ss->s[0])))
			return NL_OK;
		s = &ss->s[ss->n++];
		memset(s, 0, sizeof(*s));
		s->seq = seq;
		s->time = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SAMPLE_TIME]);
	}
	s = &ss->s[ss->n - 1];
	nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem) {
		if (nla_type(a) == KSFT_PERFMON_A_SAMPLE_CPU) {
			uint32_t c;

			nla_parse_nested(n, KSFT_PERFMON_A_CPU_STATS_MAX, a, NULL);
			c = nla_get_u32(n[KSFT_PERFMON_A_CPU_STATS_ID]);
			if (c >= MAX_CPUS)
				continue;
			s->cpu_present[c] = true;
			s->cpu_online[c] = !!n[KSFT_PERFMON_A_CPU_STATS_ONLINE];
			for (i = 0; i < 10; i++)
				s->cpu[c][i] = kpm_nla_get_uint(n[KSFT_PERFMON_A_CPU_STATS_USER + i]);
		} else if (nla_type(a) == KSFT_PERFMON_A_SAMPLE_DEV) {
			int d = s->ndevs++;

			nla_parse_nested(n, KSFT_PERFMON_A_DEV_STATS_MAX, a, NULL);
			s->ifindex[d] = nla_get_u32(n[KSFT_PERFMON_A_DEV_STATS_IFINDEX]);
			s->gone[d] = !!n[KSFT_PERFMON_A_DEV_STATS_GONE];
			for (i = 0; i < KPM_DEV_NR_STATS && !s->gone[d]; i++)
				s->stats[d][i] = kpm_nla_get_uint(n[KSFT_PERFMON_A_DEV_STATS_RX_PACKETS + i]);
		}
	}
	return NL_OK;
}

/*
 * Send @msg; session replies go into @r unless @valid takes them. A
 * session reply that session_parse() refuses fails the request, -EBADMSG.
 */
static int kpm_talk(struct nl_sock *sk, struct nl_msg *msg, struct res *r,
		    nl_recvmsg_msg_cb_t valid, void *arg)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = kpm_nl_talk(sk, msg, valid ? valid : session_cb,
			 valid ? arg : r, &r->ack);
	return rc ? rc : r->malformed ? -EBADMSG : 0;
}

static int session_new(struct nl_sock *sk, int family, const uint32_t *ifindex,
		       int ndevs, uint64_t interval, uint32_t ring,
		       struct res *r)
{
	struct nl_msg *msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	int i;

	for (i = 0; i < ndevs; i++)
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, ifindex[i]);
	if (interval)
		nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, interval);
	if (ring)
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, ring);
	return kpm_talk(sk, msg, r, NULL, NULL);
}

static int session_id_op(struct nl_sock *sk, int family, uint8_t cmd,
			 uint32_t id, struct res *r)
{
	struct nl_msg *msg = kpm_nl_msg(family, cmd, 0);

	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return kpm_talk(sk, msg, r, NULL, NULL);
}

static int session_count(struct nl_sock *sk, int family)
{
	struct res r;

	kpm_talk(sk, kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_GET, NLM_F_DUMP),
		 &r, NULL, NULL);
	return r.ack.err ? -1 : r.nsessions;
}

static int sample_get(struct nl_sock *sk, int family, uint32_t id,
		      uint64_t cursor, struct samples *ss, struct res *r)
{
	struct nl_msg *msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SAMPLE_GET,
				     NLM_F_DUMP);

	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, id);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_CURSOR, cursor);
	ss->n = 0;
	return kpm_talk(sk, msg, r, sample_cb, ss);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

/* Wait until session @id has taken at least @n samples. */
static int wait_samples(struct nl_sock *sk, int family, uint32_t id,
			uint64_t n)
{
	struct res r;
	int i;

	for (i = 0; i < 2000; i++) {
		if (session_id_op(sk, family, KSFT_PERFMON_CMD_SESSION_GET, id,
				  &r))
			return r.ack.err;
		if (r.s.samples >= n)
			return 0;
		sleep_ms(5);
	}
	return -ETIMEDOUT;
}

static int sh(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
}

static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo, hi = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%d-%d", &lo, &hi) < 1)
		hi = -1;
	fclose(f);
	return hi + 1;
}

/* How many CPUs are possible: the module's num_possible_cpus(). */
static int count_possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo, hi, n = 0;
	char sep = ',';

	if (!f)
		return -1;
	while (sep == ',' && fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    (fscanf(f, "%d", &hi) != 1 || fscanf(f, "%c", &sep) != 1))
			sep = 0;
		n += hi - lo + 1;
	}
	fclose(f);
	return n;
}

/* Send @n Ethernet frames out of @ifname with a packet socket. */
static int send_frames(const char *ifname, int n)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_halen = ETH_ALEN,
	};
	unsigned char frame[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0xb5,	/* local experimental ethertype */
	};
	int fd, i;

	sll.sll_ifindex = if_nametoindex(ifname);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || !sll.sll_ifindex)
		return -1;
	for (i = 0; i < n; i++)
		if (sendto(fd, frame, sizeof(frame), 0,
			   (struct sockaddr *)&sll, sizeof(sll)) != sizeof(frame))
			break;
	close(fd);
	return i;
}

/*
 * Drop root for nobody, and be dumpable again (setresuid() clears it), so
 * that /proc/self stays ours to write, as a user namespace's maps need.
 */
static int become_nobody(void)
{
	return setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534) ||
	       prctl(PR_SET_DUMPABLE, 1) ? -1 : 0;
}

FIXTURE(kpm) {
	struct nl_sock *sk;
	int family;
};

FIXTURE_SETUP(kpm)
{
	self->sk = kpm_nl_socket(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, self->family) TH_LOG("ksft_perfmon module not loaded");
}

FIXTURE_TEARDOWN(kpm)
{
	nl_socket_free(self->sk);
}

TEST_F(kpm, session_lifecycle)
{
	int before = session_count(self->sk, self->family);
	struct res r;
	uint32_t id;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, 16, &r));
	id = r.s.id;
	EXPECT_LT(0, id);
	EXPECT_EQ(before + 1, session_count(self->sk, self->family));

	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 3));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	EXPECT_EQ(id, r.s.id);
	EXPECT_EQ(10 * MS, r.s.interval);
	EXPECT_EQ(16, r.s.ring_size);
	EXPECT_EQ(possible_cpus(), (int)r.s.cpus);
	EXPECT_LE(3, r.s.samples);
	EXPECT_EQ(0, r.s.lost);

	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, id, &r));
	EXPECT_EQ(before, session_count(self->sk, self->family));
	EXPECT_EQ(-ENOENT, session_id_op(self->sk, self->family,
					 KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	EXPECT_STREQ("no such session", r.ack.msg);
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_ID, r.ack.bad_attr);
	EXPECT_EQ(-ENOENT, session_id_op(self->sk, self->family,
					 KSFT_PERFMON_CMD_SESSION_DEL, id, &r));
}

/* Requests with a bad attribute: the errno, the attribute, no session. */
FIXTURE(bounds) {
	struct nl_sock *sk;
	int family;
};

FIXTURE_SETUP(bounds)
{
	self->sk = kpm_nl_socket(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, self->family) TH_LOG("ksft_perfmon module not loaded");
}

FIXTURE_TEARDOWN(bounds)
{
	nl_socket_free(self->sk);
}

FIXTURE_VARIANT(bounds) {
	uint64_t interval;
	uint32_t ring;
	int err;
	int bad_attr;
	const char *msg;
	bool with_lo;	/* sample lo too: a larger sample */
};

FIXTURE_VARIANT_ADD(bounds, interval_below_min) {
	.interval = KSFT_PERFMON_INTERVAL_MIN - 1, .ring = 16, .err = -ERANGE,
	.bad_attr = KSFT_PERFMON_A_SESSION_INTERVAL, .msg = "integer out of range",
};
FIXTURE_VARIANT_ADD(bounds, interval_above_max) {
	.interval = KSFT_PERFMON_INTERVAL_MAX + 1, .ring = 16, .err = -ERANGE,
	.bad_attr = KSFT_PERFMON_A_SESSION_INTERVAL, .msg = "integer out of range",
};
FIXTURE_VARIANT_ADD(bounds, ring_below_min) {
	.interval = 10 * MS, .ring = KSFT_PERFMON_RING_SIZE_MIN - 1, .err = -ERANGE,
	.bad_attr = KSFT_PERFMON_A_SESSION_RING_SIZE, .msg = "integer out of range",
};
FIXTURE_VARIANT_ADD(bounds, ring_above_max) {
	.interval = 10 * MS, .ring = KSFT_PERFMON_RING_SIZE_MAX + 1, .err = -ERANGE,
	.bad_attr = KSFT_PERFMON_A_SESSION_RING_SIZE, .msg = "integer out of range",
};
FIXTURE_VARIANT_ADD(bounds, ring_over_memory_cap) {
	/* 65536 samples of a netdev and 2 CPUs are over 16 MiB */
	.interval = 10 * MS, .ring = KSFT_PERFMON_RING_SIZE_MAX, .err = -EINVAL,
	.with_lo = true,
	.bad_attr = KSFT_PERFMON_A_SESSION_RING_SIZE, .msg = "session of",
};
FIXTURE_VARIANT_ADD(bounds, bounds_accepted) {
	.interval = KSFT_PERFMON_INTERVAL_MIN, .ring = KSFT_PERFMON_RING_SIZE_MIN,
};

TEST_F(bounds, session_new)
{
	int before = session_count(self->sk, self->family);
	const uint32_t lo = 1;
	struct res r;
	int err;

	err = session_new(self->sk, self->family, &lo, variant->with_lo,
			  variant->interval, variant->ring, &r);
	EXPECT_EQ(variant->err, err);
	if (variant->err) {
		EXPECT_EQ(variant->bad_attr, r.ack.bad_attr);
		EXPECT_EQ(0, strncmp(variant->msg, r.ack.msg, strlen(variant->msg)))
			TH_LOG("extack: '%s'", r.ack.msg);
		EXPECT_EQ(before, session_count(self->sk, self->family));
	} else {
		EXPECT_EQ(before + 1, session_count(self->sk, self->family));
		EXPECT_EQ(0, session_id_op(self->sk, self->family,
					   KSFT_PERFMON_CMD_SESSION_DEL, r.s.id, &r));
	}
}

TEST_F(kpm, session_new_requires_interval_and_ring)
{
	struct res r;

	EXPECT_EQ(-EINVAL, session_new(self->sk, self->family, NULL, 0, 0, 16, &r));
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_INTERVAL, r.ack.miss_attr);
	EXPECT_EQ(-EINVAL, session_new(self->sk, self->family, NULL, 0, 10 * MS, 0, &r));
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_RING_SIZE, r.ack.miss_attr);
}

TEST_F(kpm, session_new_rejects_unknown_ifindex)
{
	int before = session_count(self->sk, self->family);
	uint32_t ifindex[2] = { 1, 999999 };
	struct res r;

	EXPECT_EQ(-ENODEV, session_new(self->sk, self->family, ifindex, 2,
				       10 * MS, 16, &r));
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_IFINDEX, r.ack.bad_attr);
	EXPECT_STREQ("no netdev with this ifindex in the network namespace", r.ack.msg);
	EXPECT_EQ(before, session_count(self->sk, self->family));
}

TEST_F(kpm, session_new_rejects_duplicate_and_too_many_netdevs)
{
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX + 1];
	struct res r;
	int i;

	ifindex[0] = ifindex[1] = 1;
	EXPECT_EQ(-EINVAL, session_new(self->sk, self->family, ifindex, 2,
				       10 * MS, 16, &r));
	EXPECT_STREQ("netdev given twice", r.ack.msg);
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_IFINDEX, r.ack.bad_attr);

	for (i = 0; i <= KSFT_PERFMON_DEVS_MAX; i++)
		ifindex[i] = i + 1;
	EXPECT_EQ(-E2BIG, session_new(self->sk, self->family, ifindex,
				      KSFT_PERFMON_DEVS_MAX + 1, 10 * MS, 16, &r));
	EXPECT_STREQ("more than 16 netdevs", r.ack.msg);
}

/* queues: of a netdev, and within the spec's bounds; refused, nothing made */
TEST_F(kpm, session_new_rejects_bad_queues)
{
	int before = session_count(self->sk, self->family);
	static const struct {
		int ndevs;
		uint32_t queues;
		int err;
		const char *msg;
	} cases[] = {
		{ 0, 4, -EINVAL, "queues of no netdev: give an ifindex" },
		{ 1, 0, -ERANGE, "integer out of range" },
		{ 1, KSFT_PERFMON_QUEUES_MAX + 1, -ERANGE, "integer out of range" },
	};
	const uint32_t lo = 1;
	struct nl_msg *msg;
	struct res r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		msg = kpm_nl_msg(self->family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
		if (cases[i].ndevs)
			nla_put_u32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, lo);
		nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, 10 * MS);
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 16);
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_QUEUES, cases[i].queues);
		EXPECT_EQ(cases[i].err, kpm_talk(self->sk, msg, &r, NULL, NULL));
		EXPECT_EQ(KSFT_PERFMON_A_SESSION_QUEUES, r.ack.bad_attr);
		EXPECT_STREQ(cases[i].msg, r.ack.msg);
	}
	EXPECT_EQ(before, session_count(self->sk, self->family));
}

TEST_F(kpm, session_dies_with_its_socket)
{
	struct nl_sock *owner;
	struct res r;
	int family, i;
	uint32_t id;

	owner = kpm_nl_socket(&family);
	ASSERT_NE(NULL, owner);
	ASSERT_EQ(0, session_new(owner, family, NULL, 0, 10 * MS, 16, &r));
	id = r.s.id;
	/* root sees the session of another socket */
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	nl_socket_free(owner);
	for (i = 0; i < 100; i++) {
		if (session_id_op(self->sk, self->family,
				  KSFT_PERFMON_CMD_SESSION_GET, id, &r))
			break;
		sleep_ms(10);
	}
	EXPECT_EQ(-ENOENT, r.ack.err);
}

TEST_F_TIMEOUT(kpm, create_delete_1000_cycles, KPM_SLOW_TIMEOUT)
{
	int before = session_count(self->sk, self->family), i, fails = 0;
	struct res r;

	for (i = 0; i < 1000; i++) {
		fails += !!session_new(self->sk, self->family, NULL, 0, MS, 2, &r);
		fails += !!session_id_op(self->sk, self->family,
					 KSFT_PERFMON_CMD_SESSION_DEL, r.s.id, &r);
	}
	EXPECT_EQ(0, fails);
	EXPECT_EQ(before, session_count(self->sk, self->family));
}

/* The module's limits, as Documentation/admin-guide.rst gives them. */
#define OWNER_SESSIONS	16
#define ALL_SESSIONS	256
#define OWNER_MEM	(16UL << 20)
#define ALL_MEM		(64UL << 20)
#define READ_BUDGET	"/sys/module/ksft_perfmon/parameters/read_budget"

/*
 * Create sessions on @sk until one is refused; the number created, the
 * refusal in @r. Every session samples every second, so that hundreds of
 * them cost little.
 */
static int fill(struct nl_sock *sk, int family, uint32_t ring, struct res *r)
{
	int n = 0;

	while (n <= ALL_SESSIONS &&
	       !session_new(sk, family, NULL, 0, 1000 * MS, ring, r))
		n++;
	return n;
}

/*
 * Four processes fill their sockets at once. Each gets its own limit, not
 * a share of the module's, and the socket at its limit leaves room for
 * another: the fixture's still creates a session.
 */
TEST_F_TIMEOUT(kpm, a_socket_at_its_limit_leaves_room, KPM_SLOW_TIMEOUT)
{
	int ready[2], go[2], i, status, n;
	const int nproc = 4;
	pid_t pid[4];
	struct res r;
	char c;

	ASSERT_EQ(0, session_count(self->sk, self->family));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < nproc; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			struct nl_sock *sk;
			int family;

			sk = kpm_nl_socket(&family);
			if (!sk)
				_exit(100);
			n = fill(sk, family, 2, &r);
			if (r.ack.err != -ENOSPC ||
			    strcmp(r.ack.msg, "a socket may own 16 sessions, and this one does"))
				_exit(101);
			if (write(ready[1], "r", 1) != 1 ||
			    read(go[0], &c, 1) != 1)
				_exit(102);
			_exit(n);	/* closes the socket */
		}
	}
	for (i = 0; i < nproc; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(nproc * OWNER_SESSIONS, session_count(self->sk, self->family));
	EXPECT_EQ(0, session_new(self->sk, self->family, NULL, 0, 1000 * MS, 2, &r))
		TH_LOG("refused: %s", r.ack.msg);
	for (i = 0; i < nproc; i++)
		ASSERT_EQ(1, write(go[1], "g", 1));
	for (i = 0; i < nproc; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_EQ(OWNER_SESSIONS, WEXITSTATUS(status));
	}
	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, r.s.id, &r));
	for (i = 0; i < 100 && session_count(self->sk, self->family); i++)
		sleep_ms(10);
	EXPECT_EQ(0, session_count(self->sk, self->family));
}

/* 16 sockets at their limit fill the module; the 257th session is refused. */
TEST_F_TIMEOUT(kpm, sessions_up_to_the_module_limit, KPM_SLOW_TIMEOUT)
{
	const int nsk = ALL_SESSIONS / OWNER_SESSIONS;
	struct nl_sock *sk[ALL_SESSIONS / OWNER_SESSIONS];
	int family, i, n = 0;
	struct res r;

	ASSERT_EQ(0, session_count(self->sk, self->family));
	for (i = 0; i < nsk; i++) {
		sk[i] = kpm_nl_socket(&family);
		ASSERT_NE(NULL, sk[i]);
		n += fill(sk[i], family, 2, &r);
	}
	EXPECT_EQ(ALL_SESSIONS, n);
	EXPECT_EQ(-ENOSPC, session_new(self->sk, self->family, NULL, 0,
				       1000 * MS, 2, &r));
	EXPECT_STREQ("the module may have 256 sessions, and does", r.ack.msg);
	for (i = 0; i < nsk; i++)
		nl_socket_free(sk[i]);
	for (i = 0; i < 200 && session_count(self->sk, self->family); i++)
		sleep_ms(10);
	EXPECT_EQ(0, session_count(self->sk, self->family));
}

/*
 * Sessions of a little under 8 MiB, a ring and three samples (its work's
 * scratch and its readers' two): two fit a socket's 16 MiB, the third is
 * refused, and another socket still gets one. Four sockets with two each
 * leave less than a ring of the module's 64 MiB, and the fifth is refused
 * with what is left. The numbers are worked out here from the sample size,
 * not taken from the refusal.
 */
TEST_F_TIMEOUT(kpm, ring_memory_limits, KPM_SLOW_TIMEOUT)
{
	struct nl_sock *sk[5];
	unsigned long bytes;
	char want[128];
	uint32_t ring;
	int family, i;
	struct res r;

	ASSERT_EQ(0, session_count(self->sk, self->family));
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 1000 * MS, 2, &r));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, r.s.id, &r));
	ASSERT_LT(0, r.s.sample_size);
	/* a session takes its ring and three samples more: its buffers */
	ring = (OWNER_MEM / 2) / r.s.sample_size - 3;
	bytes = (unsigned long)(ring + 3) * r.s.sample_size;
	TH_LOG("rings of %u samples of %u bytes", ring, r.s.sample_size);
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, r.s.id, &r));

	for (i = 0; i < 5; i++) {
		sk[i] = kpm_nl_socket(&family);
		ASSERT_NE(NULL, sk[i]);
	}
	EXPECT_EQ(2, fill(sk[0], family, ring, &r));
	EXPECT_EQ(-ENOSPC, r.ack.err);
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_RING_SIZE, r.ack.bad_attr);
	snprintf(want, sizeof(want),
		 "session of %lu bytes is over the %lu left of a socket's %lu",
		 bytes, OWNER_MEM - 2 * bytes, OWNER_MEM);
	EXPECT_STREQ(want, r.ack.msg);

	for (i = 1; i < 4; i++)
		EXPECT_EQ(2, fill(sk[i], family, ring, &r));
	EXPECT_EQ(0, fill(sk[4], family, ring, &r));
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_RING_SIZE, r.ack.bad_attr);
	snprintf(want, sizeof(want),
		 "session of %lu bytes is over the %lu left of the module's %lu",
		 bytes, ALL_MEM - 8 * bytes, ALL_MEM);
	EXPECT_STREQ(want, r.ack.msg);

	for (i = 0; i < 5; i++)
		nl_socket_free(sk[i]);
	for (i = 0; i < 200 && session_count(self->sk, self->family); i++)
		sleep_ms(10);
	EXPECT_EQ(0, session_count(self->sk, self->family));
}

static unsigned long long read_param(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int write_param(const char *path, unsigned long long v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%llu\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Tests that change read_budget: the teardown puts it back. */
FIXTURE(budget) {
	struct nl_sock *sk;
	int family;
	unsigned long long saved;
};

FIXTURE_SETUP(budget)
{
	self->saved = read_param(READ_BUDGET);
	ASSERT_LT(0, self->saved) TH_LOG("cannot read " READ_BUDGET);
	self->sk = kpm_nl_socket(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, self->family) TH_LOG("ksft_perfmon module not loaded");
}

FIXTURE_TEARDOWN(budget)
{
	write_param(READ_BUDGET, self->saved);
	nl_socket_free(self->sk);
}

/*
 * A session costs its CPUs and netdevs once per interval, in reads per
 * second, counted here from the possible CPUs. With the budget set just
 * above one session's cost, the second is refused, pointing at interval;
 * raising the module parameter lets it in.
 */
TEST_F(budget, refuses_with_its_extack_and_the_parameter_raises_it)
{
	unsigned long long cost = (count_possible_cpus() + 1) * 1000ULL;
	const uint32_t lo = 1;
	char want[128];
	uint32_t id[2];
	struct res r;

	ASSERT_EQ(0, session_count(self->sk, self->family));
	ASSERT_EQ(0, write_param(READ_BUDGET, cost + 10));

	/* lo and every CPU each millisecond */
	EXPECT_EQ(0, session_new(self->sk, self->family, &lo, 1, MS, 2, &r));
	id[0] = r.s.id;
	EXPECT_EQ(-ENOSPC, session_new(self->sk, self->family, &lo, 1, MS, 2, &r));
	EXPECT_EQ(KSFT_PERFMON_A_SESSION_INTERVAL, r.ack.bad_attr);
	snprintf(want, sizeof(want),
		 "%llu reads/s is over the 10 left of read_budget=%llu",
		 cost, cost + 10);
	EXPECT_STREQ(want, r.ack.msg);

	EXPECT_EQ(0, write_param(READ_BUDGET, 2 * cost));
	EXPECT_EQ(0, session_new(self->sk, self->family, &lo, 1, MS, 2, &r));
	id[1] = r.s.id;

	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, id[0], &r));
	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, id[1], &r));
}

/*
 * SIGKILL while a sample-get dump is half read: the dump ends with the
 * socket and the session with it (kmemleak checks the rest on the debug
 * kernel).
 */
TEST_F_TIMEOUT(kpm, killed_in_the_middle_of_a_dump, KPM_SLOW_TIMEOUT)
{
	int ready[2], i, status;
	char buf[4096];
	struct res r;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct nl_sock *sk;
		struct nl_msg *msg;
		int family;

		sk = kpm_nl_socket(&family);
		if (!sk || session_new(sk, family, NULL, 0, MS / 10, 2048, &r) ||
		    wait_samples(sk, family, r.s.id, 1000))
			_exit(1);
		msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SAMPLE_GET, NLM_F_DUMP);
		nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, r.s.id);
		/*
		 * One buffer of the dump, not the rest; the kernel dumps on
		 * into the socket until its small receive buffer is full, so
		 * it takes samples for many buffers to stay pending.
		 */
		if (nl_socket_set_buffer_size(sk, 4096, 0) ||
		    nl_send_auto(sk, msg) < 0 ||
		    recv(nl_socket_get_fd(sk), buf, sizeof(buf), 0) <= 0 ||
		    kpm_nl_dump_running(sk) != 1)
			_exit(2);
		if (write(ready[1], &r.s.id, sizeof(r.s.id)) != sizeof(r.s.id))
			_exit(3);
		pause();
		_exit(4);
	}
	ASSERT_EQ(sizeof(r.s.id), read(ready[0], &r.s.id, sizeof(r.s.id)));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, r.s.id, &r));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	for (i = 0; i < 100; i++) {
		if (session_id_op(self->sk, self->family,
				  KSFT_PERFMON_CMD_SESSION_GET, r.s.id, &r))
			break;
		sleep_ms(10);
	}
	EXPECT_EQ(-ENOENT, r.ack.err);
}

/*
 * A session samples a veth in a netns that is deleted meanwhile. The
 * owning socket keeps the netns alive, so sampling goes on; once the
 * socket closes, the netns is torn down with both ends of the veth: the
 * module kept no reference that would hold them.
 */
TEST_F_TIMEOUT(kpm, netns_deleted_while_sampling, KPM_SLOW_TIMEOUT)
{
	static struct samples a;
	int self_ns, other_ns, family, i;
	struct nl_sock *sk;
	uint32_t ifindex;
	struct res r;

	ASSERT_EQ(0, sh("ip netns add kpm-gone && "
			"ip link add kpm-g0 type veth peer name kpm-g1 && "
			"ip link set kpm-g0 netns kpm-gone"));
	self_ns = open("/proc/self/ns/net", O_RDONLY);
	other_ns = open("/run/netns/kpm-gone", O_RDONLY);
	ASSERT_LE(0, self_ns);
	ASSERT_LE(0, other_ns);
	ASSERT_EQ(0, setns(other_ns, CLONE_NEWNET));
	sk = kpm_nl_socket(&family);	/* a socket of that netns */
	ifindex = if_nametoindex("kpm-g0");
	ASSERT_EQ(0, setns(self_ns, CLONE_NEWNET));
	close(other_ns);
	close(self_ns);
	ASSERT_NE(NULL, sk);
	ASSERT_NE(0, ifindex);

	ASSERT_EQ(0, session_new(sk, family, &ifindex, 1, MS, 64, &r));
	ASSERT_EQ(0, wait_samples(sk, family, r.s.id, 10));
	ASSERT_EQ(0, sh("ip netns del kpm-gone"));
	ASSERT_EQ(0, session_id_op(sk, family, KSFT_PERFMON_CMD_SESSION_GET,
				   r.s.id, &r));
	ASSERT_EQ(0, wait_samples(sk, family, r.s.id, r.s.samples + 10));
	ASSERT_EQ(0, sample_get(sk, family, r.s.id, r.s.samples - 1, &a, &r));
	ASSERT_LE(1, a.n);
	EXPECT_EQ(1, a.s[a.n - 1].ndevs);
	EXPECT_FALSE(a.s[a.n - 1].gone[0]);

	nl_socket_free(sk);
	for (i = 0; i < 2000 && if_nametoindex("kpm-g1"); i++)
		sleep_ms(10);
	EXPECT_EQ(0, if_nametoindex("kpm-g1"))
		TH_LOG("the netns outlived its last socket");
	EXPECT_EQ(0, session_count(self->sk, self->family));
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * What a caller without CAP_NET_ADMIN in the initial user namespace gets:
 * EPERM from genetlink for session-new, before the request is parsed (an
 * interval out of range is not what is reported), and for session-del;
 * another's session does not exist for it. @root_id is such a session.
 */
static int refusals(uint32_t root_id)
{
	struct nl_sock *sk;
	int family, fails = 0;
	uint32_t lo = 1;
	struct res r;

	sk = kpm_nl_socket(&family);
	if (!sk || family < 0)
		return 100;
	fails += session_new(sk, family, &lo, 1, 10 * MS, 16, &r) != -EPERM;
	fails += session_new(sk, family, NULL, 0, 1, 16, &r) != -EPERM;
	fails += session_id_op(sk, family, KSFT_PERFMON_CMD_SESSION_DEL,
			       root_id, &r) != -EPERM;
	fails += session_id_op(sk, family, KSFT_PERFMON_CMD_SESSION_GET,
			       root_id, &r) != -ENOENT;
	fails += strcmp(r.ack.msg, "no such session") != 0;
	fails += session_count(sk, family) != 0;
	nl_socket_free(sk);
	return fails;
}

/* Run refusals() as nobody, in a user namespace of its own when @userns. */
static int refused(uint32_t root_id, bool userns)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (become_nobody())
			_exit(101);
		if (userns &&
		    (unshare(CLONE_NEWUSER) ||
		     write_file("/proc/self/setgroups", "deny") ||
		     write_file("/proc/self/uid_map", "0 65534 1") ||
		     write_file("/proc/self/gid_map", "0 65534 1") ||
		     unshare(CLONE_NEWNET)))
			_exit(102);
		_exit(refusals(root_id));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A session reads every CPU of the host, so neither an unprivileged user
 * nor root in a user namespace of its own (with a netns of its own, as
 * in a container) may create one, or see or delete another's.
 */
TEST_F_TIMEOUT(kpm, unprivileged_and_userns_root_are_refused, KPM_SLOW_TIMEOUT)
{
	struct res r;
	uint32_t id;

	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, 16, &r));
	id = r.s.id;
	EXPECT_EQ(0, refused(id, false));
	EXPECT_EQ(0, refused(id, true));
	/* and the session is still there */
	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_DEL, id, &r));
}

/*
 * Ownership is the socket's, not its privilege: a child that drops root
 * for nobody and keeps the socket still reads the session it owns, but
 * may not delete it, and a socket nobody opens does not see it.
 */
TEST_F(kpm, owner_socket_without_privilege_reads_its_session)
{
	struct nl_sock *owner;
	int family, status;
	struct res r;
	uint32_t id;
	pid_t pid;

	owner = kpm_nl_socket(&family);
	ASSERT_NE(NULL, owner);
	ASSERT_EQ(0, session_new(owner, family, NULL, 0, 10 * MS, 16, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(owner, family, id, 2));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static struct samples ss;
		struct nl_sock *other;
		int fam, fails = 0;

		if (become_nobody())
			_exit(100);
		fails += session_id_op(owner, family, KSFT_PERFMON_CMD_SESSION_GET,
				       id, &r) != 0;
		fails += sample_get(owner, family, id, 0, &ss, &r) != 0 || ss.n < 2;
		fails += session_count(owner, family) != 1;
		fails += session_id_op(owner, family, KSFT_PERFMON_CMD_SESSION_DEL,
				       id, &r) != -EPERM;
		other = kpm_nl_socket(&fam);
		if (!other)
			_exit(101);
		fails += session_id_op(other, fam, KSFT_PERFMON_CMD_SESSION_GET,
				       id, &r) != -ENOENT;
		fails += sample_get(other, fam, id, 0, &ss, &r) != -ENOENT;
		_exit(fails);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, session_id_op(owner, family, KSFT_PERFMON_CMD_SESSION_DEL,
				   id, &r));
	nl_socket_free(owner);
}

/*
 * One request of @cmd naming session @id on the raw netlink socket @fd:
 * 0 when the kernel granted it (a reply, or a dump that ended well), else
 * its negative errno.
 */
static int probe(int fd, int family, uint8_t cmd, int flags, uint16_t attr,
		 uint32_t id)
{
	struct {
		struct nlmsghdr nlh;
		struct genlmsghdr genl;
		struct nlattr nla;
		uint32_t id;
	} req = {
		.nlh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = family,
			.nlmsg_flags = NLM_F_REQUEST | flags,
		},
		.genl = {
			.cmd = cmd,
			.version = KSFT_PERFMON_FAMILY_VERSION,
		},
		.nla = { .nla_len = NLA_HDRLEN + sizeof(id), .nla_type = attr },
		.id = id,
	};
	static char buf[32768];
	struct nlmsghdr *nlh;
	ssize_t len;

	if (send(fd, &req, sizeof(req), 0) != sizeof(req))
		return -errno;
	for (;;) {
		len = recv(fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (nlh = (void *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_type == family && !(flags & NLM_F_DUMP))
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR ||
			    nlh->nlmsg_type == NLMSG_DONE)
				return *(int *)NLMSG_DATA(nlh);
		}
	}
}

/*
 * The attacker: nobody, in the owner's netns. For each round, it reads
 * the port and session id of an owner socket, binds that port in a loop
 * until the owner is released and the bind succeeds, and at once asks for
 * the session and its samples. It writes back whether either was granted.
 */
static int port_thief(int in, int out, int family)
{
	struct { uint32_t port, id; } round;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char seen;
	int fd;

	if (become_nobody())
		return 100;
	while (read(in, &round, sizeof(round)) == sizeof(round)) {
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
		if (fd < 0)
			return 101;
		sa.nl_pid = round.port;
		if (write(out, "b", 1) != 1)	/* binding */
			return 102;
		while (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			if (errno != EADDRINUSE)
				return 103;
		seen = !probe(fd, family, KSFT_PERFMON_CMD_SESSION_GET, 0,
			      KSFT_PERFMON_A_SESSION_ID, round.id) ||
		       !probe(fd, family, KSFT_PERFMON_CMD_SAMPLE_GET,
			      NLM_F_DUMP, KSFT_PERFMON_A_SAMPLE_SESSION_ID,
			      round.id);
		close(fd);
		if (write(out, &seen, 1) != 1)
			return 104;
	}
	return 0;
}

/*
 * A session belongs to its socket, not to the socket's port: when the
 * owner is released, its port is free before NETLINK_URELEASE destroys the
 * session, and a process that binds it in that window must not see the
 * session. KPM_PORT_ROUNDS rounds (default 2000), each with a session that
 * a new owner socket of a port of its own creates and then closes.
 */
TEST_F_TIMEOUT(kpm, released_port_never_sees_the_session, KPM_SLOW_TIMEOUT)
{
	const char *env = getenv("KPM_PORT_ROUNDS");
	int rounds = env ? atoi(env) : 2000;
	int to[2], from[2], i, seen = 0, status;
	uint32_t port = 0x40000000;
	struct res r;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(to));
	ASSERT_EQ(0, pipe(from));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to[1]);
		close(from[0]);
		_exit(port_thief(to[0], from[1], self->family));
	}
	close(to[0]);
	close(from[1]);

	for (i = 0; i < rounds; i++) {
		struct { uint32_t port, id; } round;
		struct nl_sock *owner = nl_socket_alloc();
		int one = 1, err;

		ASSERT_NE(NULL, owner);
		/*
		 * libnl numbers its own sockets pid + (n << 22): in a guest,
		 * where pids are small, one of ours may hold the next port.
		 */
		do {
			round.port = port++;
			nl_socket_set_local_port(owner, round.port);
			err = genl_connect(owner);
		} while (err == -NLE_EXIST && port < 0x40000000 + 2 * rounds);
		ASSERT_EQ(0, err);
		setsockopt(nl_socket_get_fd(owner), SOL_NETLINK,
			   NETLINK_EXT_ACK, &one, sizeof(one));
		ASSERT_EQ(0, session_new(owner, self->family, NULL, 0, 10 * MS,
					 2, &r));
		round.id = r.s.id;
		ASSERT_EQ(sizeof(round), write(to[1], &round, sizeof(round)));
		ASSERT_EQ(1, read(from[0], &c, 1));
		nl_socket_free(owner);
		ASSERT_EQ(1, read(from[0], &c, 1));
		seen += c;
	}
	close(to[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, seen) TH_LOG("%d of %d rounds saw the session", seen, rounds);
	TH_LOG("%d rounds", rounds);
	for (i = 0; i < 100 && session_count(self->sk, self->family); i++)
		sleep_ms(10);
	EXPECT_EQ(0, session_count(self->sk, self->family));
}

TEST_F(kpm, cursor_reads_every_sample_once)
{
	static struct samples a, b;
	struct res r;
	uint32_t id;
	int i;

	/* a ring that fits the session's memory limit at 64 CPUs */
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, MS, 1024, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 20));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, 0, &a, &r));
	ASSERT_LE(20, a.n);
	for (i = 0; i < a.n; i++) {
		EXPECT_EQ((uint64_t)i, a.s[i].seq);
		if (i)
			EXPECT_LT(a.s[i - 1].time, a.s[i].time);
	}
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, a.n + 10));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, a.n, &b, &r));
	ASSERT_LE(10, b.n);
	for (i = 0; i < b.n; i++)
		EXPECT_EQ((uint64_t)(a.n + i), b.s[i].seq);
	EXPECT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	EXPECT_EQ(0, r.s.lost);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

/*
 * A reader that asks for samples the ring no longer holds finds them
 * counted in lost, the gap it sees: here the samples before its dump's
 * first. Samples that no reader asked for are not: lost stays as the dump
 * left it while the ring turns over many times.
 */
TEST_F(kpm, a_reader_counts_what_it_missed)
{
	static struct samples a;
	const uint32_t ring = 4;
	uint64_t first, gaps;
	struct res r;
	uint32_t id;
	int i;

	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, ring, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 20));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, 0, &a, &r));
	/* the dump ends at the head its start saw; the sampler may have
	 * overwritten the oldest of those before the first read
	 */
	ASSERT_LE(1, a.n);
	ASSERT_GE(ring, (uint32_t)a.n);
	first = a.s[0].seq;
	gaps = first;
	for (i = 1; i < a.n; i++)
		gaps += a.s[i].seq - a.s[i - 1].seq - 1;
	EXPECT_LE(16, first);
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	EXPECT_EQ(gaps, r.s.lost);
	/* five rings' worth that nobody asks for */
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id,
				  r.s.samples + 5 * ring));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	EXPECT_EQ(gaps, r.s.lost);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

/* the samples a reader missed: before its first, and between those it got */
static uint64_t reader_gaps(const struct samples *ss, uint64_t cursor)
{
	uint64_t gaps = 0;
	int i;

	for (i = 0; i < ss->n; i++) {
		gaps += ss->s[i].seq - cursor;
		cursor = ss->s[i].seq + 1;
	}
	return gaps;
}

/*
 * Two readers of one session, each with its cursor: one reads every few
 * ring's times, the other (a socket of its own) once at the end, from 0.
 * Each one's losses count, whatever the other read: lost is the sum of
 * the gaps both saw, and the slow one's are most of the session's
 * samples.
 */
TEST_F(kpm, lost_counts_each_readers_gaps)
{
	static struct samples a, b;
	uint64_t cursor = 0, gaps_a = 0, gaps_b;
	const uint32_t ring = 16;
	struct nl_sock *sk2;
	int family2;
	struct res r;
	uint32_t id;

	sk2 = kpm_nl_socket(&family2);
	ASSERT_NE(NULL, sk2);
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, ring, &r));
	id = r.s.id;
	while (cursor < 60) {
		ASSERT_EQ(0, sample_get(self->sk, self->family, id, cursor, &a, &r));
		gaps_a += reader_gaps(&a, cursor);
		if (a.n)
			cursor = a.s[a.n - 1].seq + 1;
		sleep_ms(20);
	}
	ASSERT_EQ(0, sample_get(sk2, family2, id, 0, &b, &r));
	ASSERT_LE(1, b.n);
	gaps_b = reader_gaps(&b, 0);
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	TH_LOG("%llu samples; the fast reader missed %llu, the slow one %llu; lost %llu",
	       (unsigned long long)r.s.samples, (unsigned long long)gaps_a,
	       (unsigned long long)gaps_b, (unsigned long long)r.s.lost);
	EXPECT_LE(60 - ring, gaps_b);
	EXPECT_EQ(gaps_a + gaps_b, r.s.lost);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
	nl_socket_free(sk2);
}

/* how in_timens() went, when not as the function it ran returned */
enum { TIMENS_NONE = 100, TIMENS_OFFSET, TIMENS_LOST };

/*
 * Runs @fn on a copy of the @size bytes at @arg, in a task of a time
 * namespace of its own whose CLOCK_MONOTONIC is @offset ns from ours,
 * and copies back what it wrote there. The namespace's offsets can be
 * set only before a task is in it: the task that unshares it writes them
 * and forks the one that runs @fn.
 *
 * Return: what @fn returned (0 to 99); TIMENS_NONE without time
 * namespaces, TIMENS_OFFSET when the offset could not be set, TIMENS_LOST
 * when @fn did not return.
 */
static int in_timens(long long offset, int (*fn)(void *arg), void *arg,
		     size_t size)
{
	long long sec = offset / 1000000000, nsec = offset % 1000000000;
	int status, rc = TIMENS_LOST;
	char off[64];
	void *shared;
	pid_t pid;
	int f;

	if (nsec < 0) {		/* the file wants 0 <= nsec < 1 s */
		sec--;
		nsec += 1000000000;
	}
	snprintf(off, sizeof(off), "monotonic %lld %lld\n", sec, nsec);
	shared = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return TIMENS_LOST;
	memcpy(shared, arg, size);
	pid = fork();
	if (!pid) {
		if (unshare(CLONE_NEWTIME))
			_exit(TIMENS_NONE);
		f = open("/proc/self/timens_offsets", O_WRONLY);
		if (f < 0 || write(f, off, strlen(off)) < 0)
			_exit(TIMENS_OFFSET);
		close(f);
		pid = fork();
		if (!pid)
			_exit(fn(shared));
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status))
			_exit(TIMENS_LOST);
		_exit(WEXITSTATUS(status));
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	memcpy(arg, shared, size);
	munmap(shared, size);
	return rc;
}

/* what a reader in a time namespace got of a session's samples */
struct timens_read {
	uint32_t id;
	uint64_t first, last;	/* sequence numbers */
	uint64_t first_time;
	bool rising;		/* each sample the one after the last, and later */
	uint64_t lost;		/* the session's, after the read */
};

static int read_in_timens(void *arg)
{
	static struct samples ss;
	struct timens_read *tr = arg;
	struct nl_sock *sk;
	struct res r;
	int family, i;

	sk = kpm_nl_socket(&family);
	if (!sk || sample_get(sk, family, tr->id, 0, &ss, &r) || !ss.n)
		return 1;
	tr->first = ss.s[0].seq;
	tr->last = ss.s[ss.n - 1].seq;
	tr->first_time = ss.s[0].time;
	tr->rising = true;
	for (i = 1; i < ss.n; i++)
		if (ss.s[i].seq != ss.s[i - 1].seq + 1 ||
		    ss.s[i].time <= ss.s[i - 1].time)
			tr->rising = false;
	if (session_id_op(sk, family, KSFT_PERFMON_CMD_SESSION_GET, tr->id, &r))
		return 2;
	tr->lost = r.s.lost;
	return 0;
}

/*
 * A reader in a time namespace whose CLOCK_MONOTONIC began after the
 * session's first 20 samples: the dump leaves them out (they would all
 * read 0) and starts with the first one after its clock's start, every
 * time in it positive and rising, and no sample counted lost.
 */
TEST_F(kpm, samples_before_the_readers_clock_are_left_out)
{
	static struct samples a;
	struct timens_read tr = {};
	struct res r;

	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, 256, &r));
	tr.id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, tr.id, 40));
	ASSERT_EQ(0, sample_get(self->sk, self->family, tr.id, 0, &a, &r));
	ASSERT_LE(40, a.n);
	/* the reader's clock starts a nanosecond before sample 20 */
	ASSERT_EQ(0, in_timens(-(long long)(a.s[20].time - 1), read_in_timens,
			       &tr, sizeof(tr)));
	TH_LOG("in the reader's namespace: samples %llu to %llu, the first at %llu ns",
	       (unsigned long long)tr.first, (unsigned long long)tr.last,
	       (unsigned long long)tr.first_time);
	EXPECT_EQ(20, tr.first);
	EXPECT_LT(0, tr.first_time);
	EXPECT_TRUE(tr.rising);
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, tr.id, &r));
	EXPECT_EQ(0, r.s.lost);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL,
		      tr.id, &r);
}

/*
 * Samples overwritten before a reader's clock began are not its loss: it
 * would not have been sent them. A ring of 16 at 200 ms (the reader has
 * 3 s to start), read from cursor 0 in a time namespace whose clock
 * begins just before the newest sample, k: at once, when the samples the
 * ring no longer holds are all older than its clock, and lost stays 0,
 * its dump starting at k; then again once the ring has turned over
 * since, when the gap spans its clock's start, and lost counts those of
 * it from k on, give or take one (the kernel counts timer periods since
 * the clock's start, as the samples' times are gone: one sample's delay
 * may move a period's boundary), and the periods the sampler missed.
 */
TEST_F(kpm, no_loss_before_the_readers_clock)
{
	struct timens_read now = {}, later;
	static struct samples a;
	uint64_t k, missed;
	long long offset;
	struct res r;

	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 200 * MS, 16, &r));
	now.id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, now.id, 20));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, now.id, &r));
	missed = r.s.missed;
	/* the newest sample alone: a cursor inside the ring, nothing lost */
	ASSERT_EQ(0, sample_get(self->sk, self->family, now.id, r.s.samples - 1,
				&a, &r));
	ASSERT_LE(1, a.n);
	k = a.s[0].seq;
	offset = -(long long)(a.s[0].time - 1);
	later = now;

	ASSERT_EQ(0, in_timens(offset, read_in_timens, &now, sizeof(now)));
	ASSERT_EQ(0, wait_samples(self->sk, self->family, now.id, k + 21));
	ASSERT_EQ(0, in_timens(offset, read_in_timens, &later, sizeof(later)));
	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, now.id, &r));
	missed = r.s.missed - missed;
	TH_LOG("the clock begins at sample %llu: at once, the first %llu, lost %llu; later, the first %llu, lost %llu; %llu periods missed",
	       (unsigned long long)k, (unsigned long long)now.first,
	       (unsigned long long)now.lost, (unsigned long long)later.first,
	       (unsigned long long)later.lost, (unsigned long long)missed);
	EXPECT_EQ(k, now.first);
	EXPECT_EQ(0, now.lost);
	EXPECT_LE(k + 5, later.first);
	EXPECT_LE(later.first - k - 1, later.lost);
	EXPECT_GE(later.first - k + 1 + missed, later.lost);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL,
		      now.id, &r);
}

/*
 * A session-new whose reply cannot be sent, the requester's receive
 * buffer full of the errors of requests it did not read: the requester
 * learns of no session, and none is left holding a slot and a ring.
 */
TEST_F(kpm, no_session_outlives_a_failed_reply)
{
	int before = kpm_nr_sessions(), family, fd, rcvbuf = 0, i, n;
	bool overrun = false;
	struct nl_sock *sk;
	char buf[8192];
	struct res r;

	ASSERT_LE(0, before);
	sk = kpm_nl_socket(&family);
	ASSERT_NE(NULL, sk);
	fd = nl_socket_get_fd(sk);
	/* the smallest buffer the kernel allows */
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	for (i = 0; i < 64; i++) {
		struct nl_msg *msg = kpm_nl_msg(family,
						KSFT_PERFMON_CMD_SESSION_GET, 0);

		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, INT32_MAX);
		ASSERT_LT(0, nl_send_auto(sk, msg));
		nlmsg_free(msg);
	}
	{
		struct nl_msg *msg = kpm_nl_msg(family,
						KSFT_PERFMON_CMD_SESSION_NEW, 0);

		nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, 10 * MS);
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 16);
		ASSERT_LT(0, nl_send_auto(sk, msg));
		nlmsg_free(msg);
	}
	/* the requests ran as they were sent: the buffer overran */
	for (n = 0; n < 1000; n++) {
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			continue;
		if (errno == ENOBUFS) {
			overrun = true;
			continue;
		}
		break;
	}
	EXPECT_TRUE(overrun);
	EXPECT_EQ(before, kpm_nr_sessions());
	nl_socket_free(sk);
	/* and a request that can be answered still makes one */
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, 16, &r));
	EXPECT_EQ(before + 1, kpm_nr_sessions());
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, r.s.id, &r);
}

static int read_proc_stat(uint64_t ticks[][10], int max)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	int n = 0, cpu;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t *t;

		if (strncmp(line, "cpu", 3) || line[3] == ' ')
			continue;
		cpu = atoi(line + 3);
		if (cpu >= max)
			continue;
		t = ticks[cpu];
		if (sscanf(line + 3, "%*d %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu",
			   &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6],
			   &t[7], &t[8], &t[9]) == 10)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * The first sample of a session is taken between two reads of /proc/stat:
 * each of its times, in USER_HZ ticks as /proc/stat truncates them, lies
 * between the two reads. iowait may go backwards (see get_cpu_iowait_time_us)
 * by a tick.
 */
TEST_F(kpm, cpu_times_agree_with_proc_stat)
{
	static uint64_t before[MAX_CPUS][10], after[MAX_CPUS][10];
	static struct samples ss;
	const uint64_t ns_per_tick = 1000000000ULL / sysconf(_SC_CLK_TCK);
	int ncpu, cpu, i;
	struct res r;
	uint32_t id;

	ncpu = read_proc_stat(before, MAX_CPUS);
	ASSERT_LT(0, ncpu);
	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0,
				 KSFT_PERFMON_INTERVAL_MAX, 2, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 1));
	ASSERT_EQ(ncpu, read_proc_stat(after, MAX_CPUS));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, 0, &ss, &r));
	ASSERT_EQ(1, ss.n);

	for (cpu = 0; cpu < ncpu; cpu++) {
		ASSERT_TRUE(ss.s[0].cpu_present[cpu]);
		EXPECT_TRUE(ss.s[0].cpu_online[cpu]);
		for (i = 0; i < 10; i++) {
			uint64_t t = ss.s[0].cpu[cpu][i] / ns_per_tick;
			uint64_t slack = i == 4;	/* iowait */

			EXPECT_LE(before[cpu][i], t + slack)
				TH_LOG("cpu%d field %d", cpu, i);
			EXPECT_GE(after[cpu][i] + slack, t)
				TH_LOG("cpu%d field %d", cpu, i);
		}
		/* a guest that ran at all accounted some idle and system time */
		EXPECT_LT(0, ss.s[0].cpu[cpu][3]);
	}
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* sample 0 of a session, read in a time namespace, and the clock there */
struct timens_sample0 {
	uint32_t id;
	uint64_t time, clock;
};

static int read_sample0(void *arg)
{
	struct timens_sample0 *t = arg;
	static struct samples ss;
	struct nl_sock *sk;
	struct res r;
	int family;

	sk = kpm_nl_socket(&family);
	if (!sk || sample_get(sk, family, t->id, 0, &ss, &r) || !ss.n ||
	    ss.s[0].seq)
		return 1;
	t->time = ss.s[0].time;
	t->clock = monotonic_ns();
	return 0;
}

/*
 * A sample's time is on the requester's CLOCK_MONOTONIC, in its time
 * namespace: a remote endpoint in a container lines up with its own
 * clock. The same sample read 1000 s ahead is 1000 s later, to the
 * nanosecond (a namespace whose clock began after it was taken does not
 * get it: samples_before_the_readers_clock_are_left_out). A session at
 * 1 s keeps sample 0 for minutes, however slowly the test goes.
 */
TEST_F(kpm, sample_time_in_the_readers_time_namespace)
{
	struct timens_sample0 t = {};
	static struct samples ss;
	struct res r;
	int rc;

	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0,
				 1000 * MS, 256, &r));
	t.id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, t.id, 1));
	ASSERT_EQ(0, sample_get(self->sk, self->family, t.id, 0, &ss, &r));
	ASSERT_EQ(0, ss.s[0].seq);

	rc = in_timens(1000000000000LL, read_sample0, &t, sizeof(t));
	if (rc == TIMENS_NONE) {
		session_id_op(self->sk, self->family,
			      KSFT_PERFMON_CMD_SESSION_DEL, t.id, &r);
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	}
	ASSERT_EQ(0, rc);
	EXPECT_EQ(ss.s[0].time + 1000000000000ULL, t.time);
	EXPECT_LE(t.time, t.clock);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL,
		      t.id, &r);
}

static uint64_t sysfs_stat(const char *dev, const char *name, bool *found)
{
	char path[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", dev, name);
	f = fopen(path, "r");
	*found = f && fscanf(f, "%llu", &v) == 1;
	if (f)
		fclose(f);
	return v;
}

FIXTURE(veth) {
	struct nl_sock *sk;
	int family;
};

FIXTURE_SETUP(veth)
{
	self->sk = kpm_nl_socket(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, self->family);
	sh("ip link del kpm0 2>/dev/null");
	ASSERT_EQ(0, sh("ip link add kpm0 type veth peer name kpm1"));
	/* no IPv6 autoconfiguration traffic: the frames here are all there is */
	ASSERT_EQ(0, sh("sysctl -qw net.ipv6.conf.kpm0.disable_ipv6=1 net.ipv6.conf.kpm1.disable_ipv6=1"));
	ASSERT_EQ(0, sh("ip link set kpm0 up && ip link set kpm1 up"));
}

FIXTURE_TEARDOWN(veth)
{
	sh("ip link del kpm0 2>/dev/null");
	nl_socket_free(self->sk);
}

TEST_F_TIMEOUT(veth, netdev_counters_equal_sysfs, KPM_SLOW_TIMEOUT)
{
	static struct samples ss;
	uint32_t ifindex[2] = { if_nametoindex("kpm0"), if_nametoindex("kpm1") };
	const char *names[2] = { "kpm0", "kpm1" };
	int d, i, compared = 0;
	struct res r;
	uint32_t id;

	ASSERT_EQ(100, send_frames("kpm0", 100));
	/* frames into a peer that is down are dropped by veth on transmit */
	ASSERT_EQ(0, sh("ip link set kpm1 down"));
	ASSERT_EQ(37, send_frames("kpm0", 37));
	sleep_ms(50);

	ASSERT_EQ(0, session_new(self->sk, self->family, ifindex, 2,
				 KSFT_PERFMON_INTERVAL_MAX, 2, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 1));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, 0, &ss, &r));
	ASSERT_EQ(1, ss.n);
	ASSERT_EQ(2, ss.s[0].ndevs);

	for (d = 0; d < 2; d++) {
		EXPECT_EQ(ifindex[d], ss.s[0].ifindex[d]);
		EXPECT_FALSE(ss.s[0].gone[d]);
		for (i = 0; i < KPM_DEV_NR_STATS; i++) {
			bool found;
			uint64_t v = sysfs_stat(names[d], kpm_dev_stat_names[i], &found);

			if (!found)
				continue;
			EXPECT_EQ(v, ss.s[0].stats[d][i])
				TH_LOG("%s %s", names[d], kpm_dev_stat_names[i]);
			compared++;
		}
	}
	/* and the traffic is what was sent */
	EXPECT_EQ(100, ss.s[0].stats[0][1]);	/* kpm0 tx_packets */
	EXPECT_EQ(100, ss.s[0].stats[1][0]);	/* kpm1 rx_packets */
	EXPECT_EQ(37, ss.s[0].stats[0][7]);	/* kpm0 tx_dropped */
	EXPECT_LE(2 * 20, compared);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

TEST_F_TIMEOUT(veth, deleted_netdev_is_reported_gone, KPM_SLOW_TIMEOUT)
{
	static struct samples ss;
	uint32_t ifindex = if_nametoindex("kpm0"), newindex;
	struct res r;
	uint64_t n;
	uint32_t id;

	ASSERT_EQ(0, session_new(self->sk, self->family, &ifindex, 1, 10 * MS,
				 64, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 2));
	ASSERT_EQ(0, sh("ip link del kpm0"));
	/* the same name again, with another ifindex */
	ASSERT_EQ(0, sh("ip link add kpm0 type veth peer name kpm1 && ip link set kpm0 up"));
	newindex = if_nametoindex("kpm0");
	EXPECT_NE(ifindex, newindex);

	ASSERT_EQ(0, session_id_op(self->sk, self->family,
				   KSFT_PERFMON_CMD_SESSION_GET, id, &r));
	n = r.s.samples;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, n + 3));
	ASSERT_EQ(0, sample_get(self->sk, self->family, id, n, &ss, &r));
	ASSERT_LE(3, ss.n);
	EXPECT_EQ(1, ss.s[ss.n - 1].ndevs);
	EXPECT_EQ(ifindex, ss.s[ss.n - 1].ifindex[0]);
	EXPECT_TRUE(ss.s[ss.n - 1].gone[0]);
	EXPECT_TRUE(ss.s[ss.n - 1].cpu_present[0]);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

TEST_F(kpm, debugfs_shows_session_and_latest_sample)
{
	char line[512], want[64];
	bool listed = false, latest = false;
	struct res r;
	uint32_t id;
	FILE *f;

	ASSERT_EQ(0, session_new(self->sk, self->family, NULL, 0, 10 * MS, 16, &r));
	id = r.s.id;
	ASSERT_EQ(0, wait_samples(self->sk, self->family, id, 1));

	f = fopen("/sys/kernel/debug/ksft_perfmon/sessions", "r");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "%u %llu 16 ", id, 10 * MS);
	while (fgets(line, sizeof(line), f))
		listed |= !strncmp(line, want, strlen(want));
	fclose(f);
	EXPECT_TRUE(listed);

	f = fopen("/sys/kernel/debug/ksft_perfmon/latest", "r");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "session %u seq ", id);
	while (fgets(line, sizeof(line), f))
		latest |= !strncmp(line, want, strlen(want));
	fclose(f);
	EXPECT_TRUE(latest);
	session_id_op(self->sk, self->family, KSFT_PERFMON_CMD_SESSION_DEL, id, &r);
}

TEST_HARNESS_MAIN
