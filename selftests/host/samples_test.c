// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's sample parsing and metric arithmetic, fed sample-get messages
 * built here the way the kernel builds them: what a live kernel cannot be
 * made to produce on demand (counters that go backwards, a CPU offline at
 * an exact sample, malformed messages). Outputs are compared byte for byte.
 */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>
#include <netlink/genl/genl.h>

#include "kselftest_harness.h"
#include "ktap.h"
#include "samples.h"

#define MS	1000000ULL

struct cpu_in {
	unsigned int id;
	bool online;
	uint64_t t[T_NR];
	bool with_net;		/* the session has cpu-net */
	uint64_t net[N_NR];
};

#define NO_TIME	UINT64_MAX	/* a part that is not the first */

/*
 * A sample-get message with a part's own attributes: CPUs @start to below
 * @end, the last part or not, its time (none for NO_TIME) and the sample
 * it is based on (none for -1).
 */
static struct nl_msg *part_msg(uint64_t seq, uint64_t time, int64_t base,
			       uint32_t start, uint32_t end, bool last)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, 0, 0, 0x20, 0, 0, KSFT_PERFMON_CMD_SAMPLE_GET, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_SEQ, seq);
	if (time != NO_TIME)
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_TIME, time);
	if (base >= 0)
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_BASE_SEQ, base);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_START, start);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_END, end);
	if (last)
		nla_put_flag(msg, KSFT_PERFMON_A_SAMPLE_LAST_PART);
	return msg;
}

/* one part of a sample: CPUs @start to below @end, the last one or not */
static struct nl_msg *sample_part(uint64_t seq, uint64_t time,
				  const struct cpu_in *cpu, int ncpu,
				  const uint64_t *tx_dropped, int ndev,
				  uint32_t start, uint32_t end, bool last)
{
	struct nl_msg *msg = part_msg(seq, time, -1, start, end, last);
	struct nlattr *nest;
	int i, t;

	if (time != NO_TIME) {
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_COST, 1000);
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_DELAY, 10);
	}
	for (i = 0; i < ndev; i++) {
		nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_DEV);
		nla_put_u32(msg, KSFT_PERFMON_A_DEV_STATS_IFINDEX, i + 1);
		nla_put_u64(msg, KSFT_PERFMON_A_DEV_STATS_TX_DROPPED,
			    tx_dropped[i]);
		nla_nest_end(msg, nest);
	}
	for (i = 0; i < ncpu; i++) {
		nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_CPU);
		nla_put_u32(msg, KSFT_PERFMON_A_CPU_STATS_ID, cpu[i].id);
		if (cpu[i].online)
			nla_put_flag(msg, KSFT_PERFMON_A_CPU_STATS_ONLINE);
		for (t = 0; t < T_NR; t++)
			nla_put_u64(msg, KSFT_PERFMON_A_CPU_STATS_USER + t,
				    cpu[i].t[t]);
		for (t = 0; cpu[i].with_net && t < N_NR; t++)
			nla_put_u64(msg,
				    KSFT_PERFMON_A_CPU_STATS_SOFTNET_PROCESSED + t,
				    cpu[i].net[t]);
		nla_nest_end(msg, nest);
	}
	return msg;
}

/* a whole sample of the fixture's two CPUs in one message */
static struct nl_msg *sample_msg(uint64_t seq, uint64_t time,
				 const struct cpu_in *cpu, int ncpu,
				 const uint64_t *tx_dropped, int ndev)
{
	return sample_part(seq, time, cpu, ncpu, tx_dropped, ndev, 0, 2, true);
}

FIXTURE(rec) {
	struct session s;
	struct record r;
	struct drain d;
	char *buf;
	size_t len;
	FILE *out;
};

FIXTURE_SETUP(rec)
{
	self->s.id = 1;
	self->s.cpus = 2;
	self->s.ndevs = 0;
	self->out = open_memstream(&self->buf, &self->len);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, record_init(&self->r, 0, "local", 0, 2, self->out));
	ASSERT_EQ(0, drain_init(&self->d, &self->s, record_sample, &self->r));
}

FIXTURE_TEARDOWN(rec)
{
	drain_free(&self->d);
	record_free(&self->r);
	fclose(self->out);
	free(self->buf);
}

/* feed one message, return 0 or -1 as drain_msg() does */
static int feed(struct drain *d, struct nl_msg *msg)
{
	int err = drain_msg(d, nlmsg_hdr(msg));

	nlmsg_free(msg);
	return err;
}

