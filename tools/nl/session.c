// SPDX-License-Identifier: GPL-2.0
/*
 * The session client of ksft-perfmon-nl: the family's socket, requests
 * and their errors as one line each (the kernel's extack message and the
 * attribute it names), session-new, -get and -del, and the drain of a
 * session's samples, changed-only where the module takes it.
 */

#include <errno.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/ksft_perfmon.h>

#include "nl-cmd.h"

const char *const session_attr_names[KSFT_PERFMON_A_SESSION_MAX + 1] = {
	[KSFT_PERFMON_A_SESSION_ID] = "id",
	[KSFT_PERFMON_A_SESSION_IFINDEX] = "ifindex",
	[KSFT_PERFMON_A_SESSION_INTERVAL] = "interval",
	[KSFT_PERFMON_A_SESSION_RING_SIZE] = "ring-size",
	[KSFT_PERFMON_A_SESSION_CPU_NET] = "cpu-net",
	[KSFT_PERFMON_A_SESSION_QUEUES] = "queues",
	[KSFT_PERFMON_A_SESSION_DEV_INTERVAL] = "dev-interval",
};

static const char *const sample_attr_names[] = {
	[KSFT_PERFMON_A_SAMPLE_SESSION_ID] = "session-id",
	[KSFT_PERFMON_A_SAMPLE_CURSOR] = "cursor",
	[KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY] = "changed-only",
};

void kpm_nl_open(struct kpm_nl *nl)
{
	nl->sk = kpm_nl_socket(&nl->family);
	if (!nl->sk)
		die("cannot open a generic netlink socket");
	if (nl->family < 0)
		die("generic netlink family %s not found: is the ksft_perfmon module loaded?",
		    KSFT_PERFMON_FAMILY_NAME);
}

struct nl_msg *msg_new(struct kpm_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = kpm_nl_msg(nl->family, cmd, flags);

	if (!msg)
		die("out of memory");
	return msg;
}

/*
 * kpm_nl_talk(), and an error as one line: the errno, the kernel's extack
 * message and the name of the attribute it points at, looked up in @names;
 * none for an error that points at attribute @quiet (-1: none is quiet),
 * which sets *@quieted instead. A socket that fails is fatal; the
 * kernel's negative errno is returned.
 */
static int talk_quiet(struct kpm_nl *nl, const char *op, struct nl_msg *msg,
		      const char *const *names, unsigned int nr_names,
		      nl_recvmsg_msg_cb_t valid, void *arg, int quiet,
		      bool *quieted)
{
	struct kpm_ack ack;

	if (!kpm_nl_talk(nl->sk, msg, valid, arg, &ack))
		return 0;
	if (!ack.from_kernel)
		die("%s: %s", op, ack.msg);
	if (quiet >= 0 && ack.bad_attr == quiet) {
		*quieted = true;
		return ack.err;
	}

	fprintf(stderr, PROG ": %s: %s", op, strerror(-ack.err));
	if (ack.msg[0])
		fprintf(stderr, ": kernel reports: %s", ack.msg);
	else if (ack.err == -EPERM)
		/* genetlink's own check of admin-perm, which has no extack */
		fputs(": needs CAP_NET_ADMIN in the initial user namespace",
		      stderr);
	if (ack.bad_attr >= 0 && (unsigned int)ack.bad_attr < nr_names &&
	    names[ack.bad_attr])
		fprintf(stderr, " (attribute %s)", names[ack.bad_attr]);
	else if (ack.bad_attr >= 0)
		fprintf(stderr, " (attribute %d)", ack.bad_attr);
	fputc('\n', stderr);
	return ack.err;
}

int talk(struct kpm_nl *nl, const char *op, struct nl_msg *msg,
	 const char *const *names, unsigned int nr_names,
	 nl_recvmsg_msg_cb_t valid, void *arg)
{
	return talk_quiet(nl, op, msg, names, nr_names, valid, arg, -1, NULL);
}

static int session_one_cb(struct nl_msg *msg, void *arg)
{
	if (session_parse(nlmsg_hdr(msg), arg))
		die("malformed session message from the kernel");
	return NL_OK;
}

