/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --ktap: COMMAND's KTAP output passed through as it comes, and
 * before each leaf test case's result line, the metric lines of the
 * samples taken while that case ran, on this host and the remote
 * endpoint's, at the result line's depth.
 */
#ifndef KPM_NL_CASES_H
#define KPM_NL_CASES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "nl-cmd.h"

/* where a spooled sample is, and the times of its first and last block */
struct spooled {
	uint64_t lo, hi;
	off_t off;
};

/* the samples of one host, spooled as they come, and where each is */
struct host {
	const char *label;
	const struct session *s;
	uint32_t metrics;
	int64_t offset;		/* ns its clock is ahead of ours */
	FILE *spool;
	struct spooled *at;
	size_t nr_at, room_at;
	struct sample smp;	/* a sample read back */
};

void host_init(struct host *h, const char *label, const struct session *s,
	       uint32_t metrics, int64_t offset, FILE *spool);
void host_free(struct host *h);
/* @smp, of the host's session, to its spool, indexed */
void host_add(struct host *h, const struct sample *smp);

struct cases;
struct remote;

/*
 * COMMAND's output is read from @fd (non-blocking, ours to close); the
 * samples of session @s are in @spool, which cases_sample() writes, and
 * drained from @nl into @d; @start is when COMMAND started. @remote, if
 * not NULL, is the remote endpoint's record.
 */
struct cases *cases_new(int fd, FILE *spool, const struct session *s,
			uint32_t metrics, const char *host, uint64_t start,
			struct kpm_nl *nl, struct drain *d,
			struct remote *remote);
void cases_free(struct cases *c);
/* the sample_fn of record's drain, its arg a struct cases */
void cases_sample(struct drain *d, const struct sample *smp);
/*
 * Pass on what COMMAND writes for up to @ns, less when a signal comes or
 * its output ends. A read of the session that fails for a case's lines
 * is returned (non-zero); its case goes without them.
 */
int cases_wait(struct cases *c, uint64_t ns);
/*
 * Once COMMAND is gone: pass on what it left in the pipe, and the end of
 * a line cut short. What a process it left running writes later is not
 * read.
 */
int cases_end(struct cases *c);
/* a read of the session failed: no more of it, for the cases after */
void cases_failed(struct cases *c, int err);
/* whether COMMAND's output, after cases_end(), ended within a line */
bool cases_mid_line(const struct cases *c);
/* the diagnostic line of how many leaf cases had lines, to @f */
void cases_summary(const struct cases *c, FILE *f);

/* ---- remote.c: the remote endpoint's record, over link ---------------- */

/* record --ktap's options for its remote, or the environment's */
struct remote_opts {
	const char *type;	/* --remote-type, or REMOTE_TYPE */
	const char *args;	/* --remote-args, or REMOTE_ARGS */
	const char *ifname;	/* --remote-ifname */
	const char *tool;	/* --remote-tool */
};

/*
 * The remote's record --control --stream command, to sample every
 * @interval ns the optional @metrics (of netdevs only with @o->ifname),
 * @queues of a netdev's; NULL with no remote. Dies on a type it does not
 * know.
 */
char **remote_command(const struct remote_opts *o, uint64_t interval,
		      uint32_t metrics, uint32_t queues);
/*
 * Run "link --time-base @base --pass-input -- @argv", @argv a record
 * --control --stream on the remote host, and wait up to @ready_ns for it
 * to record; dies with a message if it does not.
 */
struct remote *remote_start(char **argv, uint64_t base, uint64_t ready_ns);
/* its output, to poll; -1 once that ended */
int remote_fd(const struct remote *r);
/* its input, to poll for room while a request waits for it; or -1 */
int remote_request_fd(const struct remote *r);
/* the frames that came, without waiting */
void remote_read(struct remote *r);
/* ask for its samples up to now: the number of the answer to wait for */
unsigned long remote_ask(struct remote *r);
/* whether answer @n came, or will not */
bool remote_answered(const struct remote *r, unsigned long n);
/* an answer did not come in time: said once */
void remote_late(struct remote *r);
/* its samples, once it records */
struct host *remote_host(struct remote *r);
/*
 * Stop it, take the rest of its output, waiting up to @wait_ns, and
 * print its diagnostics to @diag; then reap link.
 */
void remote_end(struct remote *r, uint64_t wait_ns, FILE *diag);

#endif