/* the output lines of metric @name, one string */
static char *lines_of(FIXTURE_DATA(rec) *self, const char *name)
{
	char key[64], *all, *line, *save = NULL, *res;
	size_t n = 0;
	FILE *f;

	/* a sample left unfinished shows as lines missing */
	drain_end(&self->d);
	fflush(self->out);
	all = strdup(self->buf ? self->buf : "");
	f = open_memstream(&res, &n);
	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, key))
			fprintf(f, "%s\n", strstr(line, "\"time\""));
	fclose(f);
	free(all);
	return res;
}

/* user time goes back on CPU 0: the output stays, and it is counted */
TEST_F(rec, cpu_time_never_goes_back)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };
	char *out;

	c[0].t[T_USER] = 1000 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(0, 0, c, 2, NULL, 0)));
	c[0].t[T_USER] = 1500 * MS;
	c[1].t[T_USER] = 10 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(1, 100 * MS, c, 2, NULL, 0)));
	c[0].t[T_USER] = 1200 * MS;
	c[1].t[T_USER] = 20 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(2, 200 * MS, c, 2, NULL, 0)));
	c[0].t[T_USER] = 900 * MS;	/* below the first sample too */
	ASSERT_EQ(0, feed(&self->d, sample_msg(3, 300 * MS, c, 2, NULL, 0)));
	c[0].t[T_USER] = 1600 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(4, 400 * MS, c, 2, NULL, 0)));

	out = lines_of(self, "cpu.time.usr");
	EXPECT_STREQ("\"time\":0.0,\"value\":[0.0,0.0]}\n"
		     "\"time\":0.1,\"value\":[0.5,0.01]}\n"
		     "\"time\":0.2,\"value\":[0.5,0.02]}\n"
		     "\"time\":0.3,\"value\":[0.5,0.02]}\n"
		     "\"time\":0.4,\"value\":[0.6,0.02]}\n", out);
	free(out);
	/* 1500 -> 1200 -> 900 */
	EXPECT_EQ(2, self->r.decreases);
	EXPECT_EQ(2, self->r.cpu_back[T_USER].n);
	EXPECT_EQ(300 * MS, self->r.cpu_back[T_USER].max);
	fflush(self->out);
	ASSERT_EQ(0, record_print_decreases(self->out, &self->r));
	fflush(self->out);
	EXPECT_NE(NULL, strstr(self->buf, "# ksft-perfmon: counter decreases, clamped (count, largest step back): cpu user 2 (300000000 ns)\n"));
}

/*
 * The counts of cpu-net, asked for: since the first sample, per CPU,
 * null while a CPU is offline, as cpu.time.* has them. Not asked for:
 * no line, though the samples carry them.
 */
TEST_F(rec, cpu_net_counts_only_when_asked)
{
	struct cpu_in c[2] = { { 0, true }, { 1, false } };
	char *out;
	int i;

	for (i = 0; i < 2; i++)
		c[i].with_net = true;
	c[0].net[N_PROCESSED] = 100;
	c[0].net[N_SQUEEZED] = 7;
	c[1].net[N_PROCESSED] = 30;
	ASSERT_EQ(0, feed(&self->d, sample_msg(0, 0, c, 2, NULL, 0)));
	c[0].net[N_PROCESSED] = 250;
	c[1].online = true;
	c[1].net[N_PROCESSED] = 40;
	ASSERT_EQ(0, feed(&self->d, sample_msg(1, 100 * MS, c, 2, NULL, 0)));
	out = lines_of(self, "cpu.softnet.processed");
	EXPECT_STREQ("", out);
	free(out);

	/* the same samples into a record that prints them */
	record_free(&self->r);
	ASSERT_EQ(0, record_init(&self->r, M_CPU_NET, "local", 0, 2,
				 self->out));
	c[0].net[N_PROCESSED] = 100;
	c[1].online = false;
	c[1].net[N_PROCESSED] = 30;
	ASSERT_EQ(0, feed(&self->d, sample_msg(2, 0, c, 2, NULL, 0)));
	c[0].net[N_PROCESSED] = 250;
	c[0].net[N_SQUEEZED] = 9;
	c[1].online = true;
	c[1].net[N_PROCESSED] = 40;
	ASSERT_EQ(0, feed(&self->d, sample_msg(3, 100 * MS, c, 2, NULL, 0)));
	out = lines_of(self, "cpu.softnet.processed");
	EXPECT_STREQ("\"time\":0.0,\"value\":[0,null]}\n"
		     "\"time\":0.1,\"value\":[150,10]}\n", out);
	free(out);
	out = lines_of(self, "cpu.softnet.squeezed");
	EXPECT_STREQ("\"time\":0.0,\"value\":[0,null]}\n"
		     "\"time\":0.1,\"value\":[2,0]}\n", out);
	free(out);
	/* after the default set, in the order of the metrics */
	fflush(self->out);
	EXPECT_NE(NULL, strstr(self->buf, "\"name\":\"cpu.time.sirq\",\"shape\":\"per-cpu\",\"time\":0.1"));
	EXPECT_LT(strstr(self->buf, "\"name\":\"cpu.utilization\""),
		  strstr(self->buf, "\"name\":\"cpu.softnet.processed\""));
	EXPECT_LT(strstr(self->buf, "\"name\":\"cpu.softnet.processed\""),
		  strstr(self->buf, "\"name\":\"cpu.softirq.net_tx\""));
}

