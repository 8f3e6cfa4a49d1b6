// SPDX-License-Identifier: GPL-2.0
/*
 * record --ktap: COMMAND's standard output is a pipe, whose bytes are
 * passed through as they come. A line is held back only while it may
 * still be a result line ("ok N" or "not ok N" after its "# " prefixes,
 * one a depth) or a harness's "#  RUN" line: a few bytes.
 *
 * A case ends at the first byte of its result line, at depth d, and
 * starts at the latest of: the harness's "#  RUN" line at depth d, the
 * result line before it at depth d, and the first line at depth d after
 * a line less deep (the start of a nested program's output; at depth 0,
 * COMMAND's start). A result line is a leaf's when no deeper result
 * line came since that start.
 *
 * At a leaf's result line the session is read, and the samples whose
 * every block was read within the case go through a struct record of
 * their own, the case's start its time 0. Its policy lines, then its
 * observations, go out at the result line's depth, before it.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases.h"
#include "child.h"
#include "spool.h"

/* deeper lines are passed through, and their cases get no metrics */
#define DEPTH_MAX	16
/* a line still undecided after this many bytes is not one of ours */
#define HOLD_MAX	256

enum line_kind { L_UNDECIDED, L_OTHER, L_RESULT, L_RUN };

/* where a spooled sample is, and the times of its first and last block */
struct spooled {
	uint64_t lo, hi;
	off_t off;
};

struct cases {
	int fd;
	bool eof;
	FILE *spool;
	const struct session *s;
	uint32_t metrics;
	const char *host;
	struct kpm_nl *nl;
	struct drain *d;
	int err;
	struct sample smp;
	struct spooled *at;
	size_t nr_at, room_at;
	/* the line coming in: held, until it is known; or passing */
	char hold[HOLD_MAX];
	size_t held;
	bool passing;
	uint64_t line_time;	/* when its first byte came */
	unsigned int prev_depth;
	/* of each depth: where its case started, and whether one did */
	uint64_t start[DEPTH_MAX + 1];
	bool started[DEPTH_MAX + 1];
	bool deeper[DEPTH_MAX + 1];	/* a deeper result line since */
};

struct cases *cases_new(int fd, FILE *spool, const struct session *s,
			uint32_t metrics, const char *host, uint64_t start,
			struct kpm_nl *nl, struct drain *d)
{
	struct cases *c = calloc(1, sizeof(*c));

	if (!c || sample_alloc(&c->smp, s->cpus) ||
	    sample_alloc_queues(&c->smp, s))
		die("out of memory");
	c->fd = fd;
	c->spool = spool;
	c->s = s;
	c->metrics = metrics;
	c->host = host;
	c->nl = nl;
	c->d = d;
	c->start[0] = start;
	c->started[0] = true;
	return c;
}

void cases_free(struct cases *c)
{
	close(c->fd);
	sample_free(&c->smp);
	free(c->at);
	free(c);
}

/* the times of the first and the last block of @smp that was read */
static void sample_span(const struct session *s, const struct sample *smp,
			uint64_t *lo, uint64_t *hi)
{
	uint32_t i;

	*lo = *hi = smp->time;
	for (i = 0; i < smp->ndevs; i++) {
		if (smp->dev[i].gone)
			continue;
		*lo = smp->dev[i].time < *lo ? smp->dev[i].time : *lo;
		*hi = smp->dev[i].time > *hi ? smp->dev[i].time : *hi;
	}
	for (i = 0; smp->q && i < s->ndevs; i++) {
		const struct dev_qstats *qs = &smp->q[i];

		if (!qs->read || qs->skipped || qs->over_budget)
			continue;
		*lo = qs->time < *lo ? qs->time : *lo;
		*hi = qs->time > *hi ? qs->time : *hi;
	}
}

void cases_sample(struct drain *d, const struct sample *smp)
{
	struct cases *c = d->arg;
	struct spooled *at;

	if (c->nr_at == c->room_at) {
		c->room_at = c->room_at ? 2 * c->room_at : 1024;
		at = reallocarray(c->at, c->room_at, sizeof(*at));
		if (!at)
			die("out of memory");
		c->at = at;
	}
	at = &c->at[c->nr_at++];
	at->off = ftello(c->spool);
	if (at->off < 0)
		die("cannot write the spool: %s", strerror(errno));
	sample_span(c->s, smp, &at->lo, &at->hi);
	spool_write(c->spool, c->s, smp);
}

