// SPDX-License-Identifier: GPL-2.0
/*
 * rmmod while the module is busy, round after round. Each round loads the
 * module and keeps it busy the ways a reader can:
 *
 *  - a `ksft-perfmon-nl record` sampling every millisecond;
 *  - one socket with three sessions sampling every millisecond;
 *  - one socket with a session and a sample-get dump of which only the
 *    first buffer was read (checked in /proc/net/netlink);
 *  - one socket with a session and a thread blocked in recv() on it.
 *
 * Then:
 *
 *  - rmmod is refused while the dump is pending: netlink holds a reference
 *    on the module for every dump in progress;
 *  - once the dump's socket is closed, rmmod goes through; it is retried
 *    while the socket waits for an RCU grace period, or `record` is in
 *    one of its reads;
 *  - afterwards a request fails with ENOENT, the thread in recv() is woken
 *    by an error, `record` exits 1 with a one-line message, and the next
 *    load starts without sessions.
 *
 * A last load samples again. It loads and removes the module with the
 * syscalls, as one process: on a debug kernel under emulation, every exec
 * costs the better part of a second.
 *
 * usage: rmmod_race_test MODULE.ko [ROUNDS]    (default 200; root)
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ksft_perfmon.h>

#include "kselftest.h"
#include "nl.h"

#define MODNAME		"ksft_perfmon"
#define TOOL		"tools/ksft-perfmon-nl"
#define MS		1000000ULL
#define RECORD_AGAIN	TOOL " record --interval 10 --duration 0.2 | " \
			"grep -q '^# ktap-metric-json: '"

static const char *module_path;

/* what went wrong in this round */
static char why[512];

static int __printf(1, 2) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Load the module; note where it is in $KPM_MODULE_RANGES: kmemleak
 * reports the frames of an unloaded module as bare addresses.
 */
static int load(void)
{
	const char *ranges = getenv("KPM_MODULE_RANGES");
	char line[256];
	FILE *in, *out;
	int fd, err;

	fd = open(module_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("%s: %s", module_path, strerror(errno));
	err = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	if (err)
		return fail("insmod: %s", strerror(errno));
	if (!ranges)
		return 0;
	in = fopen("/proc/modules", "r");
	out = fopen(ranges, "a");
	while (in && out && fgets(line, sizeof(line), in))
		if (!strncmp(line, MODNAME " ", strlen(MODNAME " ")))
			fputs(line, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return 0;
}

/* rmmod: 0, or the errno */
static int unload(void)
{
	return syscall(SYS_delete_module, MODNAME, O_NONBLOCK) ? errno : 0;
}

static int session_id_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KSFT_PERFMON_A_SESSION_MAX + 1];
	uint64_t *v = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, KSFT_PERFMON_A_SESSION_MAX,
			  NULL))
		return NL_OK;
	v[0] = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_ID]);
	v[1] = kpm_nla_get_uint(tb[KSFT_PERFMON_A_SESSION_SAMPLES]);
	return NL_OK;
}

/* A session sampling every @interval ns; its id, or 0. */
static uint32_t session_new(struct nl_sock *sk, int family, uint64_t interval)
{
	struct nl_msg *msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	uint64_t v[2] = {};
	struct kpm_ack ack;

	if (!msg)
		return 0;
	nla_put_u64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, interval);
	nla_put_u32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, 2048);
	return kpm_nl_talk(sk, msg, session_id_cb, v, &ack) ? 0 : v[0];
}

static struct nl_msg *session_get_msg(int family, uint32_t id)
{
	struct nl_msg *msg = kpm_nl_msg(family, KSFT_PERFMON_CMD_SESSION_GET, 0);

	if (msg)
		nla_put_u32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return msg;
}

/* Wait until session @id has taken @n samples; 0, or -1 after 60 s. */
static int wait_samples(struct nl_sock *sk, int family, uint32_t id,
			uint64_t n)
{
	struct kpm_ack ack;
	uint64_t v[2];
	int i;

	for (i = 0; i < 6000; i++) {
		v[1] = 0;
		if (kpm_nl_talk(sk, session_get_msg(family, id), session_id_cb,
				v, &ack))
			return fail("session-get: %s", strerror(-ack.err));
		if (v[1] >= n)
			return 0;
		sleep_ms(10);
	}
	return fail("session %u took %llu samples in 60 s, not %llu", id,
		    (unsigned long long)v[1], (unsigned long long)n);
}

