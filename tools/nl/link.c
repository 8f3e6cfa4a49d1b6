// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl link": a record --control on another host, over the
 * one connection that runs it. Its clock is lined up with ours by
 * requests on that connection, it is given the time base on its clock,
 * its output is passed on, and a stop signal closes its standard input,
 * which stops it: no second connection, to start or to stop.
 */

#define _GNU_SOURCE		/* ppoll() */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "nl-cmd.h"

#define CLOCK_REQUESTS	3

struct link {
	pid_t pid;
	int in;			/* COMMAND's standard input; -1: closed */
	int out;		/* its standard output */
	sigset_t wait_mask;	/* the signal mask ppoll() waits with */
	int stops_seen;
	bool started;		/* the record has its time base */
	bool pass_input;	/* --pass-input, until our input ends */
	bool reaped;
	int status;		/* COMMAND's, once reaped */
	size_t len;		/* of buf */
	char buf[65536];	/* its output, not yet taken */
	char line[65536];	/* the line next_line() took */
};

/*
 * The stop signals that came since the last look: the first closes
 * COMMAND's standard input, which stops its record; another, or the first
 * before the record had its time base (it records nothing yet, and may
 * not be there to read its input), sends COMMAND SIGTERM.
 */
static void stop_check(struct link *l)
{
	for (; l->stops_seen < stop_count; l->stops_seen++) {
		if (l->in >= 0) {
			close(l->in);
			l->in = -1;
			if (l->started)
				continue;
		}
		kill(l->pid, SIGTERM);
	}
}

static void reap(struct link *l, int flags)
{
	pid_t r;

	if (l->reaped || (flags == WNOHANG && !child_exited))
		return;
	child_exited = 0;
	do
		r = waitpid(l->pid, &l->status, flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die("link: waitpid: %s", strerror(errno));
	l->reaped = r == l->pid;
}

static void send_bytes(struct link *l, const char *buf, size_t len)
{
	ssize_t n;

	while (l->in >= 0 && len) {
		n = write(l->in, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)	/* COMMAND is gone: its status says why */
			return;
		buf += n;
		len -= n;
	}
}

static void send_line(struct link *l, const char *line)
{
	send_bytes(l, line, strlen(line));
}

/*
 * --pass-input: what came on our standard input to COMMAND's; its end,
 * or an error, closes COMMAND's as a stop does
 */
static void pass_input(struct link *l)
{
	char buf[4096];
	ssize_t n;

	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		send_bytes(l, buf, n);
		return;
	}
	l->pass_input = false;
	if (l->in >= 0) {
		close(l->in);
		l->in = -1;
	}
}

/*
 * More of COMMAND's output into buf, waiting for it; 0 at its end. Once
 * COMMAND has exited, only what is there: what it started may hold the
 * pipe open. Meanwhile, with --pass-input, our input goes to COMMAND's.
 */
