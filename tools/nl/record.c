// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl record": sample while COMMAND runs, or for --duration,
 * spool the samples as they are read, and print the KTAP metric lines
 * once the session is gone. child.c supervises COMMAND; spool.c turns
 * the spool into lines.
 */

#define _GNU_SOURCE		/* ppoll() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.h"
#include "child.h"
#include "ktap.h"
#include "nl-cmd.h"
#include "spool.h"

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
/* record --ktap: how long its remote's record may take to start */
#define REMOTE_READY		(30 * NSEC_PER_SEC)

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

/* the netdevs whose queue statistics record asked for and never had */
static void print_no_queues(const struct record *r)
{
	uint32_t d;

	for (d = 0; r->qseen && d < r->qdevs; d++)
		if (!r->qseen[d])
			printf("# ksft-perfmon: no queue statistics read from netdev %u: its driver has none, it was down, or their lock was always held\n",
			       r->qifindex[d]);
}

/*
 * The kernel selftests' bkg(..., ksft_ready=True) passes a pipe in
 * KSFT_READY_FD and waits for a line on it: sampling has started. The
 * line names our pid, so that a helper can stop a record it started
 * (on another host, one whose standard input --control cannot end).
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
	/* ours: what record starts must not hold the caller's pipe open */
	if (fd > STDERR_FILENO)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
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

/*
 * record --control: standard input is the line of the host that started
 * record on this one (ksft-perfmon-nl link, PerfMonitor). Before
 * recording, a line "clock" is answered on standard output with "clock
 * NS", our CLOCK_MONOTONIC, at once; a line "base NS" gives the time base
 * and starts recording. Read a byte at a time, so that nothing after the
 * base is taken in.
 */
static uint64_t control_base(void)
{
	char line[64];
	size_t len = 0;
	ssize_t n;
	char c;

	for (;;) {
		n = read(STDIN_FILENO, &c, 1);
		if (n < 0 && errno == EAGAIN) {		/* a non-blocking input */
			poll(&(struct pollfd){ .fd = STDIN_FILENO,
					       .events = POLLIN }, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("--control: standard input ended before the time base");
		if (c != '\n') {
			if (len == sizeof(line) - 1)
				die("--control: a request of over %zu bytes",
				    sizeof(line) - 1);
			line[len++] = c;
			continue;
		}
		line[len] = '\0';
		len = 0;
		if (!strcmp(line, "clock")) {
			printf("clock %llu\n", (unsigned long long)now_ns());
			if (fflush(stdout))
				die("--control: cannot answer: %s",
				    strerror(errno));
		} else if (!strncmp(line, "base ", 5)) {
			return parse_u64("--control: the base", line + 5,
					 UINT64_MAX);
		} else {
			die("--control: not a request (clock, base NS): '%.40s'",
			    line);
		}
	}
}

/*
 * Sleep @ns, less when standard input ends (or fails), which stops a
 * record --control: -1 then. Else the number of lines "sync" read
 * meanwhile (record --stream answers them); other lines are dropped.
 */
static int control_wait(uint64_t ns)
{
	static char line[8];
	static size_t len;
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};
	int syncs = 0;
	char buf[256];
	ssize_t n, i;

	/* the time, or a signal, which the loop looks at */
	if (ppoll(&p, 1, &ts, NULL) <= 0)
		return 0;
	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (!n || (n < 0 && errno != EINTR && errno != EAGAIN))
		return -1;
	for (i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			/* a longer line is none of ours */
			line[len < sizeof(line) - 1 ? len++ : len] = buf[i];
			continue;
		}
		line[len] = '\0';
		syncs += len == 4 && !strcmp(line, "sync");
		len = 0;
	}
	return syncs;
}

/* record --control --stream: a frame of spool.h's to standard output */
static void frame(char type, const void *p, uint32_t len)
{
	if (fputc(type, stdout) == EOF ||
	    fwrite(&len, sizeof(len), 1, stdout) != 1 ||
	    (len && fwrite(p, 1, len, stdout) != len))
		die("--stream: cannot write: %s", strerror(errno));
}

