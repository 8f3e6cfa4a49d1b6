// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the tool's userspace parsing and JSON writing:
 * tools/lib/samples.c and ktap.c (sample-get messages to samples to
 * metric lines) and tools/lib/json.c (the host label, every number).
 *
 * The input is a small program, so that most inputs reach deep: each
 * operation byte builds part of a sample-get message the way the kernel
 * does, or damages it (raw attributes, wrong lengths, truncation), or
 * hands the message to the parser. A malformed message must be refused
 * with a message, never crash or trip ASan/UBSan; every line written must
 * be one line of JSON after its tag.
 *
 * Build and run: make fuzz (clang -fsanitize=fuzzer,address,undefined).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>
#include <netlink/genl/genl.h>

#include "json.h"
#include "ktap.h"
#include "samples.h"

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct input *in, size_t bytes)
{
	uint64_t v = 0;

	while (bytes-- && in->n) {
		v = v << 8 | *in->p++;
		in->n--;
	}
	return v;
}

/* a part of a sample: its CPU range, the first part or not, the last */
static struct nl_msg *new_msg(struct input *in, uint32_t cpus)
{
	struct nl_msg *msg = nlmsg_alloc_size(8192);
	uint8_t flags = take(in, 1);

	genlmsg_put(msg, 0, 0, 0x20, 0, 0, KSFT_PERFMON_CMD_SAMPLE_GET, 1);
	nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_SEQ, take(in, 1));
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_START,
		    take(in, 1) % (cpus + 2));
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_CPU_END,
		    take(in, 1) % (cpus + 2));
	if (flags & 1)
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_TIME,
			    take(in, 4) * 1000);
	if (flags & 2)
		nla_put_u64(msg, KSFT_PERFMON_A_SAMPLE_DELAY, take(in, 4));
	if (flags & 4)
		nla_put_flag(msg, KSFT_PERFMON_A_SAMPLE_LAST_PART);
	return msg;
}

/*
 * Feed the message; a refused one must say why. The tool stops at the
 * first error; here the drain starts over, to go on exploring.
 */
static void feed(struct drain *d, struct nl_msg *msg)
{
	d->error[0] = '\0';
	if (drain_msg(d, nlmsg_hdr(msg))) {
		if (!d->error[0])
			abort();
		d->have = false;
	}
	nlmsg_free(msg);
}