/* the policy of each kind of cpu-net count, byte for byte */
TEST(cpu_net_policies)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_EQ(0, print_policy(f, M_SOFTNET_SQUEEZED));
	ASSERT_EQ(0, print_policy(f, M_SOFTIRQ_NET_RX));
	fclose(f);
	EXPECT_STREQ("# ktap-metric-policy-json: {\"display_label\":\"Squeezed rounds per second\",\"display_range\":{\"min\":0},\"name\":\"cpu.softnet.squeezed\",\"summarize\":\"distribution\",\"transform\":\"rate\"}\n"
		     "# ktap-metric-policy-json: {\"display_label\":\"Softirqs per second\",\"display_range\":{\"min\":0},\"name\":\"cpu.softirq.net_rx\",\"summarize\":\"p90\",\"transform\":\"rate\"}\n",
		     buf);
	free(buf);
}

/*
 * A sleep moves from iowait to idle: iowait goes back, idle + iowait does
 * not, and utilization is busy over all of it.
 */
TEST_F(rec, iowait_into_idle_is_not_a_decrease)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };
	char *out;

	c[0].t[T_IDLE] = 100 * MS;
	c[0].t[T_IOWAIT] = 50 * MS;
	c[1].t[T_IDLE] = 100 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(0, 0, c, 2, NULL, 0)));
	c[0].t[T_IDLE] = 160 * MS;	/* +60 */
	c[0].t[T_IOWAIT] = 40 * MS;	/* -10 */
	c[0].t[T_SYSTEM] = 100 * MS;	/* busy 100 of 150 */
	c[1].t[T_SOFTIRQ] = 25 * MS;	/* busy 25 of 25 */
	ASSERT_EQ(0, feed(&self->d, sample_msg(1, 150 * MS, c, 2, NULL, 0)));

	out = lines_of(self, "cpu.utilization");
	EXPECT_STREQ("\"time\":0.15,\"value\":[66.6667,100.0]}\n", out);
	free(out);
	EXPECT_EQ(0, self->r.decreases);
}

/* offline: null; back online: times again, utilization once it has a pair */
TEST_F(rec, offline_cpu_is_null)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };
	char *out;

	ASSERT_EQ(0, feed(&self->d, sample_msg(0, 0, c, 2, NULL, 0)));
	c[0].t[T_USER] = c[1].t[T_USER] = 10 * MS;
	c[0].t[T_IDLE] = c[1].t[T_IDLE] = 10 * MS;
	c[1].online = false;
	ASSERT_EQ(0, feed(&self->d, sample_msg(1, 20 * MS, c, 2, NULL, 0)));
	c[0].t[T_USER] = c[1].t[T_USER] = 20 * MS;
	c[0].t[T_IDLE] = c[1].t[T_IDLE] = 20 * MS;
	c[1].online = true;
	ASSERT_EQ(0, feed(&self->d, sample_msg(2, 40 * MS, c, 2, NULL, 0)));
	c[0].t[T_USER] = c[1].t[T_USER] = 40 * MS;
	ASSERT_EQ(0, feed(&self->d, sample_msg(3, 60 * MS, c, 2, NULL, 0)));

	out = lines_of(self, "cpu.time.usr");
	EXPECT_STREQ("\"time\":0.0,\"value\":[0.0,0.0]}\n"
		     "\"time\":0.02,\"value\":[0.01,null]}\n"
		     "\"time\":0.04,\"value\":[0.02,0.02]}\n"
		     "\"time\":0.06,\"value\":[0.04,0.04]}\n", out);
	free(out);
	out = lines_of(self, "cpu.utilization");
	EXPECT_STREQ("\"time\":0.02,\"value\":[50.0,null]}\n"
		     "\"time\":0.04,\"value\":[50.0,null]}\n"
		     "\"time\":0.06,\"value\":[100.0,100.0]}\n", out);
	free(out);
}

