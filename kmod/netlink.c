// SPDX-License-Identifier: GPL-2.0
/*
 * The ksft_perfmon generic netlink family. Policies and the op table are
 * generated from Documentation/netlink/specs/ksft_perfmon.yaml into
 * netlink-gen.c; this file has the session commands' handlers, the
 * netlink notifier and the family's registration, and netlink-sample.c
 * has sample-get's.
 */

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "compat.h"
#include "kpm.h"
#include "netlink-gen.h"

/* dump position of session-get, in cb->ctx */
struct kpm_nl_session_ctx {
	unsigned long id;
	bool admin;	/* the requester may see every session */
};

/*
 * The socket that owns a session, and whoever has CAP_NET_ADMIN in the
 * initial user namespace (@admin: netlink_capable() of the request, asked
 * once a request), may access it. The owner is the socket itself, not its
 * port, which another socket may bind once the owner is released.
 */
static bool kpm_nl_may_access(const struct kpm_session *s,
			      const struct sk_buff *skb, bool admin)
{
	return admin || (s->owner && s->owner == NETLINK_CB(skb).sk);
}

/* Find session @id for the sender of @skb. Context: under kpm_mutex. */
struct kpm_session *
kpm_nl_session_find(const struct sk_buff *skb, const struct nlattr *attr,
		    struct netlink_ext_ack *extack)
{
	struct kpm_session *s;

	lockdep_assert_held(&kpm_mutex);
	s = xa_load(&kpm_sessions, nla_get_u32(attr));
	if (!s || !kpm_nl_may_access(s, skb,
				     s->owner != NETLINK_CB(skb).sk &&
				     netlink_capable(skb, CAP_NET_ADMIN))) {
		/* the same answer, so as not to tell whether it exists */
		NL_SET_ERR_MSG_ATTR(extack, attr, "no such session");
		return NULL;
	}
	return s;
}

static int kpm_nl_session_fill(struct sk_buff *skb, struct kpm_session *s,
			       const struct genl_info *info)
{
	struct kpm_counts c;
	void *hdr;
	u32 i;

	hdr = genlmsg_iput(skb, info);
	if (!hdr)
		return -EMSGSIZE;

	kpm_session_counters(s, &c);

	if (nla_put_u32(skb, KSFT_PERFMON_A_SESSION_ID, s->id) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SESSION_INTERVAL, s->interval_ns) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_SESSION_RING_SIZE, s->ring_size) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_SESSION_CPUS, nr_cpu_ids) ||
	    nla_put_u32(skb, KSFT_PERFMON_A_SESSION_SAMPLE_SIZE,
			s->sample_size) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SESSION_SAMPLES, c.samples) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SESSION_LOST, c.lost) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SESSION_COST, c.cost_ns) ||
	    nla_put_uint(skb, KSFT_PERFMON_A_SESSION_MISSED, c.missed) ||
	    (s->ndevs &&
	     (nla_put_uint(skb, KSFT_PERFMON_A_SESSION_DEV_INTERVAL,
			   s->dev_interval_ns) ||
	      nla_put_uint(skb, KSFT_PERFMON_A_SESSION_DEV_MISSED,
			   c.dev_missed))) ||
	    ((s->sample_flags & KPM_SAMPLE_CPU_NET) &&
	     nla_put_flag(skb, KSFT_PERFMON_A_SESSION_CPU_NET)) ||
	    (s->nqueues &&
	     (nla_put_u32(skb, KSFT_PERFMON_A_SESSION_QUEUES, s->nqueues) ||
	      nla_put_uint(skb, KSFT_PERFMON_A_SESSION_QSTATS_SKIPPED,
			   c.qstats_skipped))))
		goto err_cancel_msg;
	for (i = 0; i < s->ndevs; i++)
		if (nla_put_u32(skb, KSFT_PERFMON_A_SESSION_IFINDEX,
				s->devs[i].ifindex))
			goto err_cancel_msg;

	genlmsg_end(skb, hdr);
	return 0;

err_cancel_msg:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * ksft_perfmon_nl_session_new_doit() - create a session
 * @skb: request
 * @info: request info
 *
 * Context: process. Takes kpm_mutex.
 *
 * Return: 0 or a negative errno, with extack set.
 */
