// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl clock": CLOCK_MONOTONIC in ns, or how far ahead of
 * ours the clock of another host is, by the answers of a command that
 * prints it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nl-cmd.h"

/*
 * COMMAND's clock minus ours when its answer arrived: when the line's
 * newline did, or the end of what it printed if it has none. What it
 * prints after that line is read and left, up to 1 MiB.
 */
static int64_t clock_offset(char **argv)
{
	char buf[64] = "", rest[4096];
	long long remote;
	uint64_t now = 0;
	size_t len = 0, more = 0;
	int fd[2], st;
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
	while (!now && len < sizeof(buf) - 1 &&
	       (n = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		if (memchr(buf + len, '\n', n))
			now = now_ns();
		len += n;
	}
	if (!now)
		now = now_ns();
	/* what follows, up to 1 MiB: COMMAND gets SIGPIPE past that */
	while (more < (1 << 20) && (n = read(fd[0], rest, sizeof(rest))) > 0)
		more += n;
	close(fd[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		die("clock: %s failed", argv[0]);
	if (WEXITSTATUS(st) == 127)	/* the child said why */
		nl_exit(EXIT_ERROR);
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

int do_clock(int argc, char **argv)
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
		fputs(clock_usage_line, stderr);
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