/* a netdev's counter is reset: the total stays, and it is counted */
TEST_F(rec, nic_counter_reset_is_clamped)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };
	uint64_t drops[] = { 10, 15, 3, 8, 30 };
	char *out;
	int i;

	self->s.ndevs = 1;
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, feed(&self->d, sample_msg(i, i * 10 * MS, c, 2,
						       &drops[i], 1)));
	out = lines_of(self, "nic.tx.dropped");
	EXPECT_STREQ("\"time\":0.0,\"value\":0}\n"
		     "\"time\":0.01,\"value\":5}\n"
		     "\"time\":0.02,\"value\":5}\n"
		     "\"time\":0.03,\"value\":5}\n"
		     "\"time\":0.04,\"value\":20}\n", out);
	free(out);
	/* 15 -> 3 */
	EXPECT_EQ(1, self->r.decreases);
}

/*
 * One sample over three parts (the netdev, CPU 0, CPU 1) is one sample,
 * handed on with its last part; a seq gap is lost samples.
 */
TEST_F(rec, split_samples_and_gaps)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };
	uint64_t drops = 1;

	self->s.ndevs = 1;
	ASSERT_EQ(0, feed(&self->d, sample_part(0, 0, NULL, 0, &drops, 1,
						0, 0, false)));
	ASSERT_EQ(0, feed(&self->d, sample_part(0, NO_TIME, &c[0], 1, NULL, 0,
						0, 1, false)));
	EXPECT_EQ(0, self->d.samples);
	EXPECT_EQ(-1, drain_end(&self->d));
	EXPECT_STREQ("the dump ended within sample 0, before its last part",
		     self->d.error);
	ASSERT_EQ(0, feed(&self->d, sample_part(0, NO_TIME, &c[1], 1, NULL, 0,
						1, 2, true)));
	EXPECT_EQ(1, self->d.samples);
	ASSERT_EQ(0, feed(&self->d, sample_msg(5, 50 * MS, c, 2, &drops, 1)));
	EXPECT_EQ(0, drain_end(&self->d));
	EXPECT_EQ(2, self->d.samples);
	EXPECT_EQ(4, self->d.lost);
	EXPECT_EQ(6, self->d.cursor);
}

/* parts out of their order, or of two samples interleaved, are refused */
TEST_F(rec, split_samples_out_of_order)
{
	struct cpu_in c[2] = { { 0, true }, { 1, true } };

	self->s.ndevs = 1;
	/* a sample that starts with its second part */
	EXPECT_EQ(-1, feed(&self->d, sample_part(0, NO_TIME, &c[1], 1, NULL, 0,
						 1, 2, true)));
	EXPECT_STREQ("sample 0 begins with a part that is not its first",
		     self->d.error);
	/* the next sample before this one's last part */
	ASSERT_EQ(0, feed(&self->d, sample_part(1, 0, &c[0], 1, NULL, 0,
						0, 1, false)));
	EXPECT_EQ(-1, feed(&self->d, sample_msg(2, 0, c, 2, NULL, 0)));
	EXPECT_STREQ("sample 2 came before the last part of sample 1",
		     self->d.error);
	/* a part that skips CPUs, and a CPU outside its part */
	EXPECT_EQ(-1, feed(&self->d, sample_part(1, NO_TIME, NULL, 0, NULL, 0,
						 2, 2, true)));
	EXPECT_STREQ("sample 1: a part of CPUs 2 to 2 after CPU 1 of 2",
		     self->d.error);
	EXPECT_EQ(-1, feed(&self->d, sample_part(1, NO_TIME, &c[0], 1, NULL, 0,
						 1, 2, true)));
	EXPECT_STREQ("kernel reports CPU 0 in a part of CPUs 1 to 2",
		     self->d.error);
	/* a last part that leaves out the session's netdev */
	EXPECT_EQ(-1, feed(&self->d, sample_part(1, NO_TIME, &c[1], 1, NULL, 0,
						 1, 2, true)));
	EXPECT_STREQ("sample 1 ends after CPU 2 of 2 and 0 of 1 netdevs",
		     self->d.error);
	EXPECT_EQ(0, self->d.samples);
}

/*
 * A sample of changed-only on sample @base: CPU @cpu, online, with only its
 * user time, and the fixture's netdev with only its tx_dropped, or
 * nothing of either for -1; the netdev gone for @tx_dropped -2.
 */