int ksft_perfmon_nl_session_new_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct kpm_session_cfg cfg = {};
	const struct nlattr *a;
	struct sk_buff *rsp;
	u64 cookie;
	void *hdr;
	int rem, err;
	u32 i, id;

	if (GENL_REQ_ATTR_CHECK(info, KSFT_PERFMON_A_SESSION_INTERVAL) ||
	    GENL_REQ_ATTR_CHECK(info, KSFT_PERFMON_A_SESSION_RING_SIZE))
		return -EINVAL;

	cfg.interval_ns = nla_get_uint(info->attrs[KSFT_PERFMON_A_SESSION_INTERVAL]);
	cfg.interval_attr = info->attrs[KSFT_PERFMON_A_SESSION_INTERVAL];
	cfg.ring_size = nla_get_u32(info->attrs[KSFT_PERFMON_A_SESSION_RING_SIZE]);
	cfg.ring_size_attr = info->attrs[KSFT_PERFMON_A_SESSION_RING_SIZE];
	if (nla_get_flag(info->attrs[KSFT_PERFMON_A_SESSION_CPU_NET]))
		cfg.flags |= KPM_SAMPLE_CPU_NET;

	nlmsg_for_each_attr_type(a, KSFT_PERFMON_A_SESSION_IFINDEX, info->nlhdr,
				 GENL_HDRLEN, rem) {
		u32 ifindex = nla_get_u32(a);

		if (cfg.ndevs == KSFT_PERFMON_DEVS_MAX) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, a,
						"more than %u netdevs",
						KSFT_PERFMON_DEVS_MAX);
			return -E2BIG;
		}
		for (i = 0; i < cfg.ndevs; i++) {
			if (cfg.ifindex[i] == ifindex) {
				NL_SET_ERR_MSG_ATTR(info->extack, a,
						    "netdev given twice");
				return -EINVAL;
			}
		}
		cfg.ifindex_attr[cfg.ndevs] = a;
		cfg.ifindex[cfg.ndevs++] = ifindex;
	}
	a = info->attrs[KSFT_PERFMON_A_SESSION_QUEUES];
	if (a && !cfg.ndevs) {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "queues of no netdev: give an ifindex");
		return -EINVAL;
	}
	if (a)
		cfg.nqueues = nla_get_u32(a);
	a = info->attrs[KSFT_PERFMON_A_SESSION_DEV_INTERVAL];
	if (a && !cfg.ndevs) {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "dev-interval of no netdev: give an ifindex");
		return -EINVAL;
	}
	cfg.dev_interval_ns = a ? nla_get_uint(a) : cfg.interval_ns;
	cfg.dev_interval_attr = a;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	hdr = genlmsg_iput(rsp, info);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free_msg;
	}

	err = kpm_session_new(net, &cfg, NETLINK_CB(skb).sk, info->snd_portid,
			      &id, &cookie, info->extack);
	if (err)
		goto err_free_msg;
	/* cannot fail: the message is empty and of the default size */
	nla_put_u32(rsp, KSFT_PERFMON_A_SESSION_ID, id);
	genlmsg_end(rsp, hdr);
	/*
	 * A reply that cannot be sent (the socket's receive buffer full)
	 * leaves the requester with an error and no id: no session either,
	 * or it would hold its slot and ring until the socket closes.
	 */
	err = genlmsg_reply(rsp, info);
	if (err)
		kpm_session_destroy_cookie(id, cookie);
	return err;

err_free_msg:
	nlmsg_free(rsp);
	return err;
}

/**
 * ksft_perfmon_nl_session_get_doit() - get one session
 * @skb: request
 * @info: request info
 *
 * Context: process. Takes kpm_mutex, then the session's lock.
 *
 * Return: 0 or a negative errno, with extack set.
 */