/* a frame's payload: written to the memstream of frame_start() */
static FILE *frame_start(char **buf, size_t *len)
{
	FILE *m = open_memstream(buf, len);

	if (!m)
		die("out of memory");
	return m;
}

static void frame_end(char type, FILE *m, char **buf, size_t *len)
{
	if (fclose(m))
		die("out of memory");
	frame(type, *buf, *len);
	free(*buf);
}

static void stream_sample(struct drain *d, const struct sample *smp)
{
	size_t len;
	char *buf;
	FILE *m;

	m = frame_start(&buf, &len);
	spool_write(m, d->s, smp);
	frame_end('S', m, &buf, &len);
}

/* with --spool: the spool too, which nothing reads back here otherwise */
static void stream_spool_sample(struct drain *d, const struct sample *smp)
{
	spool_sample(d, smp);
	stream_sample(d, smp);
}

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

int do_record(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &record_cmd };
	struct sample_args sa = { .interval = NSEC_PER_SEC,
				  .queues = QUEUES_DEFAULT };
	uint32_t metrics = 0;
	struct session_opts so;
	uint64_t period, period_max, duration = 0;
	uint64_t start, end, now, wait;
	struct command cmd = {};
	int opt, rc = 0, err, fd;
	bool early;
	const char *host = "local";
	uint64_t time_base = 0, dev_interval = 0;
	bool have_base = false, raw = false, control = false, ktap = false;
	bool stream = false;
	int syncs = 0;
	struct remote_opts ro = {};
	struct remote *remote = NULL;
	char **remote_argv = NULL;
	struct cases *cases = NULL;
	FILE *diag = stdout;
	int out[2] = { -1, -1 };
	const char *spool_path = NULL;
	uint64_t gaps = 0;
	struct record r;
	FILE *spool;
	uint32_t ring = RING_DEFAULT;
	bool ring_given = false;
	struct session s;
	struct kpm_nl nl;
	struct drain d;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0) {
		if (sample_arg(&sa, opt, optarg))
			continue;
		switch (opt) {
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
		case 'D':
			dev_interval = llround(parse_positive("--dev-interval",
							      optarg) *
					       NSEC_PER_MSEC);
			break;
		case 'S':
			spool_path = optarg;
			break;
		case 'm':
			metrics |= parse_metrics(optarg);
			break;
		case 'C':
			control = true;
			break;
		case 'K':
			ktap = true;
			break;
		case 'W':
			stream = true;
			break;
		case 'y':
			ro.type = optarg;
			break;
		case 'z':
			ro.args = optarg;
			break;
		case 'f':
			ro.ifname = optarg;
			break;
		case 'T':
			ro.tool = optarg;
			break;
		}
	}
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (control && (optind < argc || have_base)) {
		fprintf(stderr, PROG " record: --control takes no COMMAND and no --time-base: the base comes on standard input\n");
		return EXIT_USAGE;
	}
	if (stream && (!control || raw)) {
		fprintf(stderr, PROG " record: --stream goes with --control, and not --raw\n");
		return EXIT_USAGE;
	}
	if (ktap && (optind >= argc || raw)) {
		fprintf(stderr, PROG " record: --ktap takes a COMMAND, and no --raw\n");
		return EXIT_USAGE;
	}
	if (!ktap && (ro.type || ro.args || ro.ifname || ro.tool)) {
		fprintf(stderr, PROG " record: the --remote options go with --ktap\n");
		return EXIT_USAGE;
	}
	/* the drivers/net config's netdev, unless one is given */
	if (ktap && !sa.ndevs && getenv("NETIF") && *getenv("NETIF")) {
		if (!if_nametoindex(getenv("NETIF")))
			die("--ktap: NETIF '%s' is no netdev in this network namespace (--ifname gives another)",
			    getenv("NETIF"));
		parse_netdev('i', getenv("NETIF"), sa.ifindex, &sa.ndevs);
	}
	if (!control && !duration == (optind >= argc)) {
		fprintf(stderr, PROG " record: give either --duration or -- COMMAND\n");
		return EXIT_USAGE;
	}
	if (metrics & M_ALL)
		metrics = M_CPU_NET | (sa.ndevs ? M_QUEUE : 0);
	if (ktap)
		remote_argv = remote_command(&ro, sa.interval, metrics,
					     sa.queues);
	if (metrics & M_QUEUE && !sa.ndevs)
		die("--metrics: the nic.queue metrics are of netdevs: give --ifname or --ifindex");
	if (dev_interval && !sa.ndevs)
		die("--dev-interval: of no netdev: give --ifname or --ifindex");
	so.cpu_net = metrics & M_CPU_NET;
	so.queues = metrics & M_QUEUE ? sa.queues : 0;
	so.dev_interval = dev_interval;

	/* first, while every open descriptor is the caller's */
	fd = ready_fd();
	if (ktap && fcntl(STDOUT_FILENO, F_GETFD) < 0)
		die("--ktap: standard output is not open");
	if (control) {
		time_base = control_base();
		have_base = true;
	}
	kpm_nl_open(&nl);
	/* COMMAND's to inherit no more than the spool */
	fcntl(nl_socket_get_fd(nl.sk), F_SETFD, FD_CLOEXEC);
	/*
	 * The remote records before COMMAND starts, and before our session
	 * does, which nothing would read while the remote starts. Output
	 * whose reader is gone is an error of ours, not a SIGPIPE, so that
	 * COMMAND's group is stopped.
	 */
	if (ktap) {
		signal(SIGPIPE, SIG_IGN);
		if (remote_argv)
			remote = remote_start(remote_argv, now_ns(),
					      REMOTE_READY);
	}

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
		for (ring = ring_default(sa.interval, period_max);
		     ring > RING_DEFAULT; ring /= 2) {
			bool refused = false;

			err = session_new(&nl, sa.ifindex, sa.ndevs,
					  sa.interval, ring, &so, &s,
					  &refused);
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
	if (err && session_new(&nl, sa.ifindex, sa.ndevs, sa.interval, ring,
			       &so, &s, NULL))
		return EXIT_ERROR;
	if (session_get(&nl, s.id, &s))
		return EXIT_ERROR;
	/* once the session exists: a record that cannot start keeps a spool */
	spool = spool_open(spool_path);
	spool_start(spool, &s, metrics, host, time_base);
	if (ktap) {
		if (pipe2(out, O_CLOEXEC) || fcntl(out[0], F_SETFL, O_NONBLOCK))
			die("pipe: %s", strerror(errno));
		cases = cases_new(out[0], spool, &s, metrics, host, now_ns(),
				  &nl, &d, remote);
	}
	if (ktap)
		err = drain_init(&d, &s, cases_sample, cases);
	else
		err = drain_init(&d, &s, !stream ? spool_sample :
				 spool_path ? stream_spool_sample :
				 stream_sample, spool);
	if (err)
		die("out of memory");
	if (stream) {
		size_t len;
		char *buf;
		FILE *m = frame_start(&buf, &len);

		spool_start(m, &s, metrics, host, time_base);
		frame_end('H', m, &buf, &len);
		if (fflush(stdout))
			die("--stream: cannot write: %s", strerror(errno));
	}

	install_handlers();
	tell_ready(fd);
	if (optind < argc) {
		cmd.pid = start_command(argv + optind, out[1]);
		running_command = &cmd;
	}
	if (out[1] >= 0)
		close(out[1]);

	/* read often enough that a quarter of the ring never fills up */
	period = sa.interval * (s.ring_size / 4 ? s.ring_size / 4 : 1);
	if (period > period_max)
		period = period_max;
	/* --control without --duration: until standard input ends */
	end = duration ? start + duration : UINT64_MAX;
	for (;;) {
		/* with --ktap, an error ends the sampling, not COMMAND */
		if (!err) {
			err = drain(&nl, &d);
			if (err && cases)
				cases_failed(cases, err);
		}
		/* what was read survives a SIGKILL, for replay */
		if (spool_path && fflush(spool))
			die("cannot write the spool: %s", strerror(errno));
		/* what was read is out, and the syncs answered */
		for (; stream && syncs; syncs--)
			frame('A', NULL, 0);
		if (stream && fflush(stdout))
			die("--stream: cannot write: %s", strerror(errno));
		if ((err && !ktap) || stop_signal)
			break;
		if (cmd.pid && command_reap(&cmd, WNOHANG))
			break;
		/* once: time that passed between two reads made end - now wrap */
		now = now_ns();
		if (!cmd.pid && now >= end)
			break;
		wait = cmd.pid || end - now > period ? period : end - now;
		if (ktap) {
			int e = cases_wait(cases, wait);

			err = err ? err : e;
		} else if (!control) {
			sleep_ns(wait);
		} else {
			syncs = control_wait(wait);
			if (syncs < 0)
				break;
		}
	}
	running_command = NULL;
	/* with --ktap, only a stop signal stops COMMAND: it is that one */
	if (cmd.pid)
		command_stop(&cmd, err && !ktap ? SIGTERM : stop_signal,
			     kill_after_ns, err && !ktap ? stop_count : 1);
	/* what COMMAND wrote that was not read yet, its cases' lines too */
	if (cases) {
		int e = cases_end(cases);

		err = err ? err : e;
	}
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
	if (stream) {
		struct stream_end e = {
			d.lost, s.lost, s.missed, s.qstats_skipped, early,
		};

		frame('E', &e, sizeof(e));
		drain_free(&d);
		fclose(spool);
		if (fflush(stdout))
			die("--stream: cannot write: %s", strerror(errno));
		return err ? EXIT_ERROR : 0;
	}
	/*
	 * With --ktap, the cases had their lines: only the diagnostics, on
	 * stderr if COMMAND's output ended within a line, which is not ours
	 * to end.
	 */
	if (cases) {
		memset(&r, 0, sizeof(r));
		if (cases_mid_line(cases))
			diag = stderr;
		if (remote)
			remote_end(remote, kill_after_ns, diag);
		cases_summary(cases, diag);
	} else {
		print_spool(spool, host, time_base, &s, metrics, raw, false,
			    &r, &gaps);
	}
	if (d.lost || s.lost)
		fprintf(diag, "# ksft-perfmon: %llu samples lost (kernel counted %llu): read more often or use a larger --ring\n",
			(unsigned long long)d.lost, (unsigned long long)s.lost);
	if (early)
		fprintf(diag, "# ksft-perfmon: recording ended early on an error, after %llu samples\n",
			(unsigned long long)d.cursor);
	if (s.missed)
		fprintf(diag, "# ksft-perfmon: %llu timer periods missed: the sampler ran a period or more late and took no sample for them\n",
			(unsigned long long)s.missed);
	if (s.qstats_skipped)
		fprintf(diag, "# ksft-perfmon: %llu reads of queue statistics skipped: their lock (RTNL or the netdev's) was held, or the read budget had no room for their queues\n",
			(unsigned long long)s.qstats_skipped);
	print_no_queues(&r);
	print_end(&r);
	record_free(&r);
	drain_free(&d);
	if (cases)
		cases_free(cases);
	fclose(spool);

	/* with --ktap, COMMAND's status: metrics never change a result */
	if (err && !ktap)
		rc = EXIT_ERROR;
	else if (cmd.pid && WIFEXITED(cmd.status) && WEXITSTATUS(cmd.status))
		rc = WEXITSTATUS(cmd.status);
	else if (cmd.pid && WIFSIGNALED(cmd.status))
		rc = 128 + WTERMSIG(cmd.status);
	else if ((d.lost || s.lost) && !ktap)
		rc = EXIT_LOST;
	return rc;
}