static struct nl_msg *changes_msg(uint64_t seq, uint64_t base, int cpu,
				  uint64_t user, int64_t tx_dropped)
{
	struct nl_msg *msg = part_msg(seq, seq * 10 * MS, base, 0, 2, true);
	struct nlattr *nest;

	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_DEV);
	nla_put_u32(msg, KSFT_PERFMON_A_DEV_STATS_IFINDEX, 1);
	if (tx_dropped == -2)
		nla_put_flag(msg, KSFT_PERFMON_A_DEV_STATS_GONE);
	if (tx_dropped >= 0)
		nla_put_u64(msg, KSFT_PERFMON_A_DEV_STATS_TX_DROPPED,
			    tx_dropped);
	nla_nest_end(msg, nest);
	if (cpu >= 0) {
		nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_CPU);
		nla_put_u32(msg, KSFT_PERFMON_A_CPU_STATS_ID, cpu);
		nla_put_flag(msg, KSFT_PERFMON_A_CPU_STATS_ONLINE);
		nla_put_u64(msg, KSFT_PERFMON_A_CPU_STATS_USER, user);
		nla_nest_end(msg, nest);
	}
	return msg;
}

/*
 * changed-only: what a sample leaves out is its base's, which must be the
 * sample handed on before it in the same dump
 */
TEST_F(rec, changed_only_on_its_base)
{
	struct cpu_in c[2] = {
		{ 0, true, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 } },
		{ 1, true, { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 } },
	};
	uint64_t drops = 7;
	int i;

	self->s.ndevs = 1;
	ASSERT_EQ(0, feed(&self->d, sample_msg(3, 30 * MS, c, 2, &drops, 1)));
	/* CPU 1's user time and the netdev's tx_dropped changed */
	ASSERT_EQ(0, feed(&self->d, changes_msg(4, 3, 1, 111, 77)));
	EXPECT_EQ(2, self->d.samples);
	for (i = 0; i < T_NR; i++) {
		EXPECT_EQ(c[0].t[i], self->d.cur.cpu[0].t[i]);
		EXPECT_EQ(i ? c[1].t[i] : 111, self->d.cur.cpu[1].t[i]);
	}
	EXPECT_TRUE(self->d.cur.cpu[0].online && self->d.cur.cpu[0].present);
	EXPECT_EQ(77, self->d.cur.dev[0].v[DEV_STAT(TX_DROPPED)]);
	/* nothing changed: the sample is its base again, with a gap */
	ASSERT_EQ(0, feed(&self->d, changes_msg(6, 4, -1, 0, -1)));
	EXPECT_EQ(111, self->d.cur.cpu[1].t[0]);
	EXPECT_EQ(77, self->d.cur.dev[0].v[DEV_STAT(TX_DROPPED)]);
	/* 0 to 2 before the first, 5 between */
	EXPECT_EQ(4, self->d.lost);

	/* a base that is not the sample before */
	EXPECT_EQ(-1, feed(&self->d, changes_msg(7, 4, 0, 1, -1)));
	EXPECT_STREQ("sample 7 has the changes since sample 4, which is not the one before it in the dump",
		     self->d.error);
	/* nor one of an earlier dump */
	EXPECT_EQ(0, drain_end(&self->d));
	EXPECT_EQ(-1, feed(&self->d, changes_msg(7, 6, 0, 1, -1)));
	EXPECT_STREQ("sample 7 has the changes since sample 6, which is not the one before it in the dump",
		     self->d.error);
	EXPECT_EQ(3, self->d.samples);
}

/*
 * changed-only where it is hard: a sample of changes in two parts (its
 * base-seq in the first only), a netdev that goes away, a CPU that goes
 * offline and comes back with only some counters changed
 */
TEST_F(rec, changed_only_parts_gone_offline)
{
	struct cpu_in c[2] = {
		{ 0, true, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 } },
		{ 1, true, { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 } },
	};
	struct nl_msg *msg;
	struct nlattr *nest;
	uint64_t drops = 7;
	int i;

	self->s.ndevs = 1;
	ASSERT_EQ(0, feed(&self->d, sample_msg(0, 0, c, 2, &drops, 1)));

	/* sample 1 in two parts: the netdev gone, then CPU 1 offline */
	msg = nlmsg_alloc();
	genlmsg_put(msg, 0, 0, 0x20, 0, 0, KSFT_PERFMON_CMD_SAMPLE_GET, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_SEQ, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_TIME, 10 * MS);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_BASE_SEQ, 0);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_START, 0);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_END, 1);
	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_DEV);
	nla_put_u32(msg, KSFT_PERFMON_A_DEV_STATS_IFINDEX, 1);
	nla_put_flag(msg, KSFT_PERFMON_A_DEV_STATS_GONE);
	nla_nest_end(msg, nest);
	ASSERT_EQ(0, feed(&self->d, msg));
	msg = nlmsg_alloc();
	genlmsg_put(msg, 0, 0, 0x20, 0, 0, KSFT_PERFMON_CMD_SAMPLE_GET, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_SEQ, 1);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_START, 1);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_END, 2);
	nla_put_flag(msg, KSFT_PERFMON_A_SAMPLE_LAST_PART);
	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_CPU);
	nla_put_u32(msg, KSFT_PERFMON_A_CPU_STATS_ID, 1);
	nla_nest_end(msg, nest);
	ASSERT_EQ(0, feed(&self->d, msg));
	EXPECT_EQ(2, self->d.samples);
	EXPECT_TRUE(self->d.cur.dev[0].gone);
	EXPECT_EQ(0, self->d.cur.dev[0].v[DEV_STAT(TX_DROPPED)]);
	EXPECT_FALSE(self->d.cur.cpu[1].online);
	EXPECT_TRUE(self->d.cur.cpu[0].online);
	for (i = 0; i < T_NR; i++) {
		EXPECT_EQ(c[0].t[i], self->d.cur.cpu[0].t[i]);
		EXPECT_EQ(c[1].t[i], self->d.cur.cpu[1].t[i]);
	}

	/* CPU 1 back online with its user time moved on */
	ASSERT_EQ(0, feed(&self->d, changes_msg(2, 1, 1, 99, -2)));
	EXPECT_TRUE(self->d.cur.cpu[1].online);
	EXPECT_EQ(99, self->d.cur.cpu[1].t[0]);
	EXPECT_EQ(c[1].t[1], self->d.cur.cpu[1].t[1]);
	EXPECT_TRUE(self->d.cur.dev[0].gone);
	EXPECT_EQ(3, self->d.samples);
}