int ksft_perfmon_nl_session_get_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct kpm_session *s;
	struct sk_buff *rsp;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KSFT_PERFMON_A_SESSION_ID))
		return -EINVAL;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;

	mutex_lock(&kpm_mutex);
	s = kpm_nl_session_find(skb, info->attrs[KSFT_PERFMON_A_SESSION_ID],
				info->extack);
	err = s ? kpm_nl_session_fill(rsp, s, info) : -ENOENT;
	mutex_unlock(&kpm_mutex);
	if (err)
		goto err_free_msg;

	return genlmsg_reply(rsp, info);

err_free_msg:
	nlmsg_free(rsp);
	return err;
}

/**
 * ksft_perfmon_nl_session_get_start() - decide what a session dump shows
 * @cb: dump state
 *
 * Whether the requester may see every session, asked once for the whole
 * dump, of the task that sent the request (netlink_capable() checks the
 * current task, which a dump's later parts may not run in), rather than
 * for every session of every part: a capability check that fails may be
 * audited.
 *
 * Context: process, the requester's (sendmsg()).
 *
 * Return: 0.
 */
int ksft_perfmon_nl_session_get_start(struct netlink_callback *cb)
{
	struct kpm_nl_session_ctx *ctx = (void *)cb->ctx;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	ctx->admin = netlink_capable(cb->skb, CAP_NET_ADMIN);
	return 0;
}

/**
 * ksft_perfmon_nl_session_get_dumpit() - dump the sessions one may access
 * @skb: reply
 * @cb: dump state; the position is a session id
 *
 * Context: process. Takes kpm_mutex, then each session's lock.
 *
 * Return: the length of @skb, 0 at the end, or a negative errno.
 */
int ksft_perfmon_nl_session_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb)
{
	struct kpm_nl_session_ctx *ctx = (void *)cb->ctx;
	struct kpm_session *s;
	int err = 0;

	mutex_lock(&kpm_mutex);
	xa_for_each_start(&kpm_sessions, ctx->id, s, ctx->id) {
		if (!kpm_nl_may_access(s, cb->skb, ctx->admin))
			continue;
		err = kpm_nl_session_fill(skb, s, genl_info_dump(cb));
		if (err)
			break;
	}
	mutex_unlock(&kpm_mutex);
	return err;
}

/**
 * ksft_perfmon_nl_session_del_doit() - stop and free a session
 * @skb: request
 * @info: request info
 *
 * Context: process. Takes kpm_mutex.
 *
 * Return: 0 or a negative errno, with extack set.
 */
int ksft_perfmon_nl_session_del_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct kpm_session *s;

	if (GENL_REQ_ATTR_CHECK(info, KSFT_PERFMON_A_SESSION_ID))
		return -EINVAL;

	mutex_lock(&kpm_mutex);
	s = kpm_nl_session_find(skb, info->attrs[KSFT_PERFMON_A_SESSION_ID],
				info->extack);
	if (s)
		kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);

	return s ? 0 : -ENOENT;
}

/**
 * kpm_nl_notify() - destroy the sessions of a netlink socket that closes
 * @nb: notifier block
 * @event: netlink event
 * @ptr: struct netlink_notify
 *
 * NETLINK_URELEASE comes after the socket left the netlink table, so a new
 * socket could take its port in between: the sessions to destroy are
 * those whose owner was released, whatever its port.
 *
 * Context: process (blocking notifier chain). Takes kpm_mutex.
 *
 * Return: NOTIFY_DONE.
 */
static int kpm_nl_notify(struct notifier_block *nb, unsigned long event,
			 void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC)
		kpm_session_destroy_released();
	return NOTIFY_DONE;
}

static struct notifier_block kpm_nl_notifier = {
	.notifier_call = kpm_nl_notify,
};

int kpm_nl_init(void)
{
	int err;

	err = netlink_register_notifier(&kpm_nl_notifier);
	if (err)
		return err;

	err = genl_register_family(&ksft_perfmon_nl_family);
	if (err)
		goto err_unreg_notifier;
	return 0;

err_unreg_notifier:
	netlink_unregister_notifier(&kpm_nl_notifier);
	return err;
}

void kpm_nl_exit(void)
{
	genl_unregister_family(&ksft_perfmon_nl_family);
	netlink_unregister_notifier(&kpm_nl_notifier);
}
