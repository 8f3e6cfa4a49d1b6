// SPDX-License-Identifier: GPL-2.0
/*
 * record --ktap: COMMAND's standard output is a pipe, whose bytes are
 * passed through as they come. A thread of their own reads them, and
 * stamps them with the time they came, so that a case's window is its
 * own however long the rest takes: writing a case's lines, waiting for
 * the remote, a reader of our output that falls behind. A line is held
 * back only while it may still be a result line ("ok N" or "not ok N"
 * after its "# " prefixes, one a depth) or a harness's "#  RUN" line: a
 * few bytes.
 *
 * A case ends at the first byte of its result line, at depth d, and
 * starts at the latest of: the harness's "#  RUN" line at depth d, the
 * result line before it at depth d, and the first line at depth d after
 * a line less deep (the start of a nested program's output; at depth 0,
 * COMMAND's start). A result line is a leaf's when no deeper result
 * line came since that start.
 *
 * At a leaf's result line the remote's record is asked for its samples
 * up to then, and until it answers, what COMMAND writes is read, its
 * lines stamped, and held back: a case's window is its own, however far
 * the remote is. Then the session is read, and the samples of each host
 * whose every block was read within the case (on that host's clock) go
 * through a struct record of their own, the case's start its time 0, in
 * the order they were taken. Their policy lines, then their
 * observations, go out at the result line's depth, before it.
 */

#define _GNU_SOURCE		/* pipe2() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cases.h"
#include "child.h"
#include "spool.h"

/* deeper lines are passed through, and their cases get no metrics */
#define DEPTH_MAX	16
/* a line still undecided after this many bytes is not one of ours */
#define HOLD_MAX	256

/* how long a case waits for the remote's samples up to its end */
#define SYNC_WAIT	(10 * NSEC_PER_SEC)
/* what the reader holds before it waits for us to take it */
#define QUEUED_MAX	(64U << 20)

/* what the reader read at once, and when */
struct chunk {
	struct chunk *next;
	uint64_t t;
	size_t len;
	char data[];
};

/*
 * The reader of COMMAND's output: a thread that takes what comes, stamps
 * it and queues it, and writes a byte to wake[1] for us to take it.
 */
struct reader {
	pthread_t thread;
	int fd;
	int wake[2];
	int stop[2];		/* a byte: read what is there, then end */
	pthread_mutex_t lock;
	pthread_cond_t room;
	struct chunk *head, **tail;
	size_t queued;
	bool done;		/* the end, or stopped: nothing more comes */
	int error;		/* why it ended early: an errno */
};

enum line_kind { L_UNDECIDED, L_OTHER, L_RESULT, L_RUN };

/* a case whose lines wait for the remote's samples */
struct pending {
	unsigned int depth;
	uint64_t start, end;
	size_t pos;		/* where its lines go in the output held */
	unsigned long sync;	/* the remote's answer it waits for */
	uint64_t deadline;	/* after which it does without */
};

struct cases {
	struct reader rd;
	bool eof;		/* the reader is done, and all taken */
	struct host local;
	struct remote *remote;
	struct kpm_nl *nl;
	struct drain *d;
	int err;
	/* COMMAND's output held back while a case waits, and the cases */
	char *q;
	size_t q_len, q_room;
	struct pending *pend;
	size_t nr_pend, room_pend;
	/* the line coming in: held, until it is known; or passing */
	char hold[HOLD_MAX];
	size_t held;
	bool passing;
	bool mid_line;		/* the last byte out did not end a line */
	uint64_t line_time;	/* when its first byte came */
	unsigned int prev_depth;
	/* of each depth: where its case started, and whether one did */
	uint64_t start[DEPTH_MAX + 1];
	bool started[DEPTH_MAX + 1];
	bool deeper[DEPTH_MAX + 1];	/* a deeper result line since */
	unsigned long leaves, with_lines;
};

/* a byte for the main thread's poll: a full pipe has one already */
static void wake(struct reader *rd)
{
	char b = 0;

	while (write(rd->wake[1], &b, 1) < 0 && errno == EINTR)
		;
}