/* what the kernel never sends is refused, with a message */

/* the queue nest of RX queue @q of netdev 5, begun */
static struct nlattr *rx_queue_start(struct nl_msg *msg, uint32_t q)
{
	struct nlattr *nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_QUEUE);

	nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_IFINDEX, 5);
	nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_QUEUE_TYPE,
		    KSFT_PERFMON_QUEUE_TYPE_RX);
	nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_QUEUE_ID, q);
	return nest;
}

/*
 * One part of a sample of a session with queues: netdev 5, its queue
 * statistics with @rxq RX queues (none for 0), the packets of each of
 * the queues in @pkts (-1: that queue's nest left out), based on @base
 * (or whole, for -1), and no CPU.
 */
static struct nl_msg *queue_msg(uint64_t seq, int64_t base, uint32_t rxq,
				const int64_t *pkts, bool skipped)
{
	struct nl_msg *msg = part_msg(seq, seq * 10 * MS, base, 0, 1, true);
	struct nlattr *nest;
	uint32_t q;

	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_DEV);
	nla_put_u32(msg, KSFT_PERFMON_A_DEV_STATS_IFINDEX, 5);
	nla_nest_end(msg, nest);
	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_QSTATS);
	nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_IFINDEX, 5);
	if (skipped)
		nla_put_flag(msg, KSFT_PERFMON_A_QSTATS_SKIPPED);
	if (rxq) {
		nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_RX_QUEUES, rxq);
		nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_TX_QUEUES, 0);
		nla_put_u64(msg, KSFT_PERFMON_A_QSTATS_RX_PACKETS, 1);
	}
	nla_nest_end(msg, nest);
	for (q = 0; q < rxq; q++) {
		if (pkts[q] < 0)
			continue;
		nest = rx_queue_start(msg, q);
		nla_put_u64(msg, KSFT_PERFMON_A_QSTATS_RX_PACKETS, pkts[q]);
		nla_nest_end(msg, nest);
	}
	return msg;
}

/*
 * A record of queue metrics into memory, and its drain, for a session of
 * one CPU and netdev 5 with 4 queues of each direction.
 */
struct qrec {
	char *buf;
	size_t len;
	FILE *out;
	struct record r;
	struct drain d;
};

static const struct session qrec_session = {
	.id = 1, .cpus = 1, .ndevs = 1, .queues = 4, .ifindex = { 5 },
};

static int qrec_init(struct qrec *q, uint32_t metrics)
{
	memset(q, 0, sizeof(*q));
	q->out = open_memstream(&q->buf, &q->len);
	if (!q->out ||
	    record_init(&q->r, metrics, "local", 0, 1, q->out) ||
	    record_init_queues(&q->r, &qrec_session))
		return -1;
	return drain_init(&q->d, &qrec_session, record_sample, &q->r);
}

static void qrec_free(struct qrec *q)
{
	drain_free(&q->d);
	record_free(&q->r);
	fclose(q->out);
	free(q->buf);
}

/*
 * A netdev's queues, put together as the kernel sends them: a queue left
 * out of a sample of changes keeps its count; one the base did not have
 * starts from nothing; a skipped read keeps them, and record prints no
 * line of it; lines are each queue's count since the first sample, with
 * the netdev's ifindex and the queue as labels.
 */
