// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: creation with its limits, the netdev references they hold,
 * and destruction.
 */

#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "compat.h"
#include "kpm.h"

/* Serializes creation, lookup and destruction of sessions. */
DEFINE_MUTEX(kpm_mutex);
DEFINE_XARRAY_ALLOC1(kpm_sessions);

static u32 kpm_next_id;
static unsigned int kpm_nr_sessions;	/* under kpm_mutex */
static size_t kpm_mem;			/* ring bytes, under kpm_mutex */

/**
 * kpm_session_first_seq() - oldest sample still in the ring
 * @s: session
 *
 * Context: any, under @s->lock.
 * Return: the sequence number of the oldest sample in the ring; equal to
 * @s->head when the ring is empty.
 */
u64 kpm_session_first_seq(const struct kpm_session *s)
{
	return s->head > s->ring_size ? s->head - s->ring_size : 0;
}

/**
 * kpm_session_sample() - find a sample in the ring
 * @s: session
 * @seq: sequence number, from kpm_session_first_seq() to below @s->head
 *
 * Context: any, under @s->lock.
 * Return: the slot that holds sample @seq.
 */
struct kpm_sample *kpm_session_sample(struct kpm_session *s, u64 seq)
{
	u32 back = s->head - seq;	/* 1 .. ring_size */
	u32 slot;

	slot = s->head_slot >= back ? s->head_slot - back :
				      s->head_slot + s->ring_size - back;
	return s->ring + (size_t)slot * s->sample_size;
}

static void kpm_session_put_devs(struct kpm_session *s)
{
	u32 i;

	for (i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev)
			netdev_put(s->devs[i].dev, &s->devs[i].tracker);
}

static int kpm_session_get_devs(struct kpm_session *s, struct net *net,
				const struct kpm_session_cfg *cfg,
				struct netlink_ext_ack *extack)
{
	u32 i;

	for (i = 0; i < cfg->ndevs; i++) {
		struct kpm_dev *d = &s->devs[i];

		d->ifindex = cfg->ifindex[i];
		d->dev = netdev_get_by_index(net, d->ifindex, &d->tracker,
					     GFP_KERNEL);
		if (!d->dev) {
			NL_SET_ERR_MSG_ATTR(extack, cfg->ifindex_attr[i],
					    "no netdev with this ifindex in the network namespace");
			return -ENODEV;
		}
	}
	return 0;
}

/**
 * kpm_session_new() - create a session and start sampling
 * @net: network namespace the ifindexes of @cfg are in
 * @cfg: what to sample; validated against the spec's bounds by the caller
 * @portid: netlink port of the owning socket, or 0 for none
 * @extack: where to report errors
 *
 * Context: process, takes kpm_mutex. The netdevs are looked up under
 * kpm_mutex, which kpm_netdev_event() takes too, so a netdev cannot be
 * unregistered between the lookup and the session becoming visible.
 *
 * Return: the new session, or an ERR_PTR().
 */
