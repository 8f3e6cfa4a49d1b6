// SPDX-License-Identifier: GPL-2.0
/*
 * record --ktap's remote endpoint: "record --control --stream" on the
 * other host, run by our own link over the one connection, which lines
 * the clocks up and passes our requests on. Its frames (record.c says
 * what they are) come on link's output: its head, then its samples as it
 * reads them, which go to a spool of their own (struct host); a line
 * "sync" asks for those up to now.
 */

#define _GNU_SOURCE		/* pipe2() */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.h"
#include "child.h"
#include "spool.h"

/* a frame: its type, its length, then that many bytes */
#define FRAME_HEAD	(1 + sizeof(uint32_t))
#define FRAME_MAX	(64U << 20)
/* how long link has to end once asked, before SIGKILL */
#define LINK_GRACE	(5 * NSEC_PER_SEC)

struct remote {
	pid_t pid;		/* link's */
	int in, out;		/* its standard input and output; -1: closed */
	bool failed;
	bool late;		/* an answer came late: said */
	char *buf;		/* what came and is not a whole frame yet */
	size_t len, room;
	uint64_t base;		/* our time base, which link gave on its clock */
	struct spool_head head;
	char *label;
	struct host host;
	bool have_host;
	unsigned long syncs, answers;
	bool unsent;		/* the last request is not written yet */
	bool have_end;
	struct stream_end end;
};

/* the remote's samples stop here: a line on stderr says why */
static void remote_fail(struct remote *r, const char *why)
{
	if (!r->failed)
		fprintf(stderr, PROG " record: the remote: %s; no more of its samples\n",
			why);
	r->failed = true;
	if (r->in >= 0)
		close(r->in);
	if (r->out >= 0)
		close(r->out);
	r->in = r->out = -1;
}

static void take_head(struct remote *r, const char *p, uint32_t len)
{
	FILE *f = fmemopen((void *)p, len, "r");

	if (!f)
		die("out of memory");
	spool_read_head(f, "the remote's stream", &r->head, &r->label);
	fclose(f);
	host_init(&r->host, r->label, &r->head.s, r->head.metrics,
		  (int64_t)(r->head.time_base - r->base), spool_open(NULL));
	r->have_host = true;
}

static void take_sample(struct remote *r, const char *p, uint32_t len)
{
	FILE *f = fmemopen((void *)p, len, "r");

	if (!f)
		die("out of memory");
	if (spool_read(f, &r->head.s, &r->host.smp) != 1)
		remote_fail(r, "it sent a sample that is not one");
	else
		host_add(&r->host, &r->host.smp);
	fclose(f);
}

/* the whole frames in buf */
static void take_frames(struct remote *r)
{
	size_t done = 0;
	uint32_t len;
	char type;

	while (!r->failed && r->len - done >= FRAME_HEAD) {
		type = r->buf[done];
		memcpy(&len, r->buf + done + 1, sizeof(len));
		if (len > FRAME_MAX) {
			remote_fail(r, "its stream is not of this build of " PROG);
			break;
		}
		if (r->len - done - FRAME_HEAD < len)
			break;
		done += FRAME_HEAD;
		if (type == 'H' && !r->have_host) {
			take_head(r, r->buf + done, len);
		} else if (type == 'S' && r->have_host) {
			take_sample(r, r->buf + done, len);
		} else if (type == 'A') {
			r->answers++;
		} else if (type == 'E' && len == sizeof(r->end)) {
			memcpy(&r->end, r->buf + done, len);
			r->have_end = true;
		} else {
			remote_fail(r, "its stream is not of this build of " PROG);
		}
		done += len;
	}
	memmove(r->buf, r->buf + done, r->len - done);
	r->len -= done;
}

/* what link wrote, if anything: false at its end */
static bool read_some(struct remote *r)
{
	ssize_t n;

	if (r->out < 0)
		return false;
	if (r->len == r->room) {
		r->room = r->room ? 2 * r->room : 65536;
		if (r->room > 2 * FRAME_MAX)
			die("the remote's stream: out of memory");
		r->buf = realloc(r->buf, r->room);
		if (!r->buf)
			die("out of memory");
	}
	n = read(r->out, r->buf + r->len, r->room - r->len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		close(r->out);
		r->out = -1;
		return false;
	}
	r->len += n;
	take_frames(r);
	return true;
}

