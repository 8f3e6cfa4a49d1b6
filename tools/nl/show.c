// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl show": the sessions this socket may see, a line or a
 * JSON object each.
 */

#include "nl-cmd.h"

static void show_json(struct jw *w, const struct session *s)
{
	unsigned int i;

	/* sort_keys order; the spec's attribute names */
	jw_obj_start(w);
	jw_key(w, "cost");
	jw_uint(w, s->cost);
	jw_key(w, "cpus");
	jw_uint(w, s->cpus);
	jw_key(w, "id");
	jw_uint(w, s->id);
	jw_key(w, "ifindex");
	jw_arr_start(w);
	for (i = 0; i < s->ndevs; i++)
		jw_uint(w, s->ifindex[i]);
	jw_arr_end(w);
	jw_key(w, "interval");
	jw_uint(w, s->interval);
	jw_key(w, "lost");
	jw_uint(w, s->lost);
	jw_key(w, "missed");
	jw_uint(w, s->missed);
	jw_key(w, "ring-size");
	jw_uint(w, s->ring_size);
	jw_key(w, "sample-size");
	jw_uint(w, s->sample_size);
	jw_key(w, "samples");
	jw_uint(w, s->samples);
	jw_obj_end(w);
}

static int show_cb(struct nl_msg *msg, void *arg)
{
	struct jw *w = arg;
	struct session s;
	unsigned int i;

	if (session_parse(nlmsg_hdr(msg), &s))
		die("malformed session message from the kernel");
	if (w) {
		show_json(w, &s);
		return NL_OK;
	}
	printf("session %u interval %llu ns ring %u cpus %u sample-size %u samples %llu lost %llu missed %llu cost %llu ns ifindex",
	       s.id, (unsigned long long)s.interval, s.ring_size, s.cpus,
	       s.sample_size, (unsigned long long)s.samples,
	       (unsigned long long)s.lost, (unsigned long long)s.missed,
	       (unsigned long long)s.cost);
	for (i = 0; i < s.ndevs; i++)
		printf("%c%u", i ? ',' : ' ', s.ifindex[i]);
	if (!s.ndevs)
		printf(" -");
	putchar('\n');
	return NL_OK;
}

static const struct kpm_opt show_opts[] = {
	{ .group = json_opts },
	{}
};

static const struct kpm_cmd show_cmd = {
	.usage = "usage: " PROG " show [-j] [-p]\n",
	.about = "\nList the sessions this socket may see: its own, or all with CAP_NET_ADMIN.\n\n",
	.opts = show_opts,
	.usage_err = KPM_USAGE_LINE,
	.help_col = HELP_COL,
};

int do_show(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &show_cmd };
	struct jw jw, *w;
	struct kpm_nl nl;
	int opt, err;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0)
		json_opt(opt);
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (optind < argc) {
		kpm_usage_error(&show_cmd);
		return EXIT_USAGE;
	}
	kpm_nl_open(&nl);
	w = json_out_start(&jw);
	err = talk(&nl, "session-get",
		   msg_new(&nl, KSFT_PERFMON_CMD_SESSION_GET, NLM_F_DUMP),
		   session_attr_names, ARRAY_SIZE(session_attr_names),
		   show_cb, w);
	if (err)
		return EXIT_ERROR;
	json_out_end(w);
	return 0;
}
