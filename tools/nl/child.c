// SPDX-License-Identifier: GPL-2.0
/*
 * record's child supervisor: the stop signals, COMMAND started in a
 * process group of its own, and the group stopped, then COMMAND reaped,
 * with SIGKILL after --kill-after or a second signal.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "nl-cmd.h"

volatile sig_atomic_t stop_signal;
volatile sig_atomic_t stop_count;
volatile sig_atomic_t child_exited;
struct command *running_command;
uint64_t kill_after_ns = 5 * NSEC_PER_SEC;

/* The signals that end a recording, and are passed on to COMMAND. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void on_stop(int sig)
{
	stop_signal = sig;
	stop_count++;
}

/* to cut the sleep between drains short when COMMAND exits */
static void on_child(int sig)
{
	(void)sig;
	child_exited = 1;
}

void stop_signal_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(set, stop_signals[i]);
}

void install_handlers(void)
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

void hold_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO)
		;
	if (fd > STDERR_FILENO)
		close(fd);
}

/* in a child about to exec: the handlers of install_handlers() undone */
void default_handlers(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		signal(stop_signals[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

/*
 * In COMMAND's process: @out its standard output, and every program's
 * written a line at a time, as a terminal would have it: Python's by
 * PYTHONUNBUFFERED, that of programs with glibc's stdio by stdbuf(1),
 * whose LD_PRELOAD reaches COMMAND's children too, as run_kselftest.sh
 * runs each test. Without stdbuf, COMMAND runs as it is.
 */
static void line_output(int out, char **argv)
{
	char **av;
	int n;

	if (dup2(out, STDOUT_FILENO) < 0 ||
	    (out == STDOUT_FILENO && fcntl(out, F_SETFD, 0))) {
		fprintf(stderr, PROG ": cannot give COMMAND its output: %s\n",
			strerror(errno));
		_exit(127);
	}
	/* record --ktap ignores it, for its own output */
	signal(SIGPIPE, SIG_DFL);
	setenv("PYTHONUNBUFFERED", "1", 1);
	for (n = 0; argv[n]; n++)
		;
	av = calloc(n + 3, sizeof(*av));
	if (!av)
		return;
	av[0] = "stdbuf";
	av[1] = "-oL";
	memcpy(av + 2, argv, n * sizeof(*av));
	execvp(av[0], av);
	free(av);
}

/*
 * Start COMMAND, unless a stop came first (then 0); with @out >= 0, its
 * standard output @out, written a line at a time. The stop signals are
 * blocked across fork(), so that one sent meanwhile reaches record, not
 * the child's copy of record's handler, which would swallow it.
 */
pid_t start_command(char **argv, int out)
{
	pid_t parent = getpid(), pid;
	sigset_t block, old;

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
		default_handlers();
		setpgid(0, 0);
		/* record killed outright takes COMMAND with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (out >= 0)
			line_output(out, argv);
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
bool command_reap(struct command *c, int flags)
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
void command_stop(struct command *c, int sig, uint64_t grace_ns,
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
