// SPDX-License-Identifier: GPL-2.0
/*
 * ksft_perfmon: in-kernel performance monitor for network selftests.
 *
 * Module init and exit, and the session that module parameters start.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/module.h>
#include <linux/netlink.h>
#include <net/net_namespace.h>

#include "kpm.h"

static unsigned int ifindex;
module_param(ifindex, uint, 0444);
MODULE_PARM_DESC(ifindex,
		 "netdev in the initial network namespace that the load-time session samples (0: none)");

static unsigned int interval_ms;
module_param(interval_ms, uint, 0444);
MODULE_PARM_DESC(interval_ms,
		 "start a session at load time that samples every interval_ms (1 to 60000; 0: none, or 1000 when ifindex is set)");

#define KPM_PARAM_RING_SIZE	128

static int __init kpm_start_param_session(void)
{
	struct kpm_session_cfg cfg = {
		.ring_size = KPM_PARAM_RING_SIZE,
	};
	struct netlink_ext_ack extack = {};
	u32 id;
	int err;

	if (!interval_ms && !ifindex)
		return 0;
	if (!interval_ms)
		interval_ms = MSEC_PER_SEC;
	cfg.interval_ns = (u64)interval_ms * NSEC_PER_MSEC;
	if (cfg.interval_ns < KSFT_PERFMON_INTERVAL_MIN ||
	    cfg.interval_ns > KSFT_PERFMON_INTERVAL_MAX) {
		pr_err("interval_ms=%u is out of range 1..%llu\n", interval_ms,
		       div_u64(KSFT_PERFMON_INTERVAL_MAX, NSEC_PER_MSEC));
		return -EINVAL;
	}
	cfg.dev_interval_ns = cfg.interval_ns;
	if (ifindex) {
		cfg.ifindex[0] = ifindex;
		cfg.ndevs = 1;
	}

	err = kpm_session_new(&init_net, &cfg, NULL, 0, &id, NULL, &extack);
	if (err) {
		pr_err("cannot start the session of ifindex=%u interval_ms=%u: %pe%s%s\n",
		       ifindex, interval_ms, ERR_PTR(err),
		       extack._msg ? ": " : "", extack._msg ?: "");
		return err;
	}
	pr_info("session %u samples every %u ms\n", id, interval_ms);
	return 0;
}

/**
 * kpm_init() - start the load-time session, then open the module to users
 *
 * Context: process (module load). The sessions' workqueue and the netdev
 * notifier come first, so no session can exist without them; the generic
 * netlink family and debugfs
 * come last, once nothing can fail: a family or a file registered by a
 * load that then fails would let a dump or an open file reach a module
 * about to be freed (both hold a reference to the module, and a failed
 * load does not wait for it).
 * Return: 0 or a negative errno, with nothing left registered.
 */
static int __init kpm_init(void)
{
	int err;

	err = kpm_session_init();
	if (err)
		return err;

	err = kpm_start_param_session();
	if (err)
		goto err_session_exit;

	err = kpm_nl_init();
	if (err)
		goto err_session_exit;

	/* cannot fail, so after the last step that can */
	kpm_debugfs_init();
	return 0;

err_session_exit:
	/* destroys the load-time session, if there is one */
	kpm_session_exit();
	return err;
}

/**
 * kpm_exit() - unregister everything and destroy the sessions left
 *
 * Context: process (module unload), in the reverse order of kpm_init().
 * debugfs and the family go first, so no reader, request or dump runs
 * any more; an open file and a pending dump hold a module reference, so
 * there is none.
 */
static void __exit kpm_exit(void)
{
	kpm_debugfs_exit();
	kpm_nl_exit();
	/* destroys the sessions left, the load-time one among them */
	kpm_session_exit();
}

module_init(kpm_init);
module_exit(kpm_exit);

MODULE_DESCRIPTION("In-kernel CPU and netdev sampler for network selftests");
MODULE_AUTHOR("ksft_perfmon developers");
MODULE_LICENSE("GPL");