struct kpm_session *kpm_session_new(struct net *net,
				    const struct kpm_session_cfg *cfg,
				    u32 portid, struct netlink_ext_ack *extack)
{
	u32 sample_size = kpm_sample_size(cfg->ndevs);
	struct xa_limit limit = XA_LIMIT(1, U32_MAX);
	struct kpm_session *s;
	size_t ring_bytes;
	int err;

	ring_bytes = array_size(sample_size, cfg->ring_size);
	if (ring_bytes > KPM_SESSION_MEM_MAX) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->ring_size_attr,
					"ring of %zu bytes is over the %lu byte limit of a session",
					ring_bytes, KPM_SESSION_MEM_MAX);
		return ERR_PTR(-EINVAL);
	}

	s = kzalloc(struct_size(s, devs, cfg->ndevs), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->ndevs = cfg->ndevs;
	s->interval_ns = cfg->interval_ns;
	s->ring_size = cfg->ring_size;
	s->sample_size = sample_size;
	spin_lock_init(&s->lock);
	kpm_hrtimer_setup(&s->timer, kpm_sampler_fn, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL_SOFT);

	mutex_lock(&kpm_mutex);
	if (kpm_nr_sessions >= KPM_SESSIONS_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "already %u sessions, the limit",
				   KPM_SESSIONS_MAX);
		err = -ENOSPC;
		goto err_unlock;
	}
	if (kpm_mem + ring_bytes > KPM_TOTAL_MEM_MAX) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, cfg->ring_size_attr,
					"ring of %zu bytes is over the %lu bytes left of the module's limit",
					ring_bytes, KPM_TOTAL_MEM_MAX - kpm_mem);
		err = -ENOSPC;
		goto err_unlock;
	}

	s->ring = kvzalloc(ring_bytes, GFP_KERNEL_ACCOUNT);
	if (!s->ring) {
		err = -ENOMEM;
		goto err_unlock;
	}

	err = kpm_session_get_devs(s, net, cfg, extack);
	if (err)
		goto err_put_devs;

	err = xa_alloc_cyclic(&kpm_sessions, &s->id, s, limit, &kpm_next_id,
			      GFP_KERNEL);
	if (err < 0)
		goto err_put_devs;

	kpm_nr_sessions++;
	kpm_mem += ring_bytes;
	s->net = net;
	s->portid = portid;
	/* the first sample, at once, is the baseline of the session */
	hrtimer_start(&s->timer, 0, HRTIMER_MODE_REL_SOFT);
	mutex_unlock(&kpm_mutex);
	return s;

err_put_devs:
	kpm_session_put_devs(s);
	kvfree(s->ring);
err_unlock:
	mutex_unlock(&kpm_mutex);
	kfree(s);
	return ERR_PTR(err);
}

/**
 * kpm_session_destroy() - stop a session and free it
 * @s: session
 *
 * Context: process, under kpm_mutex.
 */
void kpm_session_destroy(struct kpm_session *s)
{
	lockdep_assert_held(&kpm_mutex);

	xa_erase(&kpm_sessions, s->id);
	kpm_nr_sessions--;
	kpm_mem -= (size_t)s->sample_size * s->ring_size;

	hrtimer_cancel(&s->timer);
	kpm_session_put_devs(s);
	kvfree(s->ring);
	kfree(s);
}

/**
 * kpm_session_destroy_all() - destroy every session
 *
 * Context: process, takes kpm_mutex.
 */
void kpm_session_destroy_all(void)
{
	struct kpm_session *s;
	unsigned long id;

	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s)
		kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);
}

/**
 * kpm_session_destroy_owned() - destroy the sessions of a netlink socket
 * @net: network namespace of the socket
 * @portid: its port
 *
 * Context: process, takes kpm_mutex.
 */
void kpm_session_destroy_owned(struct net *net, u32 portid)
{
	struct kpm_session *s;
	unsigned long id;

	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s)
		if (s->portid == portid && net_eq(s->net, net))
			kpm_session_destroy(s);
	mutex_unlock(&kpm_mutex);
}

/**
 * kpm_netdev_event() - drop the references to a netdev that goes away
 * @nb: notifier block
 * @event: netdev event
 * @ptr: netdev notifier info
 *
 * NETDEV_UNREGISTER comes both when a netdev is unregistered and when it
 * leaves its network namespace; either way the ifindex no longer means it,
 * so the sessions that sample it go on without it and report it as gone.
 *
 * Context: process, under RTNL. Takes kpm_mutex, then each session's lock.
 *
 * Return: NOTIFY_DONE.
 */
static int kpm_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct kpm_session *s;
	unsigned long id;
	u32 i;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	mutex_lock(&kpm_mutex);
	xa_for_each(&kpm_sessions, id, s) {
		for (i = 0; i < s->ndevs; i++) {
			struct kpm_dev *d = &s->devs[i];

			if (d->dev != dev)
				continue;
			spin_lock_bh(&s->lock);
			d->dev = NULL;
			spin_unlock_bh(&s->lock);
			netdev_put(dev, &d->tracker);
		}
	}
	mutex_unlock(&kpm_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kpm_netdev_nb = {
	.notifier_call = kpm_netdev_event,
};

int kpm_session_init(void)
{
	return register_netdevice_notifier(&kpm_netdev_nb);
}

void kpm_session_exit(void)
{
	kpm_session_destroy_all();
	unregister_netdevice_notifier(&kpm_netdev_nb);
}
