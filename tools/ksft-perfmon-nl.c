// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-nl: drive the ksft_perfmon generic netlink family and turn
 * its samples into the KTAP metric lines of network selftests.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>

#include "json.h"
#include "ktap.h"
#include "nl.h"
#include "samples.h"
#include "top.h"

#define PROG "ksft-perfmon-nl"

/* Exit statuses besides a command's own. */
#define EXIT_ERROR	1
#define EXIT_USAGE	2
#define EXIT_LOST	3

/* the last stop signal record got, and how many it got */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_count;

struct command;
static struct command *running_command;
static void command_stop(struct command *c, int sig, uint64_t grace_ns,
			 int signals);
/* --kill-after: how long COMMAND has to stop before SIGKILL */
static uint64_t kill_after_ns = 5 * NSEC_PER_SEC;

/* An error: one line on stderr, and record's COMMAND stopped and reaped. */
static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	struct command *c = running_command;
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c) {
		running_command = NULL;
		command_stop(c, SIGTERM, kill_after_ns, stop_count);
	}
	exit(EXIT_ERROR);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* ---- netlink ---------------------------------------------------------- */

struct kpm_nl {
	struct nl_sock *sk;
	int family;
};

static const char *const session_attr_names[] = {
	[KSFT_PERFMON_A_SESSION_ID] = "id",
	[KSFT_PERFMON_A_SESSION_IFINDEX] = "ifindex",
	[KSFT_PERFMON_A_SESSION_INTERVAL] = "interval",
	[KSFT_PERFMON_A_SESSION_RING_SIZE] = "ring-size",
	[KSFT_PERFMON_A_SESSION_CPU_NET] = "cpu-net",
	[KSFT_PERFMON_A_SESSION_QUEUES] = "queues",
};

static const char *const sample_attr_names[] = {
	[KSFT_PERFMON_A_SAMPLE_SESSION_ID] = "session-id",
	[KSFT_PERFMON_A_SAMPLE_CURSOR] = "cursor",
	[KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY] = "changed-only",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void kpm_nl_open(struct kpm_nl *nl)
{
	nl->sk = kpm_nl_socket(&nl->family);
	if (!nl->sk)
		die("cannot open a generic netlink socket");
	if (nl->family < 0)
		die("generic netlink family %s not found: is the ksft_perfmon module loaded?",
		    KSFT_PERFMON_FAMILY_NAME);
}

static struct nl_msg *msg_new(struct kpm_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = kpm_nl_msg(nl->family, cmd, flags);

	if (!msg)
		die("out of memory");
	return msg;
}

/*
 * kpm_nl_talk(), and an error as one line: the errno, the kernel's extack
 * message and the name of the attribute it points at, looked up in @names;
 * none for an error that points at attribute @quiet (-1: none is quiet),
 * which sets *@quieted instead. A socket that fails is fatal; the
 * kernel's negative errno is returned.
 */
static int talk_quiet(struct kpm_nl *nl, const char *op, struct nl_msg *msg,
		      const char *const *names, unsigned int nr_names,
		      nl_recvmsg_msg_cb_t valid, void *arg, int quiet,
		      bool *quieted)
{
	struct kpm_ack ack;

	if (!kpm_nl_talk(nl->sk, msg, valid, arg, &ack))
		return 0;
	if (!ack.from_kernel)
		die("%s: %s", op, ack.msg);
	if (quiet >= 0 && ack.bad_attr == quiet) {
		*quieted = true;
		return ack.err;
	}

	fprintf(stderr, PROG ": %s: %s", op, strerror(-ack.err));
	if (ack.msg[0])
		fprintf(stderr, ": kernel reports: %s", ack.msg);
	else if (ack.err == -EPERM)
		/* genetlink's own check of admin-perm, which has no extack */
		fputs(": needs CAP_NET_ADMIN in the initial user namespace",
		      stderr);
	if (ack.bad_attr >= 0 && (unsigned int)ack.bad_attr < nr_names &&
	    names[ack.bad_attr])
		fprintf(stderr, " (attribute %s)", names[ack.bad_attr]);
	else if (ack.bad_attr >= 0)
		fprintf(stderr, " (attribute %d)", ack.bad_attr);
	fputc('\n', stderr);
	return ack.err;
}

static int talk(struct kpm_nl *nl, const char *op, struct nl_msg *msg,
		const char *const *names, unsigned int nr_names,
		nl_recvmsg_msg_cb_t valid, void *arg)
{
	return talk_quiet(nl, op, msg, names, nr_names, valid, arg, -1, NULL);
}

/* ---- sessions --------------------------------------------------------- */

static int session_one_cb(struct nl_msg *msg, void *arg)
{
	if (session_parse(nlmsg_hdr(msg), arg))
		die("malformed session message from the kernel");
	return NL_OK;
}

/* what a session samples besides CPU times and netdevs */
struct session_opts {
	bool cpu_net;		/* the CPUs' network counts */
	uint32_t queues;	/* queue statistics of this many, or 0 */
};

/*
 * session-new; with @ring_refused, a refusal of the ring (its size over
 * a limit) is not printed, but sets *@ring_refused
 */
static int session_new(struct kpm_nl *nl, const uint32_t *ifindex,
		       unsigned int ndevs, uint64_t interval, uint32_t ring,
		       const struct session_opts *o, struct session *s,
		       bool *ring_refused)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	unsigned int i;

	for (i = 0; i < ndevs; i++)
		NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, ifindex[i]);
	NLA_PUT_U64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, interval);
	NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, ring);
	if (o->cpu_net)
		NLA_PUT_FLAG(msg, KSFT_PERFMON_A_SESSION_CPU_NET);
	if (o->queues)
		NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_QUEUES, o->queues);
	return talk_quiet(nl, "session-new", msg, session_attr_names,
			  ARRAY_SIZE(session_attr_names), session_one_cb, s,
			  ring_refused ? KSFT_PERFMON_A_SESSION_RING_SIZE : -1,
			  ring_refused);
nla_put_failure:
	die("out of memory");
}

static int session_get(struct kpm_nl *nl, uint32_t id, struct session *s)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SESSION_GET, 0);

	NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return talk(nl, "session-get", msg, session_attr_names,
		    ARRAY_SIZE(session_attr_names), session_one_cb, s);
nla_put_failure:
	die("out of memory");
}

static int session_del(struct kpm_nl *nl, uint32_t id)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SESSION_DEL, 0);

	NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return talk(nl, "session-del", msg, session_attr_names,
		    ARRAY_SIZE(session_attr_names), NULL, NULL);
nla_put_failure:
	die("out of memory");
}

/* ---- samples ---------------------------------------------------------- */

static int sample_msg_cb(struct nl_msg *msg, void *arg)
{
	struct drain *d = arg;

	if (drain_msg(d, nlmsg_hdr(msg)))
		die("%s", d->error);
	return NL_OK;
}

/* the loaded module is older than changed-only, and refused it */
static bool changed_only_refused;

/*
 * Read every sample from the cursor on, each after the first with only
 * what changed since the one before it: a fraction of the attributes to
 * build and to walk, where most CPUs' counters stay as they were. A
 * module from before changed-only refuses the flag (its policy does not
 * know it); then whole samples, from then on.
 */
static int drain(struct kpm_nl *nl, struct drain *d)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SAMPLE_GET,
					NLM_F_DUMP);
	bool refused = false;
	int err;

	NLA_PUT_U32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, d->s->id);
	NLA_PUT_U64(msg, KSFT_PERFMON_A_SAMPLE_CURSOR, d->cursor);
	if (!changed_only_refused)
		NLA_PUT_FLAG(msg, KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY);
	err = talk_quiet(nl, "sample-get", msg, sample_attr_names,
			 ARRAY_SIZE(sample_attr_names), sample_msg_cb, d,
			 changed_only_refused ? -1 :
			 KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY, &refused);
	if (refused) {
		changed_only_refused = true;
		return drain(nl, d);
	}
	if (!err && drain_end(d))
		die("%s", d->error);
	return err;
nla_put_failure:
	die("out of memory");
}

/* ---- raw samples as JSON --------------------------------------------- */

/*
 * The keys of a netdev in dump: its counters, then "gone", "ifindex" and
 * "time"; dev_key_order lists them in sort_keys order (dev_keys_sort()).
 */
