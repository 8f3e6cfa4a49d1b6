// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/ksft_perfmon.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink-gen.h"

#include <uapi/linux/ksft_perfmon.h>

/* Integer value ranges */
static const struct netlink_range_validation ksft_perfmon_a_session_interval_range = {
	.min	= KSFT_PERFMON_INTERVAL_MIN,
	.max	= KSFT_PERFMON_INTERVAL_MAX,
};

static const struct netlink_range_validation ksft_perfmon_a_session_ring_size_range = {
	.min	= KSFT_PERFMON_RING_SIZE_MIN,
	.max	= KSFT_PERFMON_RING_SIZE_MAX,
};

static const struct netlink_range_validation ksft_perfmon_a_session_dev_interval_range = {
	.min	= KSFT_PERFMON_INTERVAL_MIN,
	.max	= KSFT_PERFMON_INTERVAL_MAX,
};

/* KSFT_PERFMON_CMD_SESSION_NEW - do */
static const struct nla_policy ksft_perfmon_session_new_nl_policy[KSFT_PERFMON_A_SESSION_DEV_INTERVAL + 1] = {
	[KSFT_PERFMON_A_SESSION_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[KSFT_PERFMON_A_SESSION_INTERVAL] = NLA_POLICY_FULL_RANGE(NLA_UINT, &ksft_perfmon_a_session_interval_range),
	[KSFT_PERFMON_A_SESSION_RING_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U32, &ksft_perfmon_a_session_ring_size_range),
	[KSFT_PERFMON_A_SESSION_CPU_NET] = { .type = NLA_FLAG, },
	[KSFT_PERFMON_A_SESSION_QUEUES] = NLA_POLICY_RANGE(NLA_U32, 1, KSFT_PERFMON_QUEUES_MAX),
	[KSFT_PERFMON_A_SESSION_DEV_INTERVAL] = NLA_POLICY_FULL_RANGE(NLA_UINT, &ksft_perfmon_a_session_dev_interval_range),
};

/* KSFT_PERFMON_CMD_SESSION_GET - do */
static const struct nla_policy ksft_perfmon_session_get_nl_policy[KSFT_PERFMON_A_SESSION_ID + 1] = {
	[KSFT_PERFMON_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KSFT_PERFMON_CMD_SESSION_DEL - do */
static const struct nla_policy ksft_perfmon_session_del_nl_policy[KSFT_PERFMON_A_SESSION_ID + 1] = {
	[KSFT_PERFMON_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* KSFT_PERFMON_CMD_SAMPLE_GET - dump */
static const struct nla_policy ksft_perfmon_sample_get_nl_policy[KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY + 1] = {
	[KSFT_PERFMON_A_SAMPLE_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[KSFT_PERFMON_A_SAMPLE_CURSOR] = { .type = NLA_UINT, },
	[KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY] = { .type = NLA_FLAG, },
};

/* Ops table for ksft_perfmon */
static const struct genl_split_ops ksft_perfmon_nl_ops[] = {
	{
		.cmd		= KSFT_PERFMON_CMD_SESSION_NEW,
		.doit		= ksft_perfmon_nl_session_new_doit,
		.policy		= ksft_perfmon_session_new_nl_policy,
		.maxattr	= KSFT_PERFMON_A_SESSION_DEV_INTERVAL,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KSFT_PERFMON_CMD_SESSION_GET,
		.doit		= ksft_perfmon_nl_session_get_doit,
		.policy		= ksft_perfmon_session_get_nl_policy,
		.maxattr	= KSFT_PERFMON_A_SESSION_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= KSFT_PERFMON_CMD_SESSION_GET,
		.start	= ksft_perfmon_nl_session_get_start,
		.dumpit	= ksft_perfmon_nl_session_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= KSFT_PERFMON_CMD_SESSION_DEL,
		.doit		= ksft_perfmon_nl_session_del_doit,
		.policy		= ksft_perfmon_session_del_nl_policy,
		.maxattr	= KSFT_PERFMON_A_SESSION_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KSFT_PERFMON_CMD_SAMPLE_GET,
		.start		= ksft_perfmon_nl_sample_get_start,
		.dumpit		= ksft_perfmon_nl_sample_get_dumpit,
		.done		= ksft_perfmon_nl_sample_get_done,
		.policy		= ksft_perfmon_sample_get_nl_policy,
		.maxattr	= KSFT_PERFMON_A_SAMPLE_CHANGED_ONLY,
		.flags		= GENL_CMD_CAP_DUMP,
	},
};

struct genl_family ksft_perfmon_nl_family __ro_after_init = {
	.name		= KSFT_PERFMON_FAMILY_NAME,
	.version	= KSFT_PERFMON_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= ksft_perfmon_nl_ops,
	.n_split_ops	= ARRAY_SIZE(ksft_perfmon_nl_ops),
};