/*
 * session-new; with @ring_refused, a refusal of the ring (its size over
 * a limit) is not printed, but sets *@ring_refused
 */
int session_new(struct kpm_nl *nl, const uint32_t *ifindex,
		unsigned int ndevs, uint64_t interval, uint32_t ring,
		const struct session_opts *o, struct session *s,
		bool *ring_refused)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SESSION_NEW, 0);
	unsigned int i;

	for (i = 0; i < ndevs; i++)
		NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_IFINDEX, ifindex[i]);
	NLA_PUT_U64(msg, KSFT_PERFMON_A_SESSION_INTERVAL, interval);
	NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_RING_SIZE, ring);
	if (o->cpu_net)
		NLA_PUT_FLAG(msg, KSFT_PERFMON_A_SESSION_CPU_NET);
	if (o->queues)
		NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_QUEUES, o->queues);
	if (o->dev_interval)
		NLA_PUT_U64(msg, KSFT_PERFMON_A_SESSION_DEV_INTERVAL,
			    o->dev_interval);
	return talk_quiet(nl, "session-new", msg, session_attr_names,
			  ARRAY_SIZE(session_attr_names), session_one_cb, s,
			  ring_refused ? KSFT_PERFMON_A_SESSION_RING_SIZE : -1,
			  ring_refused);
nla_put_failure:
	die("out of memory");
}

/* command @cmd (@op) of session @id, its reply to @valid */
static int session_cmd(struct kpm_nl *nl, uint8_t cmd, const char *op,
		       uint32_t id, nl_recvmsg_msg_cb_t valid, void *arg)
{
	struct nl_msg *msg = msg_new(nl, cmd, 0);

	NLA_PUT_U32(msg, KSFT_PERFMON_A_SESSION_ID, id);
	return talk(nl, op, msg, session_attr_names,
		    ARRAY_SIZE(session_attr_names), valid, arg);
nla_put_failure:
	die("out of memory");
}

int session_get(struct kpm_nl *nl, uint32_t id, struct session *s)
{
	return session_cmd(nl, KSFT_PERFMON_CMD_SESSION_GET, "session-get", id,
			   session_one_cb, s);
}

int session_del(struct kpm_nl *nl, uint32_t id)
{
	return session_cmd(nl, KSFT_PERFMON_CMD_SESSION_DEL, "session-del", id,
			   NULL, NULL);
}

static int sample_msg_cb(struct nl_msg *msg, void *arg)
{
	struct drain *d = arg;

	if (drain_msg(d, nlmsg_hdr(msg)))
		die("%s", d->error);
	return NL_OK;
}

/* the loaded module is older than changed-only, and refused it */
static bool changed_only_refused;

/*
 * Read every sample from the cursor on, each after the first with only
 * what changed since the one before it: a fraction of the attributes to
 * build and to walk, where most CPUs' counters stay as they were. A
 * module from before changed-only refuses the flag (its policy does not
 * know it); then whole samples, from then on.
 */
int drain(struct kpm_nl *nl, struct drain *d)
{
	struct nl_msg *msg = msg_new(nl, KSFT_PERFMON_CMD_SAMPLE_GET,
					NLM_F_DUMP);
	bool refused = false;
	int err;

	NLA_PUT_U32(msg, KSFT_PERFMON_A_SAMPLE_SESSION_ID, d->s->id);
	NLA_PUT_U64(msg, KSFT_PERFMON_A_SAMPLE_CURSOR, d->cursor);
	if (!changed_only_refused)
		NLA_PUT_FLAG(msg, KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY);
	err = talk_quiet(nl, "sample-get", msg, sample_attr_names,
			 ARRAY_SIZE(sample_attr_names), sample_msg_cb, d,
			 changed_only_refused ? -1 :
			 KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY, &refused);
	if (refused) {
		changed_only_refused = true;
		return drain(nl, d);
	}
	if (!err && drain_end(d))
		die("%s", d->error);
	return err;
nla_put_failure:
	die("out of memory");
}
