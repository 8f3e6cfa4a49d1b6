/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of ksft-perfmon-nl share: exit statuses and errors
 * (main.c), the parsing of options, -j and -p, every command's options
 * and --help (usage.c), the session client (session.c), raw samples as
 * JSON (raw.c), and each command's entry point, one a file: record.c,
 * replay.c, show.c, dump.c, top.c, clock.c and metric.c. spool.h and
 * child.h are record's.
 */
#ifndef KPM_NL_CMD_H
#define KPM_NL_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "nl.h"
#include "opts.h"
#include "samples.h"

#define PROG "ksft-perfmon-nl"

/* Exit statuses besides a command's own. */
#define EXIT_ERROR	1
#define EXIT_USAGE	2
#define EXIT_LOST	3

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the column of the help of each option in --help */
#define HELP_COL	24

/* ---- main.c ----------------------------------------------------------- */

/* An error: one line on stderr, and record's COMMAND stopped and reaped. */
void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...);
/* exit(@status), once record's COMMAND, if any, is stopped and reaped */
void __attribute__((noreturn)) nl_exit(int status);

uint64_t now_ns(void);
/* ms from @now to @deadline, for poll(): 0 once past it, INT_MAX at most */
int ms_until(uint64_t deadline, uint64_t now);
void sleep_ns(uint64_t ns);

/* Options: each dies with a message on a value it does not take. */
uint64_t parse_u64(const char *opt, const char *s, uint64_t max);
uint32_t parse_queues(const char *s);
double parse_positive(const char *opt, const char *s);
/* a host label or a metric's NAME: 1 to LABEL_MAX bytes of UTF-8 */
#define LABEL_MAX	255
const char *parse_label(const char *what, const char *s);
void parse_netdev(int opt, const char *arg, uint32_t *ifindex,
		  unsigned int *ndevs);
uint64_t parse_interval(const char *arg);

/* what record and top ask of their session on the command line */
struct sample_args {
	uint32_t ifindex[KSFT_PERFMON_DEVS_MAX];	/* -i, -x */
	unsigned int ndevs;
	uint64_t interval;				/* -I, in ns */
	uint32_t queues;				/* -Q */
};

bool sample_arg(struct sample_args *a, int opt, const char *arg);

/*
 * -j and -p of show and dump, as iproute2 has them: the whole output one
 * JSON array; -p indents it as json.dumps(indent=4) does, and implies -j.
 */
extern int json_indent;		/* -1: lines; 0: -j; 4: -p */
extern const struct kpm_opt json_opts[];
int json_opt(int opt);
struct jw *json_out_start(struct jw *w);
void json_out_end(struct jw *w);

/* ---- usage.c: each command's options and --help ---------------------- */

extern const struct kpm_cmd record_cmd;
extern const struct kpm_cmd replay_cmd;
extern const struct kpm_cmd show_cmd;
extern const struct kpm_cmd dump_cmd;
extern const struct kpm_cmd top_cmd;
extern const struct kpm_cmd metric_cmd;
extern const struct kpm_cmd link_cmd;
extern const char clock_usage[], clock_usage_line[];

/* ---- session.c: the session client ------------------------------------ */

struct kpm_nl {
	struct nl_sock *sk;
	int family;
};

/* what a session samples besides CPU times and netdevs */
struct session_opts {
	bool cpu_net;		/* the CPUs' network counts */
	uint32_t queues;	/* queue statistics of this many, or 0 */
	uint64_t dev_interval;	/* ns between reads of the netdevs, or 0 */
};

extern const char *const session_attr_names[KSFT_PERFMON_A_SESSION_MAX + 1];

void kpm_nl_open(struct kpm_nl *nl);
struct nl_msg *msg_new(struct kpm_nl *nl, uint8_t cmd, int flags);
int talk(struct kpm_nl *nl, const char *op, struct nl_msg *msg,
	 const char *const *names, unsigned int nr_names,
	 nl_recvmsg_msg_cb_t valid, void *arg);
int session_new(struct kpm_nl *nl, const uint32_t *ifindex,
		unsigned int ndevs, uint64_t interval, uint32_t ring,
		const struct session_opts *o, struct session *s,
		bool *ring_refused);
int session_get(struct kpm_nl *nl, uint32_t id, struct session *s);
int session_del(struct kpm_nl *nl, uint32_t id);
int drain(struct kpm_nl *nl, struct drain *d);

/* ---- raw.c: raw samples as JSON, as dump prints them ------------------ */

void sample_json(struct jw *w, const struct session *s,
		 const struct sample *smp);
void sample_json_line(FILE *f, const struct session *s,
		      const struct sample *smp);

/* ---- the commands: argv[0] is the command's name ---------------------- */

int do_record(int argc, char **argv);
int do_replay(int argc, char **argv);
int do_show(int argc, char **argv);
int do_dump(int argc, char **argv);
int do_top(int argc, char **argv);
int do_clock(int argc, char **argv);
int do_link(int argc, char **argv);
int do_metric(int argc, char **argv);

#endif