static size_t read_more(struct link *l)
{
	struct pollfd p[2] = {
		{ .fd = l->out, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
	};
	const struct timespec now = {};
	ssize_t n;

	for (;;) {
		stop_check(l);
		reap(l, WNOHANG);
		p[1].fd = l->pass_input && l->started && l->in >= 0 ?
			  STDIN_FILENO : -1;
		/* the signals are blocked but while it waits */
		n = ppoll(p, 2, l->reaped ? &now : NULL, &l->wait_mask);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("link: poll: %s", strerror(errno));
		if (!n)
			return 0;
		if (p[1].revents) {
			pass_input(l);
			if (!p[0].revents)
				continue;
		}
		n = read(l->out, l->buf + l->len, sizeof(l->buf) - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("link: reading COMMAND's output: %s", strerror(errno));
		l->len += n;
		return n;
	}
}

/*
 * COMMAND's next line, in l->line; NULL when its output ended, or a stop
 * came, first
 */
static const char *next_line(struct link *l)
{
	char *nl;
	size_t n;

	while (!(nl = memchr(l->buf, '\n', l->len))) {
		/* no clock answer: a login's, passed on in pieces */
		if (l->len == sizeof(l->buf)) {
			fwrite(l->buf, 1, l->len, stderr);
			l->len = 0;
		}
		if (!read_more(l) || l->in < 0)
			return NULL;
	}
	n = nl - l->buf;
	memcpy(l->line, l->buf, n);
	l->line[n] = '\0';
	l->len -= n + 1;
	memmove(l->buf, nl + 1, l->len);
	return l->line;
}

/*
 * How far COMMAND's clock is ahead of ours: of CLOCK_REQUESTS requests,
 * the one answered in the shortest round trip, its answer taken as of
 * the middle of that trip (within half of it). Lines before an answer (a
 * login's) go to standard error. False when COMMAND's output ended, or a
 * stop came, first.
 */
static bool clock_offset(struct link *l, int64_t *offset, uint64_t *trip)
{
	uint64_t sent, seen, ns;
	const char *line;
	char *end;
	int i;

	for (i = 0; i < CLOCK_REQUESTS; i++) {
		sent = now_ns();
		send_line(l, "clock\n");
		while ((line = next_line(l)) && strncmp(line, "clock ", 6))
			fprintf(stderr, "%s\n", line);
		seen = now_ns();
		if (!line)
			return false;
		errno = 0;
		ns = strtoull(line + 6, &end, 10);
		if (errno || *end || end == line + 6)
			die("link: COMMAND answered '%.40s', not a clock", line);
		if (!i || seen - sent < *trip) {
			*trip = seen - sent;
			*offset = (int64_t)(ns - (sent + *trip / 2));
		}
	}
	return true;
}

/* COMMAND's standard input and output, pipes of ours */
static pid_t start(char **argv, int *in, int *out, const sigset_t *mask)
{
	int i_fd[2], o_fd[2];
	pid_t pid;

	if (pipe2(i_fd, O_CLOEXEC) || pipe2(o_fd, O_CLOEXEC))
		die("link: pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("link: fork: %s", strerror(errno));
	if (!pid) {
		default_handlers();
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		if (dup2(i_fd[0], STDIN_FILENO) < 0 ||
		    dup2(o_fd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, PROG " link: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(i_fd[0]);
	close(o_fd[1]);
	*in = i_fd[1];
	*out = o_fd[0];
	return pid;
}

/* what is in buf, and the rest of COMMAND's output, to ours as it comes */
static void pass_on(struct link *l)
{
	do {
		if ((l->len && fwrite(l->buf, 1, l->len, stdout) != l->len) ||
		    fflush(stdout))
			die("link: cannot write: %s", strerror(errno));
		l->len = 0;
	} while (read_more(l));
}

int do_link(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &link_cmd };
	struct link *l;
	uint64_t base = 0, trip = 0;
	bool have_base = false, lined_up, pass = false;
	int64_t offset = 0;
	sigset_t block;
	int opt, st;
	char line[64];

	while ((opt = kpm_getopt(&g, argc, argv)) > 0) {
		if (opt == 't') {
			base = parse_u64("--time-base", optarg, UINT64_MAX);
			have_base = true;
		}
		pass = pass || opt == 'P';
	}
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (!have_base || optind >= argc) {
		fprintf(stderr, PROG " link: give --time-base NS and -- COMMAND\n");
		return EXIT_USAGE;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		die("out of memory");
	l->pass_input = pass;

	hold_std_fds();
	/* record's handlers: each stop counts in stop_count */
	install_handlers();
	/* blocked but while ppoll() waits: none is lost between looks */
	stop_signal_set(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &l->wait_mask);
	/* a COMMAND that is gone fails a request, not link */
	signal(SIGPIPE, SIG_IGN);
	l->pid = start(argv + optind, &l->in, &l->out, &l->wait_mask);

	lined_up = clock_offset(l, &offset, &trip);
	if (lined_up) {
		if (offset < 0 && (uint64_t)-offset > base)
			die("link: the time base is before COMMAND's clock began");
		/*
		 * For the caller, as "ready PID" is: not on the KTAP lines.
		 * Before the base, so that it is written before record can
		 * say it is ready, not into that line.
		 */
		fprintf(stderr, "clock %lld %llu\n", (long long)offset,
			(unsigned long long)trip);
		snprintf(line, sizeof(line), "base %llu\n",
			 (unsigned long long)(base + offset));
		send_line(l, line);
		l->started = true;
	}
	pass_on(l);
	/* its output ended: its input too, so that a stop now ends it */
	if (l->in >= 0) {
		close(l->in);
		l->in = -1;
	}
	/* COMMAND may still run with its output closed: stops still count */
	for (;;) {
		stop_check(l);
		reap(l, WNOHANG);
		if (l->reaped)
			break;
		sigsuspend(&l->wait_mask);
	}
	st = l->status;
	free(l);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	if (!lined_up && !WEXITSTATUS(st) && !stop_count) {
		fprintf(stderr, PROG " link: COMMAND ended before it answered a clock request\n");
		return EXIT_ERROR;
	}
	return WEXITSTATUS(st);
}