/* read until @done(r) or the end, waiting up to @wait_ns; whether done */
static bool read_until(struct remote *r, bool (*done)(struct remote *),
		       uint64_t wait_ns)
{
	uint64_t deadline = now_ns() + wait_ns, now;
	struct pollfd p = { .events = POLLIN };

	while (!done(r) && r->out >= 0) {
		now = now_ns();
		if (now >= deadline)
			return false;
		p.fd = r->out;
		if (poll(&p, 1, ms_until(deadline, now)) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		read_some(r);
	}
	return done(r);
}

static bool recording(struct remote *r)
{
	return r->have_host || r->failed;
}

static bool ended(struct remote *r)
{
	return r->have_end || r->failed;
}

/* link reaped, SIGKILL if it has not ended within @wait_ns */
static int reap(struct remote *r, uint64_t wait_ns)
{
	uint64_t deadline = now_ns() + wait_ns;
	int st = 0;
	pid_t p;

	for (;;) {
		p = waitpid(r->pid, &st, WNOHANG);
		if (p == r->pid || (p < 0 && errno != EINTR))
			return st;
		if (now_ns() >= deadline)
			break;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	fprintf(stderr, PROG " record: the remote's link did not end; sending SIGKILL\n");
	kill(r->pid, SIGKILL);
	while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/* @s in single quotes for a shell, malloc()ed */
static char *quoted(const char *s)
{
	size_t len = 3;
	const char *p;
	char *q, *o;

	for (p = s; *p; p++)
		len += *p == '\'' ? 4 : 1;
	q = malloc(len);
	if (!q)
		die("out of memory");
	o = q;
	*o++ = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

char **remote_command(const struct remote_opts *o, uint64_t interval,
		      uint32_t metrics, uint32_t queues)
{
	const char *type = o->type ? o->type : getenv("REMOTE_TYPE");
	const char *args = o->args ? o->args : getenv("REMOTE_ARGS");
	char **av = calloc(32, sizeof(*av)), **cmd, *line;
	char buf[4096], list[512] = "";
	size_t n = 0, i, len;
	ssize_t got;
	int m;

	if (!type || !*type || !strcmp(type, "none"))
		return NULL;
	if (strcmp(type, "netns") && strcmp(type, "ssh"))
		die("--remote-type (REMOTE_TYPE) '%s': record --ktap reaches a netns or ssh remote, or none",
		    type);
	if (!args || !*args)
		die("--remote-args (REMOTE_ARGS): give the remote's %s",
		    strcmp(type, "netns") ? "ssh host" : "netns");
	if (!av)
		die("out of memory");
	if (!strcmp(type, "netns")) {
		av[n++] = "ip";
		av[n++] = "netns";
		av[n++] = "exec";
		av[n++] = xstrdup(args);
	} else {
		av[n++] = "ssh";
		av[n++] = "-q";
		av[n++] = xstrdup(args);
	}
	cmd = av + n;
	if (o->tool) {
		av[n++] = xstrdup(o->tool);
	} else if (!strcmp(type, "ssh")) {
		av[n++] = PROG;
	} else {
		/* a netns remote is this host: the same build */
		got = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
		if (got < 0)
			die("/proc/self/exe: %s", strerror(errno));
		buf[got] = '\0';
		av[n++] = xstrdup(buf);
	}
	av[n++] = "record";
	av[n++] = "--control";
	av[n++] = "--stream";
	av[n++] = "--host";
	av[n++] = "remote";
	av[n++] = "--interval";
	snprintf(buf, sizeof(buf), "%llu.%06llu",
		 (unsigned long long)(interval / NSEC_PER_MSEC),
		 (unsigned long long)(interval % NSEC_PER_MSEC));
	av[n++] = xstrdup(buf);
	if (o->ifname) {
		av[n++] = "--ifname";
		av[n++] = xstrdup(o->ifname);
		snprintf(buf, sizeof(buf), "%u", queues);
		av[n++] = "--queues";
		av[n++] = xstrdup(buf);
	} else {
		metrics &= ~M_QUEUE;
	}
	for (m = M_FIRST_OPTIONAL; m < M_NR; m++) {
		if (!(metrics & M_BIT(m)))
			continue;
		len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s",
			 len ? "," : "", metric_names[m]);
	}
	if (*list) {
		av[n++] = "--metrics";
		av[n++] = xstrdup(list);
	}
	if (strcmp(type, "ssh"))
		return av;
	/* ssh runs one line on the remote's shell */
	for (len = 0, i = 0; cmd + i < av + n; i++) {
		cmd[i] = quoted(cmd[i]);
		len += strlen(cmd[i]) + 1;
	}
	line = calloc(1, len);
	if (!line)
		die("out of memory");
	for (i = 0; cmd + i < av + n; i++) {
		if (i)
			strcat(line, " ");
		strcat(line, cmd[i]);
	}
	*cmd = line;
	cmd[1] = NULL;
	return av;
}

struct remote *remote_start(char **argv, uint64_t base, uint64_t ready_ns)
{
	struct remote *r = calloc(1, sizeof(*r));
	char base_s[24], **av;
	int i_fd[2], o_fd[2], n, st;
	pid_t parent = getpid();

	if (!r)
		die("out of memory");
	hold_std_fds();
	for (n = 0; argv[n]; n++)
		;
	av = calloc(n + 7, sizeof(*av));
	if (!av)
		die("out of memory");
	snprintf(base_s, sizeof(base_s), "%llu", (unsigned long long)base);
	av[0] = PROG;
	av[1] = "link";
	av[2] = "--time-base";
	av[3] = base_s;
	av[4] = "--pass-input";
	av[5] = "--";
	memcpy(av + 6, argv, n * sizeof(*av));
	if (pipe2(i_fd, O_CLOEXEC) || pipe2(o_fd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	r->pid = fork();
	if (r->pid < 0)
		die("fork: %s", strerror(errno));
	if (!r->pid) {
		default_handlers();
		signal(SIGPIPE, SIG_DFL);
		/* record killed outright: the remote's record stops too */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		if (dup2(i_fd[0], STDIN_FILENO) < 0 ||
		    dup2(o_fd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execv("/proc/self/exe", av);
		fprintf(stderr, PROG ": cannot run link: %s\n", strerror(errno));
		_exit(127);
	}
	free(av);
	close(i_fd[0]);
	close(o_fd[1]);
	r->in = i_fd[1];
	r->out = o_fd[0];
	r->base = base;
	/* neither blocks us: link may wait for us to read, as we for it */
	fcntl(r->in, F_SETFL, O_NONBLOCK);
	fcntl(r->out, F_SETFL, O_NONBLOCK);
	if (read_until(r, recording, ready_ns) && r->have_host)
		return r;
	/*
	 * Before the base, link's first stop sends its command SIGTERM;
	 * after, it closes the command's input, and the second does
	 */
	kill(r->pid, SIGTERM);
	sleep_ns(100 * NSEC_PER_MSEC);
	kill(r->pid, SIGTERM);
	st = reap(r, LINK_GRACE);
	die("--ktap: the remote's record %s (link %s %d): see above",
	    r->failed ? "sent what it should not" :
	    r->out < 0 ? "ended before it recorded" :
	    "did not record in time",
	    WIFSIGNALED(st) ? "ended on signal" : "exited",
	    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* the request not written yet, if it can be now */
static void send_request(struct remote *r)
{
	static const char sync[] = "sync\n";
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	ssize_t n;

	if (!r->unsent || r->failed || r->in < 0)
		return;
	/* a remote that is gone fails the request, not record */
	sigaction(SIGPIPE, &ign, &old);
	n = write(r->in, sync, sizeof(sync) - 1);
	sigaction(SIGPIPE, &old, NULL);
	/* less than PIPE_BUF: all or nothing */
	if (n == sizeof(sync) - 1)
		r->unsent = false;
	else if (n >= 0 || (errno != EAGAIN && errno != EINTR))
		remote_fail(r, "it took no request");
}

int remote_fd(const struct remote *r)
{
	return r->out;
}

int remote_request_fd(const struct remote *r)
{
	return r->unsent && !r->failed ? r->in : -1;
}

void remote_read(struct remote *r)
{
	send_request(r);
	while (read_some(r) && r->out >= 0 && !r->failed) {
		struct pollfd p = { .fd = r->out, .events = POLLIN };

		if (poll(&p, 1, 0) <= 0)
			break;
	}
}

/*
 * A request written after a case's end answers for it: while one is not
 * written yet, the cases that end meanwhile wait for its answer too.
 */
unsigned long remote_ask(struct remote *r)
{
	if (r->failed || r->in < 0 || r->out < 0)
		return 0;
	if (!r->unsent) {
		r->unsent = true;
		r->syncs++;
	}
	send_request(r);
	return r->syncs;
}

bool remote_answered(const struct remote *r, unsigned long n)
{
	return r->answers >= n || r->failed || r->out < 0;
}

void remote_late(struct remote *r)
{
	if (!r->late)
		fprintf(stderr, PROG " record: the remote did not send a case's samples in time: cases without its latest\n");
	r->late = true;
}

struct host *remote_host(struct remote *r)
{
	return r->have_host ? &r->host : NULL;
}

void remote_end(struct remote *r, uint64_t wait_ns, FILE *diag)
{
	const struct stream_end *e = &r->end;
	int st;

	/* its input's end stops it */
	if (r->in >= 0)
		close(r->in);
	r->in = -1;
	/* its input closed, link's stop sends its command SIGTERM */
	if (!read_until(r, ended, wait_ns))
		kill(r->pid, SIGTERM);
	if (r->out >= 0)
		close(r->out);
	st = reap(r, LINK_GRACE);
	if (r->have_end) {
		if (e->lost || e->kernel_lost)
			fprintf(diag, "# ksft-perfmon: remote: %llu samples lost (kernel counted %llu)\n",
				(unsigned long long)e->lost,
				(unsigned long long)e->kernel_lost);
		if (e->early)
			fprintf(diag, "# ksft-perfmon: remote: recording ended early on an error\n");
		if (e->missed)
			fprintf(diag, "# ksft-perfmon: remote: %llu timer periods missed\n",
				(unsigned long long)e->missed);
		if (e->qstats_skipped)
			fprintf(diag, "# ksft-perfmon: remote: %llu reads of queue statistics skipped\n",
				(unsigned long long)e->qstats_skipped);
	} else if (!r->failed) {
		fprintf(stderr, PROG " record: the remote's record did not end as it should (link %s %d)\n",
			WIFSIGNALED(st) ? "ended on signal" : "exited",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
	if (r->have_host) {
		fclose(r->host.spool);
		host_free(&r->host);
	}
	free(r->label);
	free(r->buf);
	free(r);
}