TEST(queues_put_together)
{
	const int64_t p0[] = { 10, 20 }, p1[] = { -1, 25, 7 },
		      p2[] = { 12, -1, -1 };
	struct nlattr *nest;
	struct nl_msg *msg;
	struct qrec q;

	ASSERT_EQ(0, qrec_init(&q, M_BIT(M_QUEUE_RX_PACKETS)));
	ASSERT_EQ(0, feed(&q.d, queue_msg(0, -1, 2, p0, false)));
	ASSERT_EQ(0, feed(&q.d, queue_msg(1, 0, 3, p1, false)));
	EXPECT_EQ(10, q.d.cur.q[0].rx[0].v[Q_STAT(RX_PACKETS)]);
	EXPECT_EQ(25, q.d.cur.q[0].rx[1].v[Q_STAT(RX_PACKETS)]);
	EXPECT_EQ(7, q.d.cur.q[0].rx[2].v[Q_STAT(RX_PACKETS)]);
	EXPECT_EQ(Q_UNSET, q.d.cur.q[0].rx[2].v[Q_STAT(RX_BYTES)]);
	EXPECT_EQ(1, q.d.cur.q[0].base.v[Q_STAT(RX_PACKETS)]);
	/* skipped: the last read's, and no line */
	ASSERT_EQ(0, feed(&q.d, queue_msg(2, 1, 3, p2, true)));
	EXPECT_TRUE(q.d.cur.q[0].skipped);
	fflush(q.out);
	EXPECT_NE(NULL, strstr(q.buf, "{\"host\":\"local\",\"ifindex\":5,\"name\":\"nic.queue.rx.packets\",\"queue\":2,\"shape\":\"scalar\",\"time\":0.01,\"value\":0}"));
	EXPECT_NE(NULL, strstr(q.buf, "\"queue\":1,\"shape\":\"scalar\",\"time\":0.01,\"value\":5}"));
	EXPECT_EQ(NULL, strstr(q.buf, "\"queue\":0,\"shape\":\"scalar\",\"time\":0.02"));

	/* a queue of a netdev that has no queue statistics now */
	msg = queue_msg(3, -1, 0, NULL, false);
	nest = rx_queue_start(msg, 0);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-1, feed(&q.d, msg));
	EXPECT_STREQ("kernel reports queue 0 of netdev 5, which it does not have",
		     q.d.error);
	qrec_free(&q);
}

/* a queue's link in map_msg(): -1 leaves an attribute out */
struct link_in {
	int64_t napi, irq, cpu;
};

/*
 * One part of a sample of netdev 5, whose driver has no queue statistics,
 * with map version @version (none for 0) and the links of RX queues 0 to
 * @n - 1 (a queue with no napi left out), based on @base (or whole, -1).
 */
static struct nl_msg *map_msg(uint64_t seq, int64_t base, uint32_t version,
			      const struct link_in *links, uint32_t n)
{
	struct nl_msg *msg = queue_msg(seq, base, 0, NULL, false);
	struct nlattr *qstats = NULL, *nest, *a;
	uint32_t q;
	int rem;

	/* the map's version, in the qstats nest queue_msg() put last */
	nlmsg_for_each_attr(a, nlmsg_hdr(msg), GENL_HDRLEN, rem)
		if (nla_type(a) == KSFT_PERFMON_A_SAMPLE_QSTATS)
			qstats = a;
	if (version) {
		nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_MAP_VERSION, version);
		qstats->nla_len = (char *)nlmsg_tail(nlmsg_hdr(msg)) -
				  (char *)qstats;
	}
	for (q = 0; q < n; q++) {
		if (links[q].napi < 0)
			continue;
		nest = rx_queue_start(msg, q);
		nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_NAPI_ID, links[q].napi);
		if (links[q].irq >= 0)
			nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_IRQ, links[q].irq);
		if (links[q].cpu >= 0)
			nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_CPU, links[q].cpu);
		nla_nest_end(msg, nest);
	}
	return msg;
}

/*
 * A netdev's map, put together as the kernel sends it: a whole sample's
 * links; a sample of changes of the same version keeps them; one of a
 * new version has only the links it carries. record says the CPU of each
 * queue that has one, at each new version only.
 */