#define DEV_KEY_GONE	KPM_DEV_NR_STATS
#define DEV_KEY_IFINDEX	(KPM_DEV_NR_STATS + 1)
#define DEV_KEY_TIME	(KPM_DEV_NR_STATS + 2)
#define DEV_NR_KEYS	(KPM_DEV_NR_STATS + 3)
static int dev_key_order[DEV_NR_KEYS];

static const char *dev_key_name(int k)
{
	if (k == DEV_KEY_GONE)
		return "gone";
	if (k == DEV_KEY_IFINDEX)
		return "ifindex";
	if (k == DEV_KEY_TIME)
		return "time";
	return kpm_dev_stat_names[k];
}

static int cmp_dev_key(const void *a, const void *b)
{
	return strcmp(dev_key_name(*(const int *)a),
		      dev_key_name(*(const int *)b));
}

/* the keys of a netdev in sort_keys order, once */
static void dev_keys_sort(void)
{
	static bool sorted;
	int k;

	if (sorted)
		return;
	for (k = 0; k < DEV_NR_KEYS; k++)
		dev_key_order[k] = k;
	qsort(dev_key_order, DEV_NR_KEYS, sizeof(int), cmp_dev_key);
	sorted = true;
}

static int qstat_order[KPM_QSTAT_NR];

static int cmp_qstat(const void *a, const void *b)
{
	return strcmp(kpm_qstat_names[*(const int *)a],
		      kpm_qstat_names[*(const int *)b]);
}

/* the counters of @qs that the driver reports, by name, in sort_keys order */
static void queue_stats_json(struct jw *w, const struct queue_stats *qs)
{
	static bool sorted;
	int i;

	if (!sorted) {
		for (i = 0; i < KPM_QSTAT_NR; i++)
			qstat_order[i] = i;
		qsort(qstat_order, KPM_QSTAT_NR, sizeof(int), cmp_qstat);
		sorted = true;
	}
	jw_obj_start(w);
	for (i = 0; i < KPM_QSTAT_NR; i++) {
		int k = qstat_order[i];

		if (qs->v[k] == Q_UNSET)
			continue;
		jw_key(w, kpm_qstat_names[k]);
		jw_uint(w, qs->v[k]);
	}
	jw_obj_end(w);
}

