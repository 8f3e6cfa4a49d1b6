/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Talking to the ksft_perfmon family with libnl-genl-3: what the tool and
 * the selftests share.
 */
#ifndef KPM_NL_H
#define KPM_NL_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/ksft_perfmon.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

/* The counters of a netdev in the order of their attributes. */
#define KPM_DEV_NR_STATS (KSFT_PERFMON_A_DEV_STATS_RX_OTHERHOST_DROPPED - \
			  KSFT_PERFMON_A_DEV_STATS_GONE)
extern const char *const kpm_dev_stat_names[KPM_DEV_NR_STATS];
/*
 * The counters of queue statistics in the order of their attributes, the
 * queue map's attributes after them.
 */
#define KPM_QSTAT_NR (KSFT_PERFMON_A_QSTATS_TX_WAKE - \
		      KSFT_PERFMON_A_QSTATS_SKIPPED)
extern const char *const kpm_qstat_names[KPM_QSTAT_NR];

/* What the ACK of a request said. */
struct kpm_ack {
	int err;		/* 0 or a negative errno */
	bool from_kernel;	/* err came in the ACK, not from the socket */
	char msg[256];		/* extack message, or why the socket failed */
	int bad_attr;		/* attribute type extack points at, or -1 */
	int miss_attr;		/* type of a missing attribute, or -1 */
};

/*
 * A generic netlink socket with extended ACKs, and the family's id in
 * @family (negative when the module is not loaded). NULL on failure.
 */
struct nl_sock *kpm_nl_socket(int *family);
struct nl_sock *kpm_nl_socket_sized(int *family, size_t bufsize);

/* A request of @cmd; NULL when out of memory. */
struct nl_msg *kpm_nl_msg(int family, uint8_t cmd, int flags);

/*
 * Send @msg (and free it), pass each reply to @valid, and receive until the
 * ACK, the end of the dump or an error. Returns @ack->err.
 */
int kpm_nl_talk(struct nl_sock *sk, struct nl_msg *msg,
		nl_recvmsg_msg_cb_t valid, void *arg, struct kpm_ack *ack);

/*
 * Whether the kernel has a dump in progress on @sk, from /proc/net/netlink
 * (its "Dump" column): 1 or 0, or -1 when @sk is not listed.
 */
int kpm_nl_dump_running(struct nl_sock *sk);

/* Sessions listed in debugfs, over all users; -1 if it cannot be read. */
int kpm_nr_sessions(void);

/* The value of an NLA_UINT attribute (4 or 8 bytes); 0 when absent. */
uint64_t kpm_nla_get_uint(const struct nlattr *a);

#endif