struct waiter {
	struct nl_sock *sk;
	pthread_t thread;
	ssize_t len;
	int err;	/* the error of the message that woke it */
};

static void *wait_fn(void *arg)
{
	struct waiter *w = arg;
	char buf[8192];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	w->len = recv(nl_socket_get_fd(w->sk), buf, sizeof(buf), 0);
	if (w->len >= (ssize_t)NLMSG_SPACE(sizeof(struct nlmsgerr)) &&
	    nlh->nlmsg_type == NLMSG_ERROR)
		w->err = ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
	return NULL;
}

struct busy {
	pid_t record;
	int record_err;		/* its stderr */
	struct nl_sock *sampler, *dumper;
	int family;
	uint32_t id;		/* one of sampler's sessions */
	struct waiter w;
	bool waiting;
};

static int start_record(struct busy *b)
{
	int fd[2];

	if (pipe2(fd, O_CLOEXEC))
		return fail("pipe: %s", strerror(errno));
	b->record = fork();
	if (b->record < 0)
		return fail("fork: %s", strerror(errno));
	if (!b->record) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		execl(TOOL, TOOL, "record", "--interval", "1", "--ring", "64",
		      "--duration", "600", NULL);
		_exit(127);
	}
	close(fd[1]);
	b->record_err = fd[0];
	return 0;
}

/*
 * `record` must end with status 1 and one line saying the family went:
 * ENOENT, or EPROTONOSUPPORT from a dump that started while the module
 * was on its way out (netlink could not take a reference on it).
 */
