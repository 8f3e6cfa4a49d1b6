/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/ksft_perfmon.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_KSFT_PERFMON_GEN_H
#define _LINUX_KSFT_PERFMON_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/ksft_perfmon.h>

int ksft_perfmon_nl_session_get_start(struct netlink_callback *cb);
int ksft_perfmon_nl_sample_get_start(struct netlink_callback *cb);
int ksft_perfmon_nl_sample_get_done(struct netlink_callback *cb);

int ksft_perfmon_nl_session_new_doit(struct sk_buff *skb,
				     struct genl_info *info);
int ksft_perfmon_nl_session_get_doit(struct sk_buff *skb,
				     struct genl_info *info);
int ksft_perfmon_nl_session_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb);
int ksft_perfmon_nl_session_del_doit(struct sk_buff *skb,
				     struct genl_info *info);
int ksft_perfmon_nl_sample_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb);

extern struct genl_family ksft_perfmon_nl_family;

#endif /* _LINUX_KSFT_PERFMON_GEN_H */