static void put(const char *buf, size_t len)
{
	if (fwrite(buf, 1, len, stdout) != len)
		die("cannot write the output: %s", strerror(errno));
}

/* the lines of @buf, each with the prefixes of @depth */
static void put_lines(const char *buf, size_t len, unsigned int depth)
{
	const char *end = buf + len, *nl;
	unsigned int i;

	while (buf < end) {
		nl = memchr(buf, '\n', end - buf);
		nl = nl ? nl + 1 : end;
		for (i = 0; i < depth; i++)
			put("# ", 2);
		put(buf, nl - buf);
		buf = nl;
	}
}

/* the first sample whose blocks were all read at @t or later */
static size_t first_from(const struct cases *c, uint64_t t)
{
	size_t lo = 0, hi = c->nr_at, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->at[mid].lo < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The metric lines of the case at @depth from @start to @end, if a sample
 * was taken within it: the policies of the metrics it has lines of, then
 * the observations and the decreases line, each at @depth.
 */
static void case_lines(struct cases *c, unsigned int depth, uint64_t start,
		       uint64_t end)
{
	char *obs = NULL, *pol = NULL;
	size_t obs_len, pol_len, i;
	struct record r;
	FILE *o, *p;
	int m;

	/* the samples up to now: a failed read ends recording */
	if (!c->err)
		c->err = drain(c->nl, c->d);
	if (c->err)
		return;
	i = first_from(c, start);
	if (i == c->nr_at || c->at[i].lo > end)
		return;
	if (fflush(c->spool) || fseeko(c->spool, c->at[i].off, SEEK_SET))
		die("cannot read the spool back: %s", strerror(errno));
	o = open_memstream(&obs, &obs_len);
	if (!o || record_init(&r, c->metrics, c->host, start, c->s->cpus, o) ||
	    record_init_queues(&r, c->s))
		die("out of memory");
	for (; i < c->nr_at && c->at[i].lo <= end; i++) {
		if (spool_read(c->spool, c->s, &c->smp) != 1)
			die("cannot read a spooled sample back");
		if (c->at[i].hi <= end)
			record_add(&r, &c->smp, c->s->ndevs);
	}
	if (record_print_decreases(o, &r) || fclose(o))
		die("out of memory");
	if (r.bad_output)
		die("a value could not be written as JSON (NaN or infinity)");
	p = open_memstream(&pol, &pol_len);
	if (!p)
		die("out of memory");
	for (m = 0; m < M_NR; m++)
		if (r.seen & M_BIT(m) && print_policy(p, m))
			die("internal error: a policy line");
	if (fclose(p))
		die("out of memory");
	put_lines(pol, pol_len, depth);
	put_lines(obs, obs_len, depth);
	free(pol);
	free(obs);
	record_free(&r);
	if (fseeko(c->spool, 0, SEEK_END))
		die("cannot write the spool: %s", strerror(errno));
}

/*
 * Whether @p, @len bytes, starts with @lit: 1; -1 when it does not; 0
 * when it is shorter and may still (not when it is @whole).
 */
static int starts(const char *p, size_t len, const char *lit, bool whole)
{
	size_t n = strlen(lit);

	if (memcmp(p, lit, len < n ? len : n))
		return -1;
	return len >= n ? 1 : whole ? -1 : 0;
}

/*
 * What the line in @p, of @len bytes so far (all of it when @whole), is:
 * a result line at *@depth, a " RUN" line of a case at *@depth, or
 * another line, whose "# " prefixes are *@depth; or not known yet.
 */
static enum line_kind classify(const char *p, size_t len, bool whole,
			       unsigned int *depth)
{
	unsigned int k = 0;
	size_t i;
	int res;

	for (; len >= 2 && p[0] == '#' && p[1] == ' '; p += 2, len -= 2)
		k++;
	*depth = k;
	if (!len || (len == 1 && p[0] == '#'))
		return whole ? L_OTHER : L_UNDECIDED;
	if (k) {
		res = starts(p, len, " RUN ", whole);
		if (res > 0) {
			*depth = k - 1;
			return L_RUN;
		}
		if (!res)
			return L_UNDECIDED;
	}
	res = starts(p, len, "ok ", whole);
	if (res < 0) {
		res = starts(p, len, "not ok ", whole);
		if (res > 0) {
			p += 4;
			len -= 4;
		}
	}
	if (res <= 0)
		return res ? L_OTHER : L_UNDECIDED;
	/* the number, then a space or the end of the line */
	for (i = 3; i < len && p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (i == len)
		return whole && i > 3 ? L_RESULT :
		       whole ? L_OTHER : L_UNDECIDED;
	if (i > 3 && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r'))
		return L_RESULT;
	return L_OTHER;
}

static void case_start(struct cases *c, unsigned int depth, uint64_t t)
{
	c->start[depth] = t;
	c->started[depth] = true;
	c->deeper[depth] = false;
}

/* what a line that starts at @t does to the cases, before it goes out */
static void line_seen(struct cases *c, enum line_kind kind,
		      unsigned int depth, uint64_t t)
{
	/* a " RUN" line's prefixes are one more than its case's depth */
	unsigned int k = kind == L_RUN ? depth + 1 : depth, e;

	if (k > DEPTH_MAX)
		k = DEPTH_MAX;
	/* a nested program's output starts */
	for (e = c->prev_depth + 1; e <= k; e++)
		case_start(c, e, t);
	c->prev_depth = k;
	if (depth > DEPTH_MAX)
		return;
	if (kind == L_RUN) {
		case_start(c, depth, t);
	} else if (kind == L_RESULT) {
		if (c->started[depth] && !c->deeper[depth])
			case_lines(c, depth, c->start[depth], t);
		for (e = 0; e < depth; e++)
			c->deeper[e] = true;
		for (e = depth + 1; e <= DEPTH_MAX; e++)
			c->started[e] = false;
		case_start(c, depth, t);
	}
}

/* the line held, now known (at its end, when @whole), goes out */
static void line_out(struct cases *c, enum line_kind kind,
		     unsigned int depth, bool whole)
{
	line_seen(c, kind == L_UNDECIDED ? L_OTHER : kind, depth,
		  c->line_time);
	put(c->hold, c->held);
	c->passing = !whole;
	c->held = 0;
}

/* @len bytes of COMMAND's output that came at @t */
static void feed(struct cases *c, const char *buf, size_t len, uint64_t t)
{
	enum line_kind kind;
	unsigned int depth;
	const char *nl;
	size_t n;
	bool whole;

	while (len) {
		if (c->passing) {
			nl = memchr(buf, '\n', len);
			n = nl ? (size_t)(nl - buf) + 1 : len;
			put(buf, n);
			c->passing = !nl;
			buf += n;
			len -= n;
			continue;
		}
		if (!c->held)
			c->line_time = t;
		c->hold[c->held++] = *buf++;
		len--;
		whole = c->hold[c->held - 1] == '\n';
		kind = classify(c->hold, c->held, whole, &depth);
		if (kind != L_UNDECIDED || c->held == HOLD_MAX)
			line_out(c, kind, depth, whole);
	}
}

/* one read of COMMAND's output: false when there was nothing to read */
static bool read_some(struct cases *c)
{
	static char buf[65536];
	ssize_t n;

	n = read(c->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		/* an error reads as the end: nothing more can come */
		c->eof = true;
		return false;
	}
	feed(c, buf, n, now_ns());
	if (fflush(stdout))
		die("cannot write the output: %s", strerror(errno));
	return true;
}

int cases_wait(struct cases *c, uint64_t ns)
{
	uint64_t deadline = now_ns() + ns, now;
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int r;

	while (!stop_signal && !child_exited && !c->err) {
		now = now_ns();
		if (now >= deadline)
			break;
		if (c->eof) {
			sleep_ns(deadline - now);
			break;
		}
		r = poll(&p, 1, (deadline - now + NSEC_PER_MSEC - 1) /
				NSEC_PER_MSEC);
		if (r < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (r <= 0)
			break;
		read_some(c);
	}
	return c->err;
}

int cases_end(struct cases *c)
{
	enum line_kind kind;
	unsigned int depth;

	while (!c->eof && read_some(c))
		;
	if (c->held) {
		kind = classify(c->hold, c->held, true, &depth);
		line_out(c, kind, depth, true);
		if (fflush(stdout))
			die("cannot write the output: %s", strerror(errno));
	}
	return c->err;
}

bool cases_mid_line(const struct cases *c)
{
	return c->passing || c->held;
}