TEST(queue_map_put_together)
{
	const struct link_in v1[] = { { 8193, 27, 2 }, { 8194, -1, -1 } },
			     v2[] = { { 8193, 27, 3 }, { -1, -1, -1 } };
	struct qrec q;
	char *p;
	int n;

	ASSERT_EQ(0, qrec_init(&q, M_BIT(M_QUEUE_RX_CPU)));
	ASSERT_EQ(0, feed(&q.d, map_msg(0, -1, 1, v1, 2)));
	EXPECT_TRUE(q.d.cur.q[0].mapped);
	EXPECT_FALSE(q.d.cur.q[0].read);
	EXPECT_EQ(8194, q.d.cur.q[0].rx[1].link.napi_id);
	EXPECT_EQ(Q_NO_LINK, q.d.cur.q[0].rx[1].link.irq);
	/* the same version, no queue: the links as they were */
	ASSERT_EQ(0, feed(&q.d, map_msg(1, 0, 1, NULL, 0)));
	EXPECT_EQ(1, q.d.cur.q[0].map_version);
	EXPECT_EQ(2, q.d.cur.q[0].rx[0].link.cpu);
	EXPECT_EQ(8194, q.d.cur.q[0].rx[1].link.napi_id);
	/* a new version: queue 1 has none now */
	ASSERT_EQ(0, feed(&q.d, map_msg(2, 1, 2, v2, 2)));
	EXPECT_EQ(3, q.d.cur.q[0].rx[0].link.cpu);
	EXPECT_EQ(Q_NO_LINK, q.d.cur.q[0].rx[1].link.napi_id);
	EXPECT_EQ(Q_NO_LINK, q.d.cur.q[0].tx[0].link.napi_id);
	fflush(q.out);
	EXPECT_NE(NULL, strstr(q.buf, "# ktap-metric-json: {\"host\":\"local\",\"ifindex\":5,\"irq\":27,\"map_version\":1,\"name\":\"nic.queue.rx.cpu\",\"napi_id\":8193,\"queue\":0,\"shape\":\"scalar\",\"time\":0.0,\"value\":2}\n"));
	EXPECT_NE(NULL, strstr(q.buf, "\"map_version\":2,\"name\":\"nic.queue.rx.cpu\",\"napi_id\":8193,\"queue\":0,\"shape\":\"scalar\",\"time\":0.02,\"value\":3}\n"));
	/* once a version, and none of a queue with no CPU */
	for (n = 0, p = q.buf; (p = strstr(p, "nic.queue.rx.cpu")); p++)
		n++;
	EXPECT_EQ(2, n);
	EXPECT_EQ(NULL, strstr(q.buf, "\"queue\":1"));

	/* a link of a netdev whose map the sample does not have */
	EXPECT_EQ(-1, feed(&q.d, map_msg(3, -1, 0, v1, 1)));
	EXPECT_STREQ("kernel reports queue 0 of netdev 5, which it does not have",
		     q.d.error);
	qrec_free(&q);
}

TEST_F(rec, malformed_messages)
{
	struct cpu_in c[3] = { { 0, true }, { 1, true }, { 2, true } };
	struct nl_msg *msg;
	struct nlattr *nest;

	/* a CPU the session does not have */
	EXPECT_EQ(-1, feed(&self->d, sample_msg(0, 0, c, 3, NULL, 0)));
	EXPECT_STREQ("kernel reports CPU 2 in a part of CPUs 0 to 2",
		     self->d.error);
	self->d.have = false;	/* the tool stops at the first error */

	/* a counter of 2 bytes */
	msg = sample_msg(1, 0, c, 1, NULL, 0);
	nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_CPU);
	nla_put_u32(msg, KSFT_PERFMON_A_CPU_STATS_ID, 1);
	nla_put_u16(msg, KSFT_PERFMON_A_CPU_STATS_USER, 1);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-1, feed(&self->d, msg));
	EXPECT_STREQ("malformed cpu-stats from the kernel", self->d.error);
	self->d.have = false;

	/* no seq */
	msg = nlmsg_alloc();
	genlmsg_put(msg, 0, 0, 0x20, 0, 0, KSFT_PERFMON_CMD_SAMPLE_GET, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_TIME, 1);
	EXPECT_EQ(-1, feed(&self->d, msg));
	EXPECT_STREQ("malformed sample from the kernel", self->d.error);

	/* a cpu-stats that is not nested */
	msg = sample_msg(2, 0, c, 1, NULL, 0);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU, 1);
	EXPECT_EQ(-1, feed(&self->d, msg));
	self->d.have = false;

	/* a CPU twice, and CPUs out of order */
	EXPECT_EQ(-1, feed(&self->d, sample_msg(3, 0, (struct cpu_in[]){
		c[1], c[1] }, 2, NULL, 0)));
	EXPECT_STREQ("kernel reports CPU 1 after CPU 1", self->d.error);
	self->d.have = false;
	EXPECT_EQ(-1, feed(&self->d, sample_msg(4, 0, (struct cpu_in[]){
		c[1], c[0] }, 2, NULL, 0)));
	EXPECT_STREQ("kernel reports CPU 0 after CPU 1", self->d.error);
}

TEST_HARNESS_MAIN