/*
 * What the reader read, queued; false when out of memory. The reader
 * calls nothing that exits: the main thread does, seeing its error.
 */
static bool queue(struct reader *rd, const char *buf, size_t n)
{
	struct chunk *ch = malloc(sizeof(*ch) + n);

	if (!ch)
		return false;
	ch->t = now_ns();
	ch->len = n;
	ch->next = NULL;
	memcpy(ch->data, buf, n);
	pthread_mutex_lock(&rd->lock);
	*rd->tail = ch;
	rd->tail = &ch->next;
	rd->queued += n;
	while (rd->queued > QUEUED_MAX)
		pthread_cond_wait(&rd->room, &rd->lock);
	pthread_mutex_unlock(&rd->lock);
	wake(rd);
	return true;
}

static void *reader(void *arg)
{
	struct pollfd p[2] = { { .events = POLLIN }, { .events = POLLIN } };
	struct reader *rd = arg;
	static char buf[65536];
	int left = -1, error = 0;
	ssize_t n;

	p[0].fd = rd->fd;
	p[1].fd = rd->stop[0];
	for (;;) {
		/*
		 * Once stopped: what is in the pipe then, not what a
		 * process COMMAND left may go on writing
		 */
		if (left < 0) {
			if (poll(p, 2, -1) < 0 && errno != EINTR) {
				error = errno;
				break;
			}
			if (p[1].revents && ioctl(rd->fd, FIONREAD, &left))
				left = 0;
		}
		if (!left)
			break;
		n = read(rd->fd, buf, left > 0 && (size_t)left < sizeof(buf) ?
			 (size_t)left : sizeof(buf));
		if (n > 0) {
			if (!queue(rd, buf, n)) {
				error = ENOMEM;
				break;
			}
			if (left > 0)
				left -= n;
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		break;		/* the end; an error reads as one */
	}
	pthread_mutex_lock(&rd->lock);
	rd->done = true;
	rd->error = error;
	pthread_mutex_unlock(&rd->lock);
	wake(rd);
	return NULL;
}

/* the reader of @fd started, with every signal left to us */
static void reader_start(struct reader *rd, int fd)
{
	sigset_t all, old;

	rd->fd = fd;
	rd->tail = &rd->head;
	if (pipe2(rd->wake, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(rd->stop, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pthread_mutex_init(&rd->lock, NULL);
	pthread_cond_init(&rd->room, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	errno = pthread_create(&rd->thread, NULL, reader, rd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (errno)
		die("cannot start a thread: %s", strerror(errno));
}

/* what the reader queued, detached; *@done: it is done */
static struct chunk *reader_take(struct reader *rd, bool *done)
{
	struct chunk *ch;
	char b[64];
	int error;

	while (read(rd->wake[0], b, sizeof(b)) > 0)
		;
	pthread_mutex_lock(&rd->lock);
	ch = rd->head;
	rd->head = NULL;
	rd->tail = &rd->head;
	rd->queued = 0;
	*done = rd->done;
	error = rd->error;
	pthread_cond_signal(&rd->room);
	pthread_mutex_unlock(&rd->lock);
	if (error)
		die("reading COMMAND's output: %s", strerror(error));
	return ch;
}


void host_init(struct host *h, const char *label, const struct session *s,
	       uint32_t metrics, int64_t offset, FILE *spool)
{
	memset(h, 0, sizeof(*h));
	h->label = label;
	h->s = s;
	h->metrics = metrics;
	h->offset = offset;
	h->spool = spool;
	if (sample_alloc(&h->smp, s->cpus) || sample_alloc_queues(&h->smp, s))
		die("out of memory");
}

void host_free(struct host *h)
{
	sample_free(&h->smp);
	free(h->at);
}

struct cases *cases_new(int fd, FILE *spool, const struct session *s,
			uint32_t metrics, const char *host, uint64_t start,
			struct kpm_nl *nl, struct drain *d,
			struct remote *remote)
{
	struct cases *c = calloc(1, sizeof(*c));

	if (!c)
		die("out of memory");
	host_init(&c->local, host, s, metrics, 0, spool);
	reader_start(&c->rd, fd);
	c->remote = remote;
	c->nl = nl;
	c->d = d;
	c->start[0] = start;
	c->started[0] = true;
	return c;
}

void cases_free(struct cases *c)
{
	/* cases_end() saw it done */
	pthread_join(c->rd.thread, NULL);
	close(c->rd.fd);
	close(c->rd.wake[0]);
	close(c->rd.wake[1]);
	close(c->rd.stop[0]);
	close(c->rd.stop[1]);
	host_free(&c->local);
	free(c->q);
	free(c->pend);
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

/* room in *@p, of *@room @size-byte elements, for element @n: doubled */
static void grow(void *p, size_t *room, size_t n, size_t size, size_t first)
{
	void *q;

	if (n < *room)
		return;
	*room = *room ? 2 * *room : first;
	q = reallocarray(*(void **)p, *room, size);
	if (!q)
		die("out of memory");
	*(void **)p = q;
}

void host_add(struct host *h, const struct sample *smp)
{
	struct spooled *at;

	grow(&h->at, &h->room_at, h->nr_at, sizeof(*h->at), 1024);
	at = &h->at[h->nr_at++];
	at->off = ftello(h->spool);
	if (at->off < 0)
		die("cannot write the spool: %s", strerror(errno));
	sample_span(h->s, smp, &at->lo, &at->hi);
	spool_write(h->spool, h->s, smp);
}

void cases_sample(struct drain *d, const struct sample *smp)
{
	struct cases *c = d->arg;

	host_add(&c->local, smp);
}

static void put(const char *buf, size_t len)
{
	if (fwrite(buf, 1, len, stdout) != len)
		die("cannot write the output: %s", strerror(errno));
}

/* COMMAND's output: out, or held back behind a case that waits */
static void out(struct cases *c, const char *buf, size_t len)
{
	char *q;

	if (len)
		c->mid_line = buf[len - 1] != '\n';
	if (!c->nr_pend) {
		put(buf, len);
		return;
	}
	if (c->q_room - c->q_len < len) {
		c->q_room = 2 * (c->q_len + len);
		q = realloc(c->q, c->q_room);
		if (!q)
			die("out of memory");
		c->q = q;
	}
	memcpy(c->q + c->q_len, buf, len);
	c->q_len += len;
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

/* the first sample of @h whose blocks were all read at @t or later */
static size_t first_from(const struct host *h, uint64_t t)
{
	size_t lo = 0, hi = h->nr_at, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->at[mid].lo < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* a time of @h's clock on ours */
static uint64_t ours(const struct host *h, uint64_t t)
{
	return t - (uint64_t)h->offset;
}

/*
 * The metric lines of the case at @depth from @start to @end, of the
 * samples taken within it: the policies of the metrics they have lines
 * of, then the observations and the decreases lines, each at @depth.
 */
static void case_lines(struct cases *c, unsigned int depth, uint64_t start,
		       uint64_t end)
{
	struct host *hosts[2] = { &c->local, NULL }, *h;
	size_t next[2], obs_len, pol_len;
	char *obs = NULL, *pol = NULL;
	struct record r[2];
	unsigned int n, i, k;
	uint32_t seen = 0;
	FILE *o, *p;
	int m;

	/* the samples up to now: a failed read ends recording */
	if (!c->err)
		c->err = drain(c->nl, c->d);
	if (c->err)
		return;
	if (c->remote)
		hosts[1] = remote_host(c->remote);
	n = hosts[1] ? 2 : 1;
	o = open_memstream(&obs, &obs_len);
	if (!o)
		die("out of memory");
	for (i = 0; i < n; i++) {
		h = hosts[i];
		next[i] = first_from(h, start + h->offset);
		if (record_init(&r[i], h->metrics, h->label, start + h->offset,
				h->s->cpus, o) ||
		    record_init_queues(&r[i], h->s))
			die("out of memory");
		if (next[i] < h->nr_at && (fflush(h->spool) ||
		    fseeko(h->spool, h->at[next[i]].off, SEEK_SET)))
			die("cannot read the spool back: %s", strerror(errno));
	}
	/* the samples of the case, of both hosts, in the order taken */
	for (;;) {
		for (k = n, i = 0; i < n; i++) {
			h = hosts[i];
			if (next[i] == h->nr_at ||
			    ours(h, h->at[next[i]].lo) > end)
				continue;
			if (k == n || ours(h, h->at[next[i]].lo) <
				      ours(hosts[k], hosts[k]->at[next[k]].lo))
				k = i;
		}
		if (k == n)
			break;
		h = hosts[k];
		if (spool_read(h->spool, h->s, &h->smp) != 1)
			die("cannot read a spooled sample back");
		if (ours(h, h->at[next[k]++].hi) <= end)
			record_add(&r[k], &h->smp, h->s->ndevs);
	}
	for (i = 0; i < n; i++) {
		if (record_print_decreases(o, &r[i]))
			die("out of memory");
		if (r[i].bad_output)
			die("a value could not be written as JSON (NaN or infinity)");
		seen |= r[i].seen;
		record_free(&r[i]);
		if (fseeko(hosts[i]->spool, 0, SEEK_END))
			die("cannot write the spool: %s", strerror(errno));
	}
	if (fclose(o))
		die("out of memory");
	p = open_memstream(&pol, &pol_len);
	if (!p)
		die("out of memory");
	for (m = 0; m < M_NR; m++)
		if (seen & M_BIT(m) && print_policy(p, m))
			die("internal error: a policy line");
	if (fclose(p))
		die("out of memory");
	c->with_lines += !!seen;
	put_lines(pol, pol_len, depth);
	put_lines(obs, obs_len, depth);
	free(pol);
	free(obs);
}

/*
 * The cases that wait, in order, whose remote answered (or that waited
 * long enough, or @all), with the output held before each; then the
 * output held, if none waits any more.
 */
static void flush_pending(struct cases *c, bool all)
{
	struct pending *p;
	size_t done = 0, i, pos = 0;
	uint64_t now = now_ns();

	for (i = 0; i < c->nr_pend; i++) {
		p = &c->pend[i];
		if (!all && !remote_answered(c->remote, p->sync) &&
		    now < p->deadline)
			break;
		if (!remote_answered(c->remote, p->sync))
			remote_late(c->remote);
		put(c->q + pos, p->pos - pos);
		pos = p->pos;
		case_lines(c, p->depth, p->start, p->end);
		done++;
	}
	if (!done)
		return;
	c->nr_pend -= done;
	memmove(c->pend, c->pend + done, c->nr_pend * sizeof(*c->pend));
	for (i = 0; i < c->nr_pend; i++)
		c->pend[i].pos -= pos;
	if (!c->nr_pend) {
		put(c->q + pos, c->q_len - pos);
		pos = c->q_len;
	}
	memmove(c->q, c->q + pos, c->q_len - pos);
	c->q_len -= pos;
}

/* @deadline, or the first of a waiting case's, if sooner */
static uint64_t until(const struct cases *c, uint64_t deadline)
{
	return c->nr_pend && c->pend[0].deadline < deadline ?
	       c->pend[0].deadline : deadline;
}

/* flush_pending(), and the output out */
static void flush_out(struct cases *c, bool all)
{
	flush_pending(c, all);
	if (fflush(stdout))
		die("cannot write the output: %s", strerror(errno));
}

/* a leaf case ended: its lines now, or once the remote sent its samples */
static void case_end(struct cases *c, unsigned int depth, uint64_t start,
		     uint64_t end)
{
	if (!c->remote || !remote_host(c->remote)) {
		case_lines(c, depth, start, end);
		return;
	}
	grow(&c->pend, &c->room_pend, c->nr_pend, sizeof(*c->pend), 16);
	c->pend[c->nr_pend++] = (struct pending){
		.depth = depth, .start = start, .end = end, .pos = c->q_len,
		.sync = remote_ask(c->remote), .deadline = now_ns() + SYNC_WAIT,
	};
	flush_pending(c, false);
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
		if (c->started[depth] && !c->deeper[depth]) {
			c->leaves++;
			case_end(c, depth, c->start[depth], t);
		}
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
	out(c, c->hold, c->held);
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
			out(c, buf, n);
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

/* what the reader has queued, through the cases, and out */
static void take(struct cases *c)
{
	struct chunk *ch, *next;
	bool done;

	for (ch = reader_take(&c->rd, &done); ch; ch = next) {
		next = ch->next;
		feed(c, ch->data, ch->len, ch->t);
		free(ch);
	}
	/* done before the take: all it queued was taken */
	c->eof = done;
	if (fflush(stdout))
		die("cannot write the output: %s", strerror(errno));
}

int cases_wait(struct cases *c, uint64_t ns)
{
	uint64_t deadline = now_ns() + ns, now;
	struct pollfd p[3] = {
		{ .fd = -1, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
		{ .fd = -1, .events = POLLOUT },
	};
	struct timespec ts;
	sigset_t block, old;
	int r;

	stop_signal_set(&block);
	sigaddset(&block, SIGCHLD);
	for (;;) {
		/* blocked but while ppoll() waits: none between look and wait */
		sigprocmask(SIG_BLOCK, &block, &old);
		/* COMMAND, or the remote's link: the loop reaps COMMAND */
		if (child_exited)
			child_exited = 0;
		else if (!stop_signal && (now = now_ns()) < deadline)
			goto wait;
		sigprocmask(SIG_SETMASK, &old, NULL);
		break;
wait:
		p[0].fd = c->eof ? -1 : c->rd.wake[0];
		p[1].fd = c->remote ? remote_fd(c->remote) : -1;
		/* a request to the remote that waits for room in its pipe */
		p[2].fd = c->remote ? remote_request_fd(c->remote) : -1;
		r = ms_until(until(c, deadline), now);
		ts = (struct timespec){ r / 1000, r % 1000 * NSEC_PER_MSEC };
		r = ppoll(p, 3, &ts, &old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if ((p[1].fd >= 0 && p[1].revents) ||
		    (p[2].fd >= 0 && p[2].revents))
			remote_read(c->remote);
		if (p[0].fd >= 0 && p[0].revents)
			take(c);
		flush_out(c, false);
	}
	return c->err;
}

int cases_end(struct cases *c)
{
	struct pollfd p = { .events = POLLIN };
	enum line_kind kind;
	unsigned int depth;

	/* the reader takes what COMMAND left in the pipe, then ends */
	while (write(c->rd.stop[1], "", 1) < 0)
		if (errno != EINTR)
			die("the reader: %s", strerror(errno));
	while (!c->eof) {
		p.fd = c->rd.wake[0];
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		take(c);
	}
	if (c->held) {
		kind = classify(c->hold, c->held, true, &depth);
		line_out(c, kind, depth, true);
	}
	/* the cases that wait for the remote's answer, each until its deadline */
	while (c->nr_pend && (p.fd = remote_fd(c->remote)) >= 0) {
		if (poll(&p, 1, ms_until(until(c, UINT64_MAX), now_ns())) < 0 &&
		    errno != EINTR)
			die("poll: %s", strerror(errno));
		remote_read(c->remote);
		flush_out(c, false);
	}
	flush_out(c, true);
	return c->err;
}

void cases_failed(struct cases *c, int err)
{
	if (!c->err)
		c->err = err;
}

bool cases_mid_line(const struct cases *c)
{
	return c->mid_line;
}

void cases_summary(const struct cases *c, FILE *f)
{
	fprintf(f, "# ksft-perfmon: metric lines for %lu of %lu leaf cases; a case shorter than the interval may have no sample\n",
		c->with_lines, c->leaves);
}