/* the queues of one direction that have a link, with it */
static void queue_links_json(struct jw *w, const struct queue_stats *qs,
			     uint32_t nq)
{
	uint32_t q;

	jw_arr_start(w);
	for (q = 0; q < nq; q++) {
		if (qs[q].link.napi_id == Q_NO_LINK)
			continue;
		jw_obj_start(w);
		if (qs[q].link.cpu != Q_NO_LINK) {
			jw_key(w, "cpu");
			jw_uint(w, qs[q].link.cpu);
		}
		if (qs[q].link.irq != Q_NO_LINK) {
			jw_key(w, "irq");
			jw_uint(w, qs[q].link.irq);
		}
		jw_key(w, "napi_id");
		jw_uint(w, qs[q].link.napi_id);
		jw_key(w, "queue");
		jw_uint(w, q);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/*
 * The queue statistics of each netdev of @smp: with a read's, its base
 * statistics, and those of its queues the sample has; with its map, the
 * map's version and the queues linked to a NAPI instance.
 */
static void qstats_json(struct jw *w, const struct session *s,
			const struct sample *smp)
{
	uint32_t d, q;

	jw_arr_start(w);
	for (d = 0; d < s->ndevs; d++) {
		const struct dev_qstats *qs = &smp->q[d];

		jw_obj_start(w);
		if (qs->read) {
			jw_key(w, "base");
			queue_stats_json(w, &qs->base);
		}
		jw_key(w, "ifindex");
		jw_uint(w, smp->dev[d].ifindex);
		if (qs->mapped) {
			jw_key(w, "map");
			jw_obj_start(w);
			jw_key(w, "rx");
			queue_links_json(w, qs->rx, s->queues);
			jw_key(w, "tx");
			queue_links_json(w, qs->tx, s->queues);
			jw_key(w, "version");
			jw_uint(w, qs->map_version);
			jw_obj_end(w);
		}
		if (qs->map_skipped) {
			jw_key(w, "map_skipped");
			jw_bool(w, true);
		}
		jw_key(w, "over_budget");
		jw_bool(w, qs->over_budget);
		jw_key(w, "read");
		jw_bool(w, qs->read);
		if (qs->read) {
			jw_key(w, "rx");
			jw_arr_start(w);
			for (q = 0; q < qs->rx_queues && q < s->queues; q++)
				queue_stats_json(w, &qs->rx[q]);
			jw_arr_end(w);
			jw_key(w, "rx_queues");
			jw_uint(w, qs->rx_queues);
		}
		jw_key(w, "skipped");
		jw_bool(w, qs->skipped);
		if (qs->read) {
			jw_key(w, "time");
			jw_uint(w, qs->time);
			jw_key(w, "tx");
			jw_arr_start(w);
			for (q = 0; q < qs->tx_queues && q < s->queues; q++)
				queue_stats_json(w, &qs->tx[q]);
			jw_arr_end(w);
			jw_key(w, "tx_queues");
			jw_uint(w, qs->tx_queues);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* One raw sample of session @s as a JSON object, as dump prints it. */
static void sample_json(struct jw *w, const struct session *s,
			const struct sample *smp)
{
	uint32_t c;
	unsigned int i;

	dev_keys_sort();
	jw_obj_start(w);
	jw_key(w, "cost");
	jw_uint(w, smp->cost);
	jw_key(w, "cpus");
	jw_arr_start(w);
	for (c = 0; c < s->cpus; c++) {
		const struct cpu_stats *cs = &smp->cpu[c];

		if (!cs->present) {
			jw_null(w);
			continue;
		}
		jw_obj_start(w);
		/* sort_keys order */
		jw_key(w, "guest");
		jw_uint(w, cs->t[T_GUEST]);
		jw_key(w, "guest_nice");
		jw_uint(w, cs->t[T_GUEST_NICE]);
		jw_key(w, "idle");
		jw_uint(w, cs->t[T_IDLE]);
		jw_key(w, "iowait");
		jw_uint(w, cs->t[T_IOWAIT]);
		jw_key(w, "irq");
		jw_uint(w, cs->t[T_IRQ]);
		jw_key(w, "nice");
		jw_uint(w, cs->t[T_NICE]);
		jw_key(w, "online");
		jw_bool(w, cs->online);
		jw_key(w, "softirq");
		jw_uint(w, cs->t[T_SOFTIRQ]);
		if (s->cpu_net) {
			jw_key(w, "softirq_net_rx");
			jw_uint(w, cs->net[N_NET_RX]);
			jw_key(w, "softirq_net_tx");
			jw_uint(w, cs->net[N_NET_TX]);
			jw_key(w, "softnet_dropped");
			jw_uint(w, cs->net[N_DROPPED]);
			jw_key(w, "softnet_processed");
			jw_uint(w, cs->net[N_PROCESSED]);
			jw_key(w, "softnet_received_rps");
			jw_uint(w, cs->net[N_RPS]);
			jw_key(w, "softnet_time_squeeze");
			jw_uint(w, cs->net[N_SQUEEZED]);
		}
		jw_key(w, "steal");
		jw_uint(w, cs->t[T_STEAL]);
		jw_key(w, "system");
		jw_uint(w, cs->t[T_SYSTEM]);
		jw_key(w, "user");
		jw_uint(w, cs->t[T_USER]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "delay");
	jw_uint(w, smp->delay);
	jw_key(w, "devs");
	jw_arr_start(w);
	for (i = 0; i < smp->ndevs; i++) {
		const struct dev_stats *ds = &smp->dev[i];
		int n;

		jw_obj_start(w);
		for (n = 0; n < DEV_NR_KEYS; n++) {
			int k = dev_key_order[n];

			if (k == DEV_KEY_GONE) {
				jw_key(w, "gone");
				jw_bool(w, ds->gone);
			} else if (k == DEV_KEY_IFINDEX) {
				jw_key(w, "ifindex");
				jw_uint(w, ds->ifindex);
			} else if (k == DEV_KEY_TIME) {
				if (!ds->gone) {
					jw_key(w, "time");
					jw_uint(w, ds->time);
				}
			} else if (!ds->gone) {
				jw_key(w, kpm_dev_stat_names[k]);
				jw_uint(w, ds->v[k]);
			}
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (smp->q) {
		jw_key(w, "qstats");
		qstats_json(w, s, smp);
	}
	jw_key(w, "seq");
	jw_uint(w, smp->seq);
	jw_key(w, "session");
	jw_uint(w, s->id);
	jw_key(w, "time");
	jw_uint(w, smp->time);
	jw_obj_end(w);
}

/* @smp as a line of its own on @f */
static void sample_json_line(FILE *f, const struct session *s,
			     const struct sample *smp)
{
	struct jw w;

	jw_init(&w, f);
	sample_json(&w, s, smp);
	fputc('\n', f);
	if (w.error)
		die("internal error: a sample as JSON");
}

/* ---- record ----------------------------------------------------------- */

/* The signals that end a recording, and are passed on to COMMAND. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void on_stop(int sig)
{
	stop_signal = sig;
	stop_count++;
}

/* only to cut the sleep between drains short when COMMAND exits */
static void on_child(int sig)
{
	(void)sig;
}

static void stop_signal_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(set, stop_signals[i]);
}

static void install_handlers(void)
{
	struct sigaction sa = {};
	size_t i;

	/*
	 * A signal always cuts the sleep between drains short, restart or
	 * not (nanosleep(2) is never restarted); SA_RESTART keeps it from
	 * failing a write to a full pipe with EINTR, which stdio would take
	 * for an output error and lose what it held.
	 */
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_stop;
	stop_signal_set(&sa.sa_mask);	/* one at a time: stop_count++ */
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
}

/*
 * Reads come often enough that a quarter of the ring never fills up, and
 * at most a second apart: a read costs about a millisecond of a TCG
 * guest's CPU whatever it carries (wake-up, request, dump start), on top
 * of each sample's. With --spool, at most 200 ms apart: what a SIGKILL
 * loses.
 */
#define READ_PERIOD_MAX		NSEC_PER_SEC
#define READ_PERIOD_SPOOL_MAX	(200 * NSEC_PER_MSEC)
#define RING_DEFAULT		256
#define RING_DEFAULT_MAX	4096
/* a quarter of what one socket's sessions may hold */
#define RING_DEFAULT_BYTES	(4 << 20)
/* record --queues: the queues of each direction a sample holds */
#define QUEUES_DEFAULT		16

/*
 * record's default ring: 256 samples, or as many as make a quarter of the
 * ring the longest time between reads, @period_max, up to 4096 (at 1 ms a
 * ring of 256 would be read every 64 ms); then halved while over
 * RING_DEFAULT_BYTES.
 */
static uint32_t ring_default(uint64_t interval, uint64_t period_max)
{
	uint32_t ring = RING_DEFAULT;

	while (ring < RING_DEFAULT_MAX && interval * (ring / 4) < period_max)
		ring *= 2;
	return ring;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	nanosleep(&ts, NULL);
}

/* decimal digits only: no sign, no space, no octal or hex prefix */
static uint64_t parse_u64(const char *opt, const char *s, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !isdigit((unsigned char)*s) || *end || v > max)
		die("%s: '%s' is not a number from 0 to %llu", opt, s,
		    (unsigned long long)max);
	return v;
}

/* record's and top's --queues: 1 to KSFT_PERFMON_QUEUES_MAX */
static uint32_t parse_queues(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !isdigit((unsigned char)*s) || *end || !v ||
	    v > KSFT_PERFMON_QUEUES_MAX)
		die("--queues: '%s' is not a number from 1 to %u", s,
		    KSFT_PERFMON_QUEUES_MAX);
	return v;
}

static double parse_positive(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || !isfinite(v))
		die("%s: '%s' is not a positive number", opt, s);
	return v;
}

/* a label or name that JSON takes: non-empty UTF-8 of a sane length */
static const char *parse_label(const char *what, const char *s)
{
	char esc[256];

	if (!*s || !py_json_escape(s, esc, sizeof(esc)))
		die("%s: '%s' is not a non-empty UTF-8 label", what, s);
	return s;
}

static uint32_t ifname_to_index(const char *name)
{
	unsigned int i = if_nametoindex(name);

	if (!i)
		die("--ifname: no netdev '%s' in this network namespace", name);
	return i;
}

/* -i NAME or -x N of record and top: one more netdev in @ifindex */
static void parse_netdev(int opt, const char *arg, uint32_t *ifindex,
			 unsigned int *ndevs)
{
	if (*ndevs == KSFT_PERFMON_DEVS_MAX)
		die("--%s: at most %u netdevs", opt == 'i' ? "ifname" : "ifindex",
		    KSFT_PERFMON_DEVS_MAX);
	ifindex[(*ndevs)++] = opt == 'i' ? ifname_to_index(arg) :
		parse_u64("--ifindex", arg, UINT32_MAX);
}

/* --interval MS, fractions allowed, in ns */
static uint64_t parse_interval(const char *arg)
{
	return llround(parse_positive("--interval", arg) * NSEC_PER_MSEC);
}

/*
 * While recording, samples are only parsed and spooled, raw, to a
 * temporary file, or to the file of --spool; they become metric lines
 * once the session is gone. The reader then keeps up with the sampler on
 * slow machines too. A spool starts with what reading it back needs, and
 * is for the same build of the tool: the structs are as they are in
 * memory, and their sizes are checked.
 */
static const char spool_magic[8] = "KPMSPOL1";

struct spool_head {
	char magic[8];
	/* of struct session, cpu_stats, dev_stats, dev_qstats, queue_stats */
	uint32_t sizes[5];
	uint32_t host_len;	/* the host label follows, unterminated */
	uint32_t metrics;	/* the optional ones, M_BIT()s */
	uint64_t time_base;
	struct session s;
};

/*
 * @path, created or truncated, or an unnamed temporary file: close-on-exec
 * either way. A symlink at @path is refused, for root in a sticky /tmp.
 */
static FILE *spool_open(const char *path)
{
	FILE *f = NULL;
	int fd;

	if (!path) {
		f = tmpfile();
		if (f)
			fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
	} else {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW |
			  O_CLOEXEC, 0666);
		f = fd < 0 ? NULL : fdopen(fd, "w+");
	}
	if (!f)
		die("cannot create %s: %s", path ? path : "a temporary file",
		    strerror(errno));
	return f;
}

static void spool_start(FILE *f, const struct session *s, uint32_t metrics,
			const char *host, uint64_t time_base)
{
	struct spool_head h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, spool_magic, sizeof(h.magic));
	h.sizes[0] = sizeof(struct session);
	h.sizes[1] = sizeof(struct cpu_stats);
	h.sizes[2] = sizeof(struct dev_stats);
	h.sizes[3] = sizeof(struct dev_qstats);
	h.sizes[4] = sizeof(struct queue_stats);
	h.host_len = strlen(host);
	h.metrics = metrics;
	h.time_base = time_base;
	h.s = *s;
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(host, 1, h.host_len, f) != h.host_len || fflush(f))
		die("cannot write the spool: %s", strerror(errno));
}

/* the head of spool @f, its host label malloc()ed into *@host */
static void spool_read_head(FILE *f, const char *path,
			    struct spool_head *h, char **host)
{
	rewind(f);
	if (fread(h, sizeof(*h), 1, f) != 1 ||
	    memcmp(h->magic, spool_magic, sizeof(h->magic)))
		die("%s: not a spool of record --spool", path);
	if (h->sizes[0] != sizeof(struct session) ||
	    h->sizes[1] != sizeof(struct cpu_stats) ||
	    h->sizes[2] != sizeof(struct dev_stats) ||
	    h->sizes[3] != sizeof(struct dev_qstats) ||
	    h->sizes[4] != sizeof(struct queue_stats) ||
	    h->s.queues > KSFT_PERFMON_QUEUES_MAX ||
	    (h->metrics & M_QUEUE && !h->s.queues) ||
	    h->s.ndevs > KSFT_PERFMON_DEVS_MAX || !h->s.cpus ||
	    h->s.cpus > 65536 || !h->host_len || h->host_len > 1024 ||
	    h->metrics & ~(M_CPU_NET | M_QUEUE) ||
	    (h->metrics & M_CPU_NET && !h->s.cpu_net))
		die("%s: a spool of another build of " PROG, path);
	*host = calloc(1, h->host_len + 1);
	if (!*host || fread(*host, 1, h->host_len, f) != h->host_len)
		die("%s: the spool ends in its head", path);
}

static bool spool_io(void *p, size_t size, size_t n, FILE *f, bool write)
{
	return (write ? fwrite(p, size, n, f) : fread(p, size, n, f)) == n;
}

/* the queue statistics of @smp, of session @s, to or from spool @f */
static bool spool_queues(FILE *f, const struct session *s,
			 const struct sample *smp, bool write)
{
	uint32_t d, nq = s->queues;

	for (d = 0; smp->q && d < s->ndevs; d++) {
		struct dev_qstats *qs = &smp->q[d];

		if (!spool_io(qs, offsetof(struct dev_qstats, rx), 1, f, write) ||
		    !spool_io(qs->rx, sizeof(*qs->rx), nq, f, write) ||
		    !spool_io(qs->tx, sizeof(*qs->tx), nq, f, write))
			return false;
	}
	return true;
}

static void spool_sample(struct drain *d, const struct sample *smp)
{
	FILE *f = d->arg;

	if (fwrite(smp, offsetof(struct sample, cpu), 1, f) != 1 ||
	    fwrite(&smp->ndevs, sizeof(smp->ndevs), 1, f) != 1 ||
	    fwrite(smp->dev, sizeof(*smp->dev), smp->ndevs, f) != smp->ndevs ||
	    fwrite(smp->cpu, sizeof(*smp->cpu), d->s->cpus, f) != d->s->cpus ||
	    !spool_queues(f, d->s, smp, true))
		die("cannot spool a sample: %s", strerror(errno));
}

/*
 * The samples of spool @f, after its head, into metric lines, or with @r
 * NULL raw as dump's; the gaps in their sequence numbers are added to
 * *@gaps. A spool whose writer was killed may end in part of a sample:
 * with @partial, that part is left out and true returned; else it is an
 * error.
 */
static bool unspool(FILE *f, struct record *r, const struct session *s,
		    uint64_t *gaps, bool partial)
{
	uint64_t next = 0;
	struct sample smp;
	size_t n;

	if (sample_alloc(&smp, s->cpus) || sample_alloc_queues(&smp, s))
		die("out of memory");
	while ((n = fread(&smp, 1, offsetof(struct sample, cpu), f))) {
		if (n != offsetof(struct sample, cpu) ||
		    fread(&smp.ndevs, sizeof(smp.ndevs), 1, f) != 1 ||
		    smp.ndevs > KSFT_PERFMON_DEVS_MAX ||
		    fread(smp.dev, sizeof(*smp.dev), smp.ndevs, f) != smp.ndevs ||
		    fread(smp.cpu, sizeof(*smp.cpu), s->cpus, f) != s->cpus ||
		    !spool_queues(f, s, &smp, false)) {
			/* cut short, not cut wrong: at the end of the file */
			if (!partial || ferror(f) || !feof(f))
				die("cannot read a spooled sample back");
			sample_free(&smp);
			return true;
		}
		/* a spool of other sizes than its head says reads as nonsense */
		if (smp.seq < next)
			die("cannot read a spooled sample back: seq %llu after %llu",
			    (unsigned long long)smp.seq,
			    (unsigned long long)next - 1);
		if (smp.seq > next)
			*gaps += smp.seq - next;
		next = smp.seq + 1;
		if (r)
			record_add(r, &smp, s->ndevs);
		else
			sample_json_line(stdout, s, &smp);
	}
	if (ferror(f))
		die("cannot read a spooled sample back");
	sample_free(&smp);
	return false;
}

/*
 * the policy lines record prints before the observations of session @s,
 * of the default metrics and the @optional ones
 */
static void print_policies(const struct session *s, uint32_t optional)
{
	uint32_t metrics = M_DEFAULT | optional;
	int m;

	/* the netdevs' metrics only with netdevs */
	for (m = 0; m < M_NR; m++)
		if (metrics & M_BIT(m) &&
		    (((m < M_NIC_RX_DROPPED || m > M_NIC_TX_DROPPED) &&
		      m < M_QUEUE_RX_PACKETS) || s->ndevs))
			if (print_policy(stdout, m))
				die("internal error: a policy line");
}

/*
 * The lines of the samples in @f, as record prints them: with the
 * policies and through @r, or --raw (@raw) as JSON lines, @r then empty.
 * @partial as unspool() takes it; returns unspool()'s.
 */
static bool print_spool(FILE *f, const char *host, uint64_t time_base,
			const struct session *s, uint32_t metrics, bool raw,
			bool partial, struct record *r, uint64_t *gaps)
{
	if (raw) {
		memset(r, 0, sizeof(*r));
		return unspool(f, NULL, s, gaps, partial);
	}
	print_policies(s, metrics);
	if (record_init(r, metrics, host, time_base, s->cpus, stdout) ||
	    record_init_queues(r, s))
		die("out of memory");
	return unspool(f, r, s, gaps, partial);
}

/* the netdevs whose queue statistics record asked for and never had */
static void print_no_queues(const struct record *r)
{
	uint32_t d;

	for (d = 0; r->qseen && d < r->qdevs; d++)
		if (!r->qseen[d])
			printf("# ksft-perfmon: no queue statistics read from netdev %u: its driver has none, it was down, or their lock was always held\n",
			       r->qifindex[d]);
}

/* after the last sample: the decreases @r saw, and the output flushed */
static void print_end(struct record *r)
{
	if (record_print_decreases(stdout, r))
		die("cannot write the output");
	fflush(stdout);
	if (r->bad_output)
		die("a value could not be written as JSON (NaN or infinity)");
}

/*
 * COMMAND of record -- COMMAND. It runs in a process group of its own,
 * which a stop signals as a whole, so that what a shell COMMAND started
 * stops with it. On a stop, COMMAND is reaped only once its whole group
 * is gone: until then its pid, and so the group's id, cannot be reused.
 */
struct command {
	pid_t pid;		/* and process group; 0 when there is none */
	bool exited;		/* seen by waitid(WNOWAIT), perhaps not reaped */
	bool reaped;
	int status;		/* waitpid()'s, once reaped */
};

/*
 * Start COMMAND, unless a stop came first (then 0). The stop signals are
 * blocked across fork(), so that one sent meanwhile reaches record, not
 * the child's copy of record's handler, which would swallow it.
 */
static pid_t start_command(char **argv)
{
	pid_t parent = getpid(), pid;
	sigset_t block, old;
	size_t i;

	stop_signal_set(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (stop_signal) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
			signal(stop_signals[i], SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		setpgid(0, 0);
		/* record killed outright takes COMMAND with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	/* both sides, so that the group exists before either goes on */
	setpgid(pid, pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* Reap COMMAND if it has exited (or wait for it with @flags 0). */
static bool command_reap(struct command *c, int flags)
{
	pid_t r;

	if (!c->pid || c->reaped)
		return true;
	do
		r = waitpid(c->pid, &c->status, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die("waitpid: %s", strerror(errno));
	c->reaped = r == c->pid;
	c->exited |= c->reaped;
	return c->reaped;
}

/* Whether COMMAND has exited, leaving it unreaped. */
static bool command_exited(struct command *c)
{
	siginfo_t si = {};
	int r;

	if (c->exited)
		return true;
	do
		r = waitid(P_PID, c->pid, &si, WEXITED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die("waitid: %s", strerror(errno));
	c->exited = si.si_pid == c->pid;
	return c->exited;
}

/*
 * Whether a process of group @pgid is alive, zombies aside: kill(-pgid, 0)
 * counts the zombie COMMAND, which stays in the group until reaped.
 */
static bool group_alive(pid_t pgid)
{
	char path[300], buf[512], state, *p;
	struct dirent *de;
	bool alive = false;
	int pgrp, ppid;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc");
	if (!dir)
		return kill(-pgid, 0) == 0;
	while (!alive && (de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* pid (comm) state ppid pgrp: comm may hold spaces and ')' */
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		alive = p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 &&
			pgrp == pgid && state != 'Z';
	}
	closedir(dir);
	return alive;
}

/*
 * Stop COMMAND's process group with @sig and reap COMMAND, once nothing
 * of the group lives. If that takes over @grace_ns, or record gets a
 * stop signal beyond the @signals this stop answers, the group gets
 * SIGKILL. A COMMAND that already exited on its own is only reaped: a
 * shell would leave what it left running.
 */
static void command_stop(struct command *c, int sig, uint64_t grace_ns,
			 int signals)
{
	uint64_t deadline = now_ns() + grace_ns;

	if (c->reaped || command_exited(c)) {
		command_reap(c, 0);
		return;
	}
	kill(-c->pid, sig);
	/* COMMAND may have left its group (setsid) */
	if (getpgid(c->pid) != c->pid)
		kill(c->pid, sig);
	/* a stopped job acts on the signal only once it goes on */
	kill(-c->pid, SIGCONT);
	while (!command_exited(c) || group_alive(c->pid)) {
		if (now_ns() >= deadline || stop_count > signals) {
			fprintf(stderr, PROG ": COMMAND's process group did not stop on %s; sending SIGKILL\n",
				strsignal(sig));
			kill(-c->pid, SIGKILL);
			kill(c->pid, SIGKILL);
			break;
		}
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	command_reap(c, 0);
}

/*
 * The kernel selftests' bkg(..., ksft_ready=True) passes a pipe in
 * KSFT_READY_FD and waits for a line on it: sampling has started. The
 * line names our pid, so that a helper can stop a record it started on
 * another host.
 *
 * ready_fd() reads the variable before record opens anything, so that a
 * descriptor that is open then is the caller's: one that is not is
 * refused, where record would later have written into a file of its own.
 * The variable is not passed on to COMMAND.
 */
static int ready_fd(void)
{
	const char *env = getenv("KSFT_READY_FD");
	int fd;

	if (!env)
		return -1;
	fd = parse_u64("KSFT_READY_FD", env, INT_MAX);
	if (fcntl(fd, F_GETFD) < 0)
		die("KSFT_READY_FD: %d is not an open file descriptor", fd);
	unsetenv("KSFT_READY_FD");
	return fd;
}

static void tell_ready(int fd)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (fd < 0)
		return;
	/* a reader that went away is no reason to stop recording */
	sigaction(SIGPIPE, &ign, &old);
	dprintf(fd, "ready %d\n", (int)getpid());
	sigaction(SIGPIPE, &old, NULL);
	if (fd > STDERR_FILENO)
		close(fd);
}

static const char record_usage[] =
"usage: " PROG " record [OPTIONS] (--duration S | -- COMMAND [ARGS...])\n"
"\n"
"Sample the CPUs and netdevs in the kernel while COMMAND runs, or for S\n"
"seconds, then print the KTAP metric policy and observation lines.\n"
"\n"
"  -i, --ifname NAME     sample netdev NAME (repeatable)\n"
"  -x, --ifindex N       sample the netdev of index N (repeatable)\n"
"  -I, --interval MS     sampling interval in ms, fractions allowed\n"
"                        (default 1000; the kernel takes 0.1 to 60000)\n"
"  -r, --ring N          samples the kernel keeps between reads (default:\n"
"                        4 s of samples, 0.8 s with --spool, as a power\n"
"                        of two from 256 to 4096, and 4 MiB at most);\n"
"                        record reads every quarter of the ring's time,\n"
"                        at most 1 s (200 ms with --spool) apart\n"
"  -H, --host LABEL      the host label of every line (default local)\n"
"  -t, --time-base NS    CLOCK_MONOTONIC ns that time 0 stands for\n"
"                        (default: when recording starts)\n"
"  -d, --duration S      record for S seconds, fractions allowed\n"
"  -k, --kill-after S    when recording stops before COMMAND exits, give\n"
"                        it S seconds after the signal, then SIGKILL\n"
"                        (default 5)\n"
"      --raw             print the raw samples as dump does, one JSON\n"
"                        object a line, instead of the metric lines\n"
"  -S, --spool FILE      keep the samples read so far in FILE, written\n"
"                        out at each read, for replay after a record\n"
"                        that was killed\n"
"  -m, --metrics LIST    print these metrics too, comma-separated, or\n"
"                        all of them with \"all\" (repeatable): see\n"
"                        METRICS below\n"
"  -Q, --queues N        with nic.queue metrics, the queues of each\n"
"                        direction of a netdev they cover (default 16,\n"
"                        at most 64)\n"
"  -h, --help            this text\n"
"\n"
"METRICS, besides the default set (cpu.time.usr, cpu.time.sys,\n"
"cpu.time.sirq, cpu.utilization, and with netdevs nic.rx.dropped,\n"
"nic.rx.missed_errors, nic.tx.dropped), which the kernel samples only\n"
"when one of them is asked for. Per-cpu counts since the start:\n"
"  cpu.softnet.processed  packets into the receive core (softnet_stat)\n"
"  cpu.softnet.dropped    packets dropped on a full backlog\n"
"  cpu.softnet.squeezed   NAPI rounds that ran out of budget or time\n"
"  cpu.softnet.rps        RPS IPIs taken\n"
"  cpu.softirq.net_rx     NET_RX softirqs run (/proc/softirqs)\n"
"  cpu.softirq.net_tx     NET_TX softirqs run\n"
"Counts of each queue of each netdev since the start, scalars labelled\n"
"with its ifindex and queue, from drivers with queue statistics (the\n"
"netdev family's qstats-get); \"all\" has them only with netdevs:\n"
"  nic.queue.rx.packets, nic.queue.rx.bytes, nic.queue.rx.alloc_fail,\n"
"  nic.queue.rx.hw_drops, nic.queue.tx.packets, nic.queue.tx.bytes,\n"
"  nic.queue.tx.stop\n"
"The CPU each queue's IRQ goes to, at the start and whenever the netdev's\n"
"map of queues to NAPI instances, IRQs and CPUs changes, scalars\n"
"labelled with its ifindex, queue, napi_id, irq and map_version, for\n"
"drivers that link their queues to NAPI instances with an IRQ:\n"
"  nic.queue.rx.cpu, nic.queue.tx.cpu\n"
"\n"
"COMMAND runs in a process group of its own. SIGINT, SIGTERM, SIGHUP and\n"
"SIGQUIT end recording and are passed on to that group; a second one, or\n"
"the group still running after --kill-after, sends SIGKILL. An error the\n"
"kernel reports while recording stops COMMAND the same way; what was\n"
"recorded is still printed, with a diagnostic line. record exits only\n"
"once COMMAND is reaped, and its output written: a write to a full pipe\n"
"waits for the reader, whatever the signals. With KSFT_READY_FD set to an\n"
"open descriptor, \"ready PID\" is written to it once the kernel samples\n"
"(the kernel selftests' bkg(ksft_ready=True) convention); COMMAND does not\n"
"see the variable.\n"
"Exit status: 1 on an error (output that could not be written is one),\n"
"2 on a usage error; else COMMAND's as a shell gives it (128+N when a\n"
"signal N ended it) when not 0; else 3 when samples were lost; else 0.\n";

/* --metrics all: every optional metric, the queues' only with netdevs */
#define M_ALL	(1U << 31)

/* --metrics LIST: the optional metrics it names, as M_BIT()s, or M_ALL */
static uint32_t parse_metrics(const char *list)
{
	const char *p = list, *end;
	uint32_t metrics = 0;
	size_t len;
	int m;

	do {
		end = p + strcspn(p, ",");
		len = end - p;
		if (len == 3 && !strncmp(p, "all", 3)) {
			metrics |= M_ALL;
		} else {
			for (m = M_FIRST_OPTIONAL; m < M_NR; m++)
				if (strlen(metric_names[m]) == len &&
				    !strncmp(p, metric_names[m], len))
					break;
			if (m == M_NR)
				die("--metrics: no optional metric '%.*s' (record --help lists them)",
				    (int)len, p);
			metrics |= M_BIT(m);
		}
		p = end + 1;
	} while (*end);
	return metrics;
}

static int do_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "ifindex", required_argument, NULL, 'x' },
		{ "interval", required_argument, NULL, 'I' },
		{ "ring", required_argument, NULL, 'r' },
		{ "host", required_argument, NULL, 'H' },
		{ "time-base", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "kill-after", required_argument, NULL, 'k' },
		{ "raw", no_argument, NULL, 'R' },
		{ "spool", required_argument, NULL, 'S' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX + 1], metrics = 0;
	uint32_t queues = QUEUES_DEFAULT;
	struct session_opts so;
	uint64_t interval = NSEC_PER_SEC, period, period_max, duration = 0;
	uint64_t start, end, now;
	struct command cmd = {};
	int opt, rc = 0, err, fd;
	bool early;
	const char *host = "local";
	uint64_t time_base = 0;
	bool have_base = false, raw = false;
	const char *spool_path = NULL;
	uint64_t gaps = 0;
	struct record r;
	FILE *spool;
	uint32_t ring = RING_DEFAULT;
	bool ring_given = false;
	unsigned int ndevs = 0;
	struct session s;
	struct kpm_nl nl;
	struct drain d;

	while ((opt = getopt_long(argc, argv, "+i:x:I:r:H:t:d:k:S:m:h", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
		case 'x':
			parse_netdev(opt, optarg, ifindex, &ndevs);
			break;
		case 'I':
			interval = parse_interval(optarg);
			break;
		case 'r':
			ring = parse_u64("--ring", optarg, UINT32_MAX);
			ring_given = true;
			break;
		case 'H':
			host = parse_label("--host", optarg);
			break;
		case 't':
			time_base = parse_u64("--time-base", optarg,
					      UINT64_MAX);
			have_base = true;
			break;
		case 'd':
			duration = llround(parse_positive("--duration", optarg) *
					   NSEC_PER_SEC);
			break;
		case 'k':
			kill_after_ns = llround(parse_positive("--kill-after",
							       optarg) *
						NSEC_PER_SEC);
			break;
		case 'R':
			raw = true;
			break;
		case 'S':
			spool_path = optarg;
			break;
		case 'm':
			metrics |= parse_metrics(optarg);
			break;
		case 'Q':
			queues = parse_queues(optarg);
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			fputs(record_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (!duration == (optind >= argc)) {
		fprintf(stderr, PROG " record: give either --duration or -- COMMAND\n");
		return EXIT_USAGE;
	}
	if (metrics & M_ALL)
		metrics = M_CPU_NET | (ndevs ? M_QUEUE : 0);
	if (metrics & M_QUEUE && !ndevs)
		die("--metrics: the nic.queue metrics are of netdevs: give --ifname or --ifindex");
	so.cpu_net = metrics & M_CPU_NET;
	so.queues = metrics & M_QUEUE ? queues : 0;

	/* first, while every open descriptor is the caller's */
	fd = ready_fd();
	kpm_nl_open(&nl);
	/* COMMAND's to inherit no more than the spool */
	fcntl(nl_socket_get_fd(nl.sk), F_SETFD, FD_CLOEXEC);

	start = now_ns();
	if (!have_base)
		time_base = start;
	period_max = spool_path ? READ_PERIOD_SPOOL_MAX : READ_PERIOD_MAX;
	/*
	 * The default ring, larger at short intervals, halves down to 256
	 * samples while it is over RING_DEFAULT_BYTES, or the kernel refuses
	 * it for its size: a host of many CPUs, or other sessions that took
	 * most of the module's memory.
	 */
	err = -1;
	if (!ring_given) {
		for (ring = ring_default(interval, period_max);
		     ring > RING_DEFAULT; ring /= 2) {
			bool refused = false;

			err = session_new(&nl, ifindex, ndevs, interval, ring,
					  &so, &s, &refused);
			if (err && !refused)
				return EXIT_ERROR;
			if (err)
				continue;
			if (session_get(&nl, s.id, &s))
				return EXIT_ERROR;
			if ((uint64_t)s.ring_size * s.sample_size <=
			    RING_DEFAULT_BYTES)
				break;
			if (session_del(&nl, s.id))
				return EXIT_ERROR;
			err = -1;
		}
	}
	if (err && session_new(&nl, ifindex, ndevs, interval, ring, &so, &s,
			       NULL))
		return EXIT_ERROR;
	if (session_get(&nl, s.id, &s))
		return EXIT_ERROR;
	/* once the session exists: a record that cannot start keeps a spool */
	spool = spool_open(spool_path);
	spool_start(spool, &s, metrics, host, time_base);
	if (drain_init(&d, &s, spool_sample, spool))
		die("out of memory");

	install_handlers();
	tell_ready(fd);
	if (optind < argc) {
		cmd.pid = start_command(argv + optind);
		running_command = &cmd;
	}

	/* read often enough that a quarter of the ring never fills up */
	period = interval * (s.ring_size / 4 ? s.ring_size / 4 : 1);
	if (period > period_max)
		period = period_max;
	end = start + duration;
	for (;;) {
		err = drain(&nl, &d);
		/* what was read survives a SIGKILL, for replay */
		if (spool_path && fflush(spool))
			die("cannot write the spool: %s", strerror(errno));
		if (err || stop_signal)
			break;
		if (cmd.pid && command_reap(&cmd, WNOHANG))
			break;
		/* once: time that passed between two reads made end - now wrap */
		now = now_ns();
		if (!cmd.pid && now >= end)
			break;
		sleep_ns(cmd.pid || end - now > period ? period : end - now);
	}
	running_command = NULL;
	if (cmd.pid)
		command_stop(&cmd, err ? SIGTERM : stop_signal, kill_after_ns,
			     err ? stop_count : 1);
	/* the samples up to the end: a read that fails now ends early too */
	if (!err)
		err = drain(&nl, &d);
	early = err;
	/*
	 * The kernel counts in lost what each read found overwritten, the
	 * gaps of d.lost: after the last, nothing this record asked for.
	 */
	if (!err)
		err = session_get(&nl, s.id, &s) || session_del(&nl, s.id);

	/* past the head: the session as it is now, counts and all */
	if (fseek(spool, sizeof(struct spool_head) + strlen(host), SEEK_SET))
		die("cannot read the spool back: %s", strerror(errno));
	print_spool(spool, host, time_base, &s, metrics, raw, false, &r, &gaps);
	if (d.lost || s.lost)
		printf("# ksft-perfmon: %llu samples lost (kernel counted %llu): read more often or use a larger --ring\n",
		       (unsigned long long)d.lost, (unsigned long long)s.lost);
	if (early)
		printf("# ksft-perfmon: recording ended early on an error, after %llu samples\n",
		       (unsigned long long)d.cursor);
	if (s.missed)
		printf("# ksft-perfmon: %llu timer periods missed: the sampler ran a period or more late and took no sample for them\n",
		       (unsigned long long)s.missed);
	if (s.qstats_skipped)
		printf("# ksft-perfmon: %llu reads of queue statistics skipped: their lock (RTNL or the netdev's) was held, or the read budget had no room for their queues\n",
		       (unsigned long long)s.qstats_skipped);
	print_no_queues(&r);
	print_end(&r);

	if (err)
		rc = EXIT_ERROR;
	else if (cmd.pid && WIFEXITED(cmd.status) && WEXITSTATUS(cmd.status))
		rc = WEXITSTATUS(cmd.status);
	else if (cmd.pid && WIFSIGNALED(cmd.status))
		rc = 128 + WTERMSIG(cmd.status);
	else if (d.lost || s.lost)
		rc = EXIT_LOST;
	return rc;
}

/* ---- replay ----------------------------------------------------------- */

static const char replay_usage[] =
"usage: " PROG " replay [--raw] FILE\n"
"\n"
"Print the lines of a recording from its spool (record --spool FILE) as\n"
"record prints them, for example after a harness's timeout killed\n"
"record: the samples it had read by then, up to a fifth of a second or\n"
"the drain before the kill. A spool has no end: the kernel's counts of\n"
"lost samples and missed periods are not in it, and gaps in the\n"
"sequence numbers are reported as lost.\n"
"\n"
"      --raw             print the raw samples as dump does\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 1 on an error, 2 on a usage error, 3 when samples were\n"
"lost, else 0.\n";

static int do_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct spool_head h;
	bool raw = false, partial;
	uint64_t gaps = 0;
	struct record r;
	char *host;
	FILE *f;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'R':
			raw = true;
			break;
		case 'h':
			fputs(replay_usage, stdout);
			return 0;
		default:
			fputs(replay_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, PROG " replay: give one FILE\n");
		return EXIT_USAGE;
	}
	f = fopen(argv[optind], "r");
	if (!f)
		die("%s: %s", argv[optind], strerror(errno));
	spool_read_head(f, argv[optind], &h, &host);
	partial = print_spool(f, host, h.time_base, &h.s, h.metrics, raw, true,
			      &r, &gaps);
	printf("# ksft-perfmon: replayed from a spool%s\n",
	       partial ? ", which ends in part of a sample, left out" : "");
	if (gaps)
		printf("# ksft-perfmon: %llu samples lost between the spooled ones\n",
		       (unsigned long long)gaps);
	print_end(&r);
	return gaps ? EXIT_LOST : 0;
}

/* ---- show and dump ---------------------------------------------------- */

/*
 * -j and -p of show and dump, as iproute2 has them: the whole output one
 * JSON array; -p indents it as json.dumps(indent=4) does, and implies -j.
 * They may also come before the command ("ksft-perfmon-nl -j show").
 */
static int json_indent = -1;	/* -1: lines; 0: -j; 4: -p */

static const char json_opts_help[] =
"  -j, --json            one JSON array instead of lines\n"
"  -p, --pretty          the JSON indented; implies --json\n";

/* 0 when @opt is -j or -p (noted), -1 otherwise */
static int json_opt(int opt)
{
	if (opt == 'j' && json_indent < 0)
		json_indent = 0;
	else if (opt == 'p')
		json_indent = 4;
	else if (opt != 'j')
		return -1;
	return 0;
}

/* The output of show and dump with -j: a JSON array, or NULL for lines. */
static struct jw *json_out_start(struct jw *w)
{
	if (json_indent < 0)
		return NULL;
	jw_init(w, stdout);
	jw_set_indent(w, json_indent);
	jw_arr_start(w);
	return w;
}

static void json_out_end(struct jw *w)
{
	if (!w)
		return;
	jw_arr_end(w);
	putchar('\n');
	if (w->error)
		die("internal error: JSON output");
}

static void show_json(struct jw *w, const struct session *s)
{
	unsigned int i;

	/* sort_keys order; the spec's attribute names */
	jw_obj_start(w);
	jw_key(w, "cost");
	jw_uint(w, s->cost);
	jw_key(w, "cpus");
	jw_uint(w, s->cpus);
	jw_key(w, "id");
	jw_uint(w, s->id);
	jw_key(w, "ifindex");
	jw_arr_start(w);
	for (i = 0; i < s->ndevs; i++)
		jw_uint(w, s->ifindex[i]);
	jw_arr_end(w);
	jw_key(w, "interval");
	jw_uint(w, s->interval);
	jw_key(w, "lost");
	jw_uint(w, s->lost);
	jw_key(w, "missed");
	jw_uint(w, s->missed);
	jw_key(w, "ring-size");
	jw_uint(w, s->ring_size);
	jw_key(w, "sample-size");
	jw_uint(w, s->sample_size);
	jw_key(w, "samples");
	jw_uint(w, s->samples);
	jw_obj_end(w);
}

static int show_cb(struct nl_msg *msg, void *arg)
{
	struct jw *w = arg;
	struct session s;
	unsigned int i;

	if (session_parse(nlmsg_hdr(msg), &s))
		die("malformed session message from the kernel");
	if (w) {
		show_json(w, &s);
		return NL_OK;
	}
	printf("session %u interval %llu ns ring %u cpus %u sample-size %u samples %llu lost %llu missed %llu cost %llu ns ifindex",
	       s.id, (unsigned long long)s.interval, s.ring_size, s.cpus,
	       s.sample_size, (unsigned long long)s.samples,
	       (unsigned long long)s.lost, (unsigned long long)s.missed,
	       (unsigned long long)s.cost);
	for (i = 0; i < s.ndevs; i++)
		printf("%c%u", i ? ',' : ' ', s.ifindex[i]);
	if (!s.ndevs)
		printf(" -");
	putchar('\n');
	return NL_OK;
}

static int do_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct jw jw, *w;
	struct kpm_nl nl;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "jph", opts, NULL)) != -1) {
		if (!json_opt(opt))
			continue;
		if (opt == 'h') {
			printf("usage: " PROG " show [-j] [-p]\n\n"
			       "List the sessions this socket may see: its own, or all with CAP_NET_ADMIN.\n\n%s"
			       "  -h, --help            this text\n", json_opts_help);
			return 0;
		}
		fprintf(stderr, "usage: " PROG " show [-j] [-p]\n");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "usage: " PROG " show [-j] [-p]\n");
		return EXIT_USAGE;
	}
	kpm_nl_open(&nl);
	w = json_out_start(&jw);
	err = talk(&nl, "session-get",
		   msg_new(&nl, KSFT_PERFMON_CMD_SESSION_GET, NLM_F_DUMP),
		   session_attr_names, ARRAY_SIZE(session_attr_names),
		   show_cb, w);
	if (err)
		return EXIT_ERROR;
	json_out_end(w);
	return 0;
}

/* the sample_fn of dump: into the -j array, or a line each */
static void dump_sample(struct drain *d, const struct sample *smp)
{
	if (d->arg)
		sample_json(d->arg, d->s, smp);
	else
		sample_json_line(stdout, d->s, smp);
}

static int do_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'n' },
		{ "cursor", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const char usage[] =
		"usage: " PROG " dump --id N [--cursor SEQ] [-j] [-p]\n\n"
		"Print the samples of session N that are in its ring, from\n"
		"sequence number SEQ on, one JSON object a line (times in ns).\n\n";
	uint64_t id = 0, cursor = 0;
	struct jw jw, *w;
	struct kpm_nl nl;
	struct session s;
	struct drain d;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:c:jph", opts, NULL)) != -1) {
		if (!json_opt(opt))
			continue;
		switch (opt) {
		case 'n':
			id = parse_u64("--id", optarg, UINT32_MAX);
			break;
		case 'c':
			cursor = parse_u64("--cursor", optarg, UINT64_MAX);
			break;
		case 'h':
			printf("%s  -n, --id N            the session\n"
			       "  -c, --cursor SEQ      the first sequence number (default 0)\n"
			       "%s  -h, --help            this text\n", usage, json_opts_help);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (!id || optind < argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	kpm_nl_open(&nl);
	if (session_get(&nl, id, &s))
		return EXIT_ERROR;
	w = json_out_start(&jw);
	if (drain_init(&d, &s, dump_sample, w))
		die("out of memory");
	d.cursor = cursor;
	if (drain(&nl, &d))
		return EXIT_ERROR;
	json_out_end(w);
	return 0;
}

/* ---- top -------------------------------------------------------------- */

static const char top_usage[] =
"usage: " PROG " top [OPTIONS]\n"
"\n"
"A live view from the module: per-CPU utilization, per-CPU network\n"
"counts (softnet's packets, drops, squeezed polls and RPS, and the NET_RX\n"
"and NET_TX softirqs, a second) and NIC rates, refreshed each interval,\n"
"like mpstat -P ALL 1. SIGINT or SIGTERM ends it (after a write to a\n"
"full pipe, once its reader reads).\n"
"\n"
"  -i, --ifname NAME     show netdev NAME (repeatable)\n"
"  -x, --ifindex N       show the netdev of index N (repeatable)\n"
"  -I, --interval MS     sampling and refresh interval in ms (default 1000;\n"
"                        refreshes at most every 100 ms)\n"
"  -n, --count N         stop after N frames (default: never)\n"
"  -Q, --queues N        each netdev's queue statistics, of its first N\n"
"                        queues of each direction (1 to 64), as\n"
"                        netdev-genl's qstats-get reports them\n"
"  -h, --help            this text\n";

struct top_state {
	struct sample latest;
	bool have;
};

static void top_keep(struct drain *d, const struct sample *smp)
{
	struct top_state *st = d->arg;

	sample_copy(&st->latest, smp, d->s->cpus);
	st->have = true;
}

static int do_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ifname", required_argument, NULL, 'i' },
		{ "ifindex", required_argument, NULL, 'x' },
		{ "interval", required_argument, NULL, 'I' },
		{ "count", required_argument, NULL, 'n' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct session_opts so = { .cpu_net = true };
	char names[KSFT_PERFMON_DEVS_MAX][IF_NAMESIZE];
	const char *ifnames[KSFT_PERFMON_DEVS_MAX] = {};
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX];
	uint64_t interval = NSEC_PER_SEC, refresh, count = 0, frames = 0;
	bool tty = isatty(STDOUT_FILENO);
	unsigned int ndevs = 0;
	struct top_state st = {};
	struct sample prev = {};
	struct session s;
	struct kpm_nl nl;
	struct drain d;
	int opt;

	while ((opt = getopt_long(argc, argv, "i:x:I:n:Q:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
		case 'x':
			parse_netdev(opt, optarg, ifindex, &ndevs);
			ifnames[ndevs - 1] = if_indextoname(ifindex[ndevs - 1],
							    names[ndevs - 1]);
			break;
		case 'I':
			interval = parse_interval(optarg);
			break;
		case 'n':
			count = parse_u64("--count", optarg, UINT64_MAX);
			break;
		case 'Q':
			so.queues = parse_queues(optarg);
			break;
		case 'h':
			fputs(top_usage, stdout);
			return 0;
		default:
			fputs(top_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fputs(top_usage, stderr);
		return EXIT_USAGE;
	}
	if (so.queues && !ndevs)
		die("--queues: the queues are of netdevs: give --ifname or --ifindex");
	refresh = interval > 100 * NSEC_PER_MSEC ? interval :
		100 * NSEC_PER_MSEC;

	kpm_nl_open(&nl);
	if (session_new(&nl, ifindex, ndevs, interval, 16,
			&so, &s, NULL) ||
	    session_get(&nl, s.id, &s))
		return EXIT_ERROR;
	if (sample_alloc(&st.latest, s.cpus) || sample_alloc(&prev, s.cpus) ||
	    sample_alloc_queues(&st.latest, &s) ||
	    sample_alloc_queues(&prev, &s) ||
	    drain_init(&d, &s, top_keep, &st))
		die("out of memory");
	install_handlers();
	/* the session's first sample, taken when it started */
	if (drain(&nl, &d))
		return EXIT_ERROR;
	if (st.have)
		sample_copy(&prev, &st.latest, s.cpus);
	while (!stop_signal && (!count || frames < count)) {
		sleep_ns(refresh);
		if (drain(&nl, &d))
			return EXIT_ERROR;
		if (!st.have || st.latest.seq == prev.seq)
			continue;
		if (prev.time) {
			if (tty)
				fputs("\033[H\033[2J", stdout);
			else if (frames)
				putchar('\n');
			top_frame(stdout, &s, &prev, &st.latest, ifnames);
			fflush(stdout);
			frames++;
		}
		sample_copy(&prev, &st.latest, s.cpus);
	}
	if (session_del(&nl, s.id))
		return EXIT_ERROR;
	sample_free(&prev);
	sample_free(&st.latest);
	drain_free(&d);
	return 0;
}

/* ---- clock ------------------------------------------------------------ */

static const char clock_usage[] =
"usage: " PROG " clock [-- COMMAND [ARGS...]]\n"
"\n"
"Print CLOCK_MONOTONIC in ns: what --time-base takes, on this host.\n"
"\n"
"With COMMAND, one that prints another host's clock (\"ssh HOST\n"
PROG " clock\"), print how many ns that clock is ahead of ours\n"
"instead. COMMAND runs three times; each answer is compared with our\n"
"clock when it arrives, and the largest difference wins: starting a\n"
"command takes far longer than its answer takes to come back.\n"
"\n"
"  -h, --help            this text\n";

/* COMMAND's clock minus ours when its answer arrived */
static int64_t clock_offset(char **argv)
{
	char buf[64] = "";
	long long remote;
	size_t len = 0;
	int fd[2], st;
	uint64_t now;
	ssize_t n;
	char *end;
	pid_t pid;

	if (pipe(fd))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	now = now_ns();
	close(fd[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		die("clock: %s failed", argv[0]);
	if (WEXITSTATUS(st) == 127)	/* the child said why */
		exit(EXIT_ERROR);
	if (WEXITSTATUS(st))
		die("clock: %s exited %d", argv[0], WEXITSTATUS(st));
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	errno = 0;
	remote = strtoll(buf, &end, 10);
	if (errno || end == buf || *end || remote < 0)
		die("clock: %s printed '%s', not a clock", argv[0], buf);
	return remote - (int64_t)now;
}

static int do_clock(int argc, char **argv)
{
	int64_t best = 0, off;
	int i;

	if (argc == 2 && (!strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "--help"))) {
		fputs(clock_usage, stdout);
		return 0;
	}
	if (argc == 1) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if (strcmp(argv[1], "--") || argc < 3) {
		fputs("usage: " PROG " clock [-- COMMAND [ARGS...]]\n", stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < 3; i++) {
		off = clock_offset(argv + 2);
		if (!i || off > best)
			best = off;
	}
	printf("%lld\n", (long long)best);
	return 0;
}

/* ---- metric ----------------------------------------------------------- */

/*
 * Whether @s is a JSON number (RFC 8259): 1 for an integer, 0 for one
 * with a fraction or an exponent, -1 for anything else.
 */
static int json_number(const char *s)
{
	bool integer = true;

	s += *s == '-';
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		s += strspn(s, "0123456789");
	else
		return -1;
	if (*s == '.') {
		integer = false;
		if (!isdigit((unsigned char)*++s))
			return -1;
		s += strspn(s, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		integer = false;
		s += s[1] == '+' || s[1] == '-';
		if (!isdigit((unsigned char)*++s))
			return -1;
		s += strspn(s, "0123456789");
	}
	return *s ? -1 : integer;
}

static const char metric_usage[] =
"usage: " PROG " metric --time-base NS [--host LABEL] NAME VALUE\n"
"\n"
"Print the ktap-metric-json line of a scalar observation made now, for a\n"
"shell test's own metrics: time in seconds since --time-base\n"
"(CLOCK_MONOTONIC ns), the JSON as Python's json.dumps writes it. VALUE\n"
"is a JSON number: a signed 64-bit integer without a fraction or exponent,\n"
"a finite double with one (no hex, no spaces); put -- before a negative\n"
"VALUE.\n"
"\n"
"  -t, --time-base NS    CLOCK_MONOTONIC ns that time 0 stands for\n"
"  -H, --host LABEL      the host label (default local)\n"
"  -h, --help            this text\n";

static int do_metric(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "time-base", required_argument, NULL, 't' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *host = "local", *name, *value;
	bool have_base = false;
	int integer;
	uint64_t time_base = 0;
	long long ll = 0;
	double v = 0;
	struct jw w;
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "t:H:h", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			time_base = parse_u64("--time-base", optarg,
					      UINT64_MAX);
			have_base = true;
			break;
		case 'H':
			host = parse_label("--host", optarg);
			break;
		case 'h':
			fputs(metric_usage, stdout);
			return 0;
		default:
			fputs(metric_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (!have_base || argc - optind != 2) {
		fprintf(stderr, PROG " metric: give --time-base, NAME and VALUE\n");
		return EXIT_USAGE;
	}
	name = argv[optind];
	value = argv[optind + 1];
	parse_label("NAME", name);
	integer = json_number(value);
	if (integer < 0)
		die("metric: '%s' is not a JSON number", value);
	errno = 0;
	if (integer)
		ll = strtoll(value, &end, 10);
	else
		v = strtod(value, &end);
	/* a float's underflow is the nearest double, as in Python */
	if ((integer && errno) || (!integer && !isfinite(v)))
		die("metric: '%s' is not a finite number%s", value,
		    integer ? " of 64 bits" : "");

	obs_line_start(stdout, &w, host, name, "scalar", now_ns(), time_base);
	if (integer)
		jw_int(&w, ll);
	else
		jw_double(&w, v);
	jw_obj_end(&w);
	putchar('\n');
	return w.error ? EXIT_ERROR : 0;
}

/* ---- main ------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", do_record, "sample while a command runs; print KTAP metric lines" },
	{ "show", do_show, "list sessions" },
	{ "dump", do_dump, "print the raw samples of a session as JSON lines" },
	{ "metric", do_metric, "print a shell test's own observation as a KTAP line" },
	{ "replay", do_replay, "print the lines of a killed record from its spool" },
	{ "clock", do_clock, "print CLOCK_MONOTONIC ns, as --time-base takes it" },
	{ "top", do_top, "per-CPU utilization and NIC rates, live" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: " PROG " [-j] [-p] COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'" PROG " COMMAND --help' describes the options of COMMAND.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	out_check_at_exit(PROG, EXIT_ERROR);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	/* iproute2's place for them: "ksft-perfmon-nl -j -p show" */
	while (argc > 2 && (!strcmp(argv[1], "-j") || !strcmp(argv[1], "--json") ||
			    !strcmp(argv[1], "-p") || !strcmp(argv[1], "--pretty"))) {
		json_opt(argv[1][1] == '-' ? argv[1][2] : argv[1][1]);
		argc--;
		argv++;
	}
	if (json_indent >= 0 && strcmp(argv[1], "show") && strcmp(argv[1], "dump")) {
		fprintf(stderr, PROG ": -j and -p are for show and dump\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, PROG ": unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
