// SPDX-License-Identifier: GPL-2.0
/*
 * Talking to the ksft_perfmon family with libnl-genl-3: what the tool and
 * the selftests share.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>

#include "nl.h"

const char *const kpm_dev_stat_names[KPM_DEV_NR_STATS] = {
	"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors",
	"tx_errors", "rx_dropped", "tx_dropped", "multicast", "collisions",
	"rx_length_errors", "rx_over_errors", "rx_crc_errors",
	"rx_frame_errors", "rx_fifo_errors", "rx_missed_errors",
	"tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",
	"tx_heartbeat_errors", "tx_window_errors", "rx_compressed",
	"tx_compressed", "rx_nohandler", "rx_otherhost_dropped",
};

const char *const kpm_qstat_names[KPM_QSTAT_NR] = {
	"rx_packets", "rx_bytes", "rx_alloc_fail", "rx_hw_drops",
	"rx_hw_drop_overruns", "rx_csum_complete", "rx_csum_unnecessary",
	"rx_csum_none", "rx_csum_bad", "rx_hw_gro_packets", "rx_hw_gro_bytes",
	"rx_hw_gro_wire_packets", "rx_hw_gro_wire_bytes",
	"rx_hw_drop_ratelimits", "tx_packets", "tx_bytes", "tx_hw_drops",
	"tx_hw_drop_errors", "tx_csum_none", "tx_needs_csum",
	"tx_hw_gso_packets", "tx_hw_gso_bytes", "tx_hw_gso_wire_packets",
	"tx_hw_gso_wire_bytes", "tx_hw_drop_ratelimits", "tx_stop", "tx_wake",
};

struct kpm_talk {
	struct kpm_ack *ack;
	struct nl_msg *req;	/* to find the attribute extack points at */
	bool done;
};

/* The extended ACK's TLVs that follow an error: its message, the
 * attribute it names.
 */
static void kpm_nl_ext_ack(struct kpm_talk *t, struct nlattr *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	struct kpm_ack *ack = t->ack;

	if (len <= 0)
		return;
	nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL);
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(ack->msg, sizeof(ack->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		ack->miss_attr = nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	if (tb[NLMSGERR_ATTR_OFFS]) {
		struct nlmsghdr *req = nlmsg_hdr(t->req);
		uint32_t offs = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);

		if (offs >= NLMSG_HDRLEN + GENL_HDRLEN &&
		    offs + NLA_HDRLEN <= req->nlmsg_len)
			ack->bad_attr =
				nla_type((struct nlattr *)((char *)req + offs));
	}
}

/* An error ACK: its errno and, with NLM_F_ACK_TLVS, the extended ACK. */
static int kpm_nl_error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
			   void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct kpm_talk *t = arg;
	int hlen = sizeof(*e);

	(void)nla;
	t->done = true;
	t->ack->err = e->error;
	t->ack->from_kernel = true;
	/* without NETLINK_CAP_ACK the request comes back before the TLVs */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		kpm_nl_ext_ack(t, (struct nlattr *)((char *)e + hlen),
			       nlh->nlmsg_len - NLMSG_HDRLEN - hlen);
	return NL_STOP;
}

/*
 * The ACK of a request, or the NLMSG_DONE that ends a dump. A dump that
 * fails part way ends with an NLMSG_DONE that carries its errno, and the
 * extended ACK after it.
 */
static int kpm_nl_done_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct kpm_talk *t = arg;
	int err, len;

	t->done = true;
	len = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (nlh->nlmsg_type != NLMSG_DONE || len < (int)sizeof(err))
		return NL_STOP;
	memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err >= 0)
		return NL_STOP;
	t->ack->err = err;
	t->ack->from_kernel = true;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		kpm_nl_ext_ack(t, (struct nlattr *)((char *)nlmsg_data(nlh) +
						    NLA_ALIGN(sizeof(err))),
			       len - NLA_ALIGN(sizeof(err)));
	return NL_STOP;
}

/*
 * A socket whose reads are at most @bufsize bytes (0: libnl's default),
 * from the first one on: netlink makes a dump's skbs as large as the
 * largest read on the socket so far.
 */
struct nl_sock *kpm_nl_socket_sized(int *family, size_t bufsize)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk)
		return NULL;
	if ((bufsize && nl_socket_set_msg_buf_size(sk, bufsize)) ||
	    genl_connect(sk)) {
		nl_socket_free(sk);
		return NULL;
	}
	/* let the kernel say what is wrong, and not echo the request */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
		   sizeof(one));
	*family = genl_ctrl_resolve(sk, KSFT_PERFMON_FAMILY_NAME);
	return sk;
}

/*
 * Reads of 32 KiB, the most netlink puts in one skb of a dump: a read
 * takes all of it, in one recvmsg(). libnl's default is 16 KiB read
 * after a MSG_PEEK that sizes it, two calls a read.
 */
struct nl_sock *kpm_nl_socket(int *family)
{
	return kpm_nl_socket_sized(family, 32768);
}

struct nl_msg *kpm_nl_msg(int family, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
				flags, cmd, KSFT_PERFMON_FAMILY_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

static int kpm_nl_socket_error(struct kpm_ack *ack, int nl_err)
{
	ack->err = -EIO;
	snprintf(ack->msg, sizeof(ack->msg), "%s", nl_geterror(nl_err));
	return ack->err;
}

int kpm_nl_talk(struct nl_sock *sk, struct nl_msg *msg,
		nl_recvmsg_msg_cb_t valid, void *arg, struct kpm_ack *ack)
{
	struct kpm_talk t = { .ack = ack, .req = msg };
	struct nl_cb *cb;
	int err;

	memset(ack, 0, sizeof(*ack));
	ack->bad_attr = -1;
	ack->miss_attr = -1;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return kpm_nl_socket_error(ack, -NLE_NOMEM);
	}
	nl_cb_err(cb, NL_CB_CUSTOM, kpm_nl_error_cb, &t);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, kpm_nl_done_cb, &t);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, kpm_nl_done_cb, &t);
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);

	err = nl_send_auto(sk, msg);
	if (err < 0)
		kpm_nl_socket_error(ack, err);
	/*
	 * libnl's nl_recvmsgs() returns after a reply without reading the
	 * ACK that follows it in a datagram of its own.
	 */
	while (err >= 0 && !t.done) {
		err = nl_recvmsgs(sk, cb);
		if (err < 0 && !t.done)
			kpm_nl_socket_error(ack, err);
	}
	nl_cb_put(cb);
	nlmsg_free(msg);
	return ack->err;
}

uint64_t kpm_nla_get_uint(const struct nlattr *a)
{
	if (!a)
		return 0;
	return nla_len(a) == 8 ? nla_get_u64((struct nlattr *)a) :
				 nla_get_u32((struct nlattr *)a);
}

int kpm_nl_dump_running(struct nl_sock *sk)
{
	unsigned int proto, portid, dump;
	FILE *f = fopen("/proc/net/netlink", "r");
	char line[256];
	int running = -1;

	if (!f)
		return -1;
	/* sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %u %u %*s %*s %*s %u", &proto, &portid,
			   &dump) == 3 && proto == NETLINK_GENERIC &&
		    portid == nl_socket_get_local_port(sk))
			running = !!dump;
	fclose(f);
	return running;
}

int kpm_nr_sessions(void)
{
	FILE *f = fopen("/sys/kernel/debug/ksft_perfmon/sessions", "r");
	int lines = 0, c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		lines += c == '\n';
	fclose(f);
	return lines - 1;	/* a header line */
}