/* every line is "# TAG: {...}\n", or a diagnostic comment */
static void check_output(const char *buf, size_t len)
{
	const char *line = buf, *end;

	while (line < buf + len) {
		end = memchr(line, '\n', buf + len - line);
		if (!end || strncmp(line, "# ktap-metric-json: {", 21) ||
		    end[-1] != '}' || memchr(line, '\0', end - line))
			abort();
		line = end + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct session s = { .id = 1 };
	struct nl_msg *msg = NULL;
	char host[64], esc[256];
	struct nlattr *nest;
	struct record r;
	struct drain d;
	size_t len = 0;
	char *buf = NULL;
	FILE *out;
	uint32_t optional;
	int i, hl;

	s.cpus = 1 + take(&in, 1) % 8;
	s.ndevs = take(&in, 1) % 3;
	/* any of the optional metrics, of CPUs and of queues */
	optional = take(&in, 4) << M_FIRST_OPTIONAL &
		   (M_CPU_NET | (s.ndevs ? M_QUEUE : 0));
	s.cpu_net = optional & M_CPU_NET;
	s.queues = optional & M_QUEUE ? 1 + take(&in, 1) % 4 : 0;
	for (i = 0; i < (int)s.ndevs; i++)
		s.ifindex[i] = i;
	/* the host label: any bytes that make a valid UTF-8 string */
	hl = take(&in, 1) % sizeof(host);
	for (i = 0; i < hl; i++)
		host[i] = take(&in, 1);
	host[hl] = '\0';
	if (!hl || !py_json_escape(host, esc, sizeof(esc)))
		strcpy(host, "local");

	out = open_memstream(&buf, &len);
	if (!out || record_init(&r, optional, host, take(&in, 4) * 1000, s.cpus,
				   out) || record_init_queues(&r, &s) ||
	    drain_init(&d, &s, record_sample, &r))
		abort();

	while (in.n) {
		uint8_t op = take(&in, 1);

		if (!msg && op % 8 != 7)
			msg = new_msg(&in, s.cpus);
		/* op 4 with bit 3 set: queue statistics, else a raw nest */
		switch (op % 8 == 4 && op & 8 ? 12 : op % 8) {
		case 0:		/* a CPU, as the kernel sends it */
		case 1:
			/* a message that is full takes no more */
			nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_CPU);
			if (!nest)
				break;
			nla_put_u32(msg, KSFT_PERFMON_A_CPU_STATS_ID,
				    take(&in, 1) % (s.cpus + 1));
			if (op & 8)
				nla_put_flag(msg, KSFT_PERFMON_A_CPU_STATS_ONLINE);
			for (i = 0; i < T_NR; i++)
				nla_put_u64(msg, KSFT_PERFMON_A_CPU_STATS_USER + i,
					    take(&in, 2) << (op >> 4));
			for (i = 0; s.cpu_net && i < N_NR; i++)
				nla_put_u64(msg,
					    KSFT_PERFMON_A_CPU_STATS_SOFTNET_PROCESSED + i,
					    take(&in, 2) << (op >> 4));
			nla_nest_end(msg, nest);
			break;
		case 2:		/* a netdev */
			nest = nla_nest_start(msg, KSFT_PERFMON_A_SAMPLE_DEV);
			if (!nest)
				break;
			nla_put_u32(msg, KSFT_PERFMON_A_DEV_STATS_IFINDEX,
				    take(&in, 1));
			if (op & 8)
				nla_put_flag(msg, KSFT_PERFMON_A_DEV_STATS_GONE);
			for (i = KSFT_PERFMON_A_DEV_STATS_RX_PACKETS;
			     i <= KSFT_PERFMON_A_DEV_STATS_MAX; i++)
				nla_put_u64(msg, i, take(&in, 2));
			nla_nest_end(msg, nest);
			break;
		case 3: {	/* a raw attribute: any type, length, bytes */
			uint8_t raw[32];
			int type = take(&in, 1), n = take(&in, 1) % 33;

			for (i = 0; i < n; i++)
				raw[i] = take(&in, 1);
			nla_put(msg, type & 31, n, raw);
			break;
		}
		case 4: {	/* a nest of raw attributes */
			nest = nla_nest_start(msg, take(&in, 1) & 7);
			if (!nest)
				break;
			nla_put_u32(msg, take(&in, 1) & 31, take(&in, 4));
			nla_nest_end(msg, nest);
			break;
		}
		case 12: {	/* queue statistics, as the kernel sends them */
			int type = op & 16 ? KSFT_PERFMON_A_SAMPLE_QUEUE :
					     KSFT_PERFMON_A_SAMPLE_QSTATS;

			nest = nla_nest_start(msg, type);
			if (!nest)
				break;
			nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_IFINDEX,
				    take(&in, 1) % 3);
			if (type == KSFT_PERFMON_A_SAMPLE_QUEUE) {
				nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_QUEUE_TYPE,
					    take(&in, 1) % 3);
				nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_QUEUE_ID,
					    take(&in, 1) % 6);
			} else if (op & 32) {
				nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_RX_QUEUES,
					    take(&in, 1) % 6);
				nla_put_u32(msg, KSFT_PERFMON_A_QSTATS_TX_QUEUES,
					    take(&in, 1) % 6);
			}
			if (op & 64)
				nla_put_flag(msg, KSFT_PERFMON_A_QSTATS_SKIPPED);
			for (i = KSFT_PERFMON_A_QSTATS_RX_PACKETS;
			     i <= KSFT_PERFMON_A_QSTATS_TX_WAKE; i++)
				if (take(&in, 1) & 1)
					nla_put_u64(msg, i, take(&in, 2));
			/* the map: its version, a queue's link */
			for (i = KSFT_PERFMON_A_QSTATS_MAP_VERSION;
			     i <= KSFT_PERFMON_A_QSTATS_MAX; i++)
				if (take(&in, 1) & 1)
					nla_put_u32(msg, i, take(&in, 1) % 4);
			nla_nest_end(msg, nest);
			break;
		}
		case 5:		/* cut the message short */
			nlmsg_hdr(msg)->nlmsg_len -= take(&in, 1) %
				(nlmsg_hdr(msg)->nlmsg_len - NLMSG_HDRLEN + 1);
			/* fall through */
		case 6:
		case 7:
			if (msg)
				feed(&d, msg);
			msg = NULL;
			break;
		}
	}
	if (msg)
		feed(&d, msg);
	if (drain_end(&d) && !d.error[0])
		abort();

	fflush(out);
	check_output(buf, len);
	for (i = 0; i < M_NR; i++)
		if (print_policy(out, i))
			abort();
	fclose(out);
	free(buf);
	drain_free(&d);
	record_free(&r);
	return 0;
}
