// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-nl: drive the ksft_perfmon generic netlink family and turn
 * its samples into the KTAP metric lines of network selftests.
 *
 * This file: the command table and help, -j and -p before the command,
 * the parsing of options the commands share, and the way out (die(),
 * nl_exit()). Each command has a file of its own (nl-cmd.h lists them).
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/ksft_perfmon.h>

#include "child.h"
#include "nl-cmd.h"

/*
 * The one way out of the tool but returning from main(): record's
 * COMMAND, while it runs one, stopped and reaped first.
 */
void nl_exit(int status)
{
	struct command *c = running_command;

	if (c) {
		running_command = NULL;
		command_stop(c, SIGTERM, kill_after_ns, stop_count);
	}
	exit(status);
}

/* An error: one line on stderr, and record's COMMAND stopped and reaped. */
void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nl_exit(EXIT_ERROR);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int ms_until(uint64_t deadline, uint64_t now)
{
	uint64_t ms;

	if (deadline <= now)
		return 0;
	ms = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	nanosleep(&ts, NULL);
}

/* decimal digits only: no sign, no space, no octal or hex prefix */
uint64_t parse_u64(const char *opt, const char *s, uint64_t max)
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
uint32_t parse_queues(const char *s)
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

double parse_positive(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || !isfinite(v))
		die("%s: '%s' is not a positive number", opt, s);
	return v;
}

/* a host label or a metric's NAME: 1 to LABEL_MAX bytes of UTF-8 */
const char *parse_label(const char *what, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	unsigned int cp;
	int n;

	if (!len || len > LABEL_MAX)
		die("%s: %zu bytes; a label has 1 to %d", what, len, LABEL_MAX);
	for (; *p; p += n) {
		n = utf8_decode(p, &cp);
		if (!n)
			die("%s: not UTF-8", what);
	}
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
void parse_netdev(int opt, const char *arg, uint32_t *ifindex,
		  unsigned int *ndevs)
{
	if (*ndevs == KSFT_PERFMON_DEVS_MAX)
		die("--%s: at most %u netdevs", opt == 'i' ? "ifname" : "ifindex",
		    KSFT_PERFMON_DEVS_MAX);
	ifindex[(*ndevs)++] = opt == 'i' ? ifname_to_index(arg) :
		parse_u64("--ifindex", arg, UINT32_MAX);
}

/* --interval MS, fractions allowed, in ns */
uint64_t parse_interval(const char *arg)
{
	return llround(parse_positive("--interval", arg) * NSEC_PER_MSEC);
}

/*
 * --ifname, --ifindex, --interval and --queues of the commands that make a
 * session, into @a: whether @opt was one of them.
 */
bool sample_arg(struct sample_args *a, int opt, const char *arg)
{
	switch (opt) {
	case 'i':
	case 'x':
		parse_netdev(opt, arg, a->ifindex, &a->ndevs);
		return true;
	case 'I':
		a->interval = parse_interval(arg);
		return true;
	case 'Q':
		a->queues = parse_queues(arg);
		return true;
	}
	return false;
}

/* ---- -j and -p ------------------------------------------------------- */

/*
 * -j and -p of show and dump, as iproute2 has them: the whole output one
 * JSON array; -p indents it as json.dumps(indent=4) does, and implies -j.
 * They may also come before the command ("ksft-perfmon-nl -j show").
 */
int json_indent = -1;	/* -1: lines; 0: -j; 4: -p */

/* 0 when @opt is -j or -p (noted), -1 otherwise */
int json_opt(int opt)
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
struct jw *json_out_start(struct jw *w)
{
	if (json_indent < 0)
		return NULL;
	jw_init(w, stdout);
	jw_set_indent(w, json_indent);
	jw_arr_start(w);
	return w;
}

void json_out_end(struct jw *w)
{
	if (!w)
		return;
	jw_arr_end(w);
	putchar('\n');
	if (w->error)
		die("internal error: JSON output");
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
	{ "link", do_link, "run a record --control on another host, over one connection" },
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