static int end_record(struct busy *b)
{
	size_t len = 0;
	char buf[512];
	ssize_t n;
	int status;

	/* stderr is unbuffered: the line may come in several writes */
	while (len < sizeof(buf) - 1 &&
	       (n = read(b->record_err, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	if (waitpid(b->record, &status, 0) != b->record)
		return fail("waitpid: %s", strerror(errno));
	b->record = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
	    (!strstr(buf, ": No such file or directory") &&
	     !strstr(buf, ": Protocol not supported")) ||
	    strchr(buf, '\n') != buf + strlen(buf) - 1)
		return fail("record ended with status %#x and \"%s\"", status,
			    buf);
	return 0;
}

static int hold(struct busy *b)
{
	struct nl_sock *waiting;
	struct nl_msg *msg;
	char buf[4096];
	uint32_t id;
	int i;

	b->sampler = kpm_nl_socket(&b->family);
	/*
	 * Reads of 4 KiB from the first on: libnl's own, genl_ctrl_resolve()'s
	 * too, would make the dump's skbs 16 KiB
	 */
	b->dumper = kpm_nl_socket_sized(&b->family, 4096);
	waiting = kpm_nl_socket(&b->family);
	b->w.sk = waiting;
	if (!b->sampler || !b->dumper || !waiting || b->family < 0)
		return fail("no ksft_perfmon family");
	for (i = 0; i < 3; i++) {
		b->id = session_new(b->sampler, b->family, MS);
		if (!b->id)
			return fail("no session");
	}
	id = session_new(b->dumper, b->family, MS / 10);
	if (!id || !session_new(waiting, b->family, MS))
		return fail("no session");

	/*
	 * Samples for many buffers, and a receive buffer that holds one: the
	 * kernel goes on dumping into the socket after each read until the
	 * buffer is full, so only then does the dump stay pending: one skb
	 * at the request and one after the read, about 4 KiB each. A
	 * hundred samples of four CPUs (some 500 bytes each) are several
	 * times that; the check below fails the round if they were not. (A
	 * thousand took 3 s a round on the debug kernel, 11 minutes of its
	 * run.)
	 */
	if (wait_samples(b->dumper, b->family, id, 100))
		return -1;
	if (nl_socket_set_buffer_size(b->dumper, 4096, 0))
		return fail("SO_RCVBUF: %s", strerror(errno));
	msg = kpm_nl_msg(b->family, KSFT_PERFMON_CMD_SAMPLE_GET, NLM_F_DUMP);
	nla_put_u32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, id);
	if (nl_send_auto(b->dumper, msg) < 0 ||
	    recv(nl_socket_get_fd(b->dumper), buf, sizeof(buf), 0) <= 0)
		return fail("sample-get: %s", strerror(errno));
	nlmsg_free(msg);
	if (kpm_nl_dump_running(b->dumper) != 1)
		return fail("the dump is not pending after one read");

	if (pthread_create(&b->w.thread, NULL, wait_fn, &b->w))
		return fail("pthread_create failed");
	b->waiting = true;
	return 0;
}

/* after rmmod: a request fails with ENOENT, and wakes the thread in recv() */
static int check_gone(struct busy *b)
{
	struct nl_msg *msg;
	struct kpm_ack ack;

	kpm_nl_talk(b->sampler, session_get_msg(b->family, b->id), NULL, NULL,
		    &ack);
	if (ack.err != -ENOENT)
		return fail("session-get after rmmod: %s", strerror(-ack.err));

	msg = session_get_msg(b->family, b->id);
	if (nl_send_auto(b->w.sk, msg) < 0)
		return fail("send: %s", strerror(errno));
	nlmsg_free(msg);
	pthread_join(b->w.thread, NULL);
	b->waiting = false;
	if (b->w.len <= 0 || b->w.err != -ENOENT)
		return fail("recv() woke with %s", b->w.len <= 0 ? "nothing" :
			    strerror(-b->w.err));
	return 0;
}

static void release(struct busy *b)
{
	if (b->waiting) {
		pthread_cancel(b->w.thread);
		pthread_join(b->w.thread, NULL);
	}
	if (b->record > 0) {
		kill(b->record, SIGKILL);
		waitpid(b->record, NULL, 0);
	}
	if (b->record_err > 0)
		close(b->record_err);
	nl_socket_free(b->sampler);
	nl_socket_free(b->dumper);
	nl_socket_free(b->w.sk);
	memset(b, 0, sizeof(*b));
}

/* One round; the number of times rmmod was refused after the dump ended. */
static int round_one(void)
{
	struct busy b = {};
	int err, i, n;

	if (load())
		return -1;
	n = kpm_nr_sessions();
	if (n)
		return fail("%d sessions after insmod", n);
	if (start_record(&b) || hold(&b))
		goto out;
	/* record's session too */
	for (i = 0; i < 6000 && kpm_nr_sessions() < 6; i++)
		sleep_ms(10);

	err = unload();
	if (err != EWOULDBLOCK) {
		fail("rmmod with a dump in progress: %s", strerror(err));
		goto out;
	}
	nl_socket_free(b.dumper);
	b.dumper = NULL;
	for (i = 0; i < 500 && (err = unload()) == EWOULDBLOCK; i++)
		sleep_ms(10);
	if (err) {
		fail("rmmod %d times after the dump ended: %s", i + 1,
		     strerror(err));
		goto out;
	}
	if (check_gone(&b) || end_record(&b))
		goto out;
	release(&b);
	return i;
out:
	release(&b);
	unload();
	return -1;
}

int main(int argc, char **argv)
{
	int rounds, i, n, failed = 0, refused = 0, most = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s MODULE.ko [ROUNDS]\n", argv[0]);
		return KSFT_FAIL;
	}
	module_path = argv[1];
	rounds = argc > 2 ? atoi(argv[2]) : 200;

	ksft_print_header();
	ksft_set_plan(2);

	for (i = 1; i <= rounds; i++) {
		n = round_one();
		if (n < 0) {
			ksft_print_msg("round %d: %s\n", i, why);
			failed++;
			continue;
		}
		refused += n;
		if (n > most)
			most = n;
	}
	ksft_print_msg("%d rounds, %d failed; rmmod refused %d times after the dump ended, %d at most\n",
		       rounds, failed, refused, most);
	ksft_test_result(!failed, "rmmod_while_busy\n");

	/* and the module samples again */
	ksft_test_result(!load() && !kpm_nr_sessions() && !system(RECORD_AGAIN) &&
			 !unload(), "samples_after_reload\n");
	ksft_finished();
}
