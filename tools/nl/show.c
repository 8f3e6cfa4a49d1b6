// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl show": the sessions this socket may see, a line or a
 * JSON object each.
 */

#include "nl-cmd.h"

/* a count of a session, by the spec's name of its attribute */
struct count {
	const char *key;
	uint64_t v;
};

/* @n counts, their keys in sort_keys order */
static void counts_json(struct jw *w, const struct count *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		jw_key(w, c[i].key);
		jw_uint(w, c[i].v);
	}
}

static void show_json(struct jw *w, const struct session *s)
{
	/* sort_keys order: the counts before "ifindex", and after it */
	const struct count before[] = {
		{ "cost", s->cost }, { "cpus", s->cpus }, { "id", s->id },
	};
	const struct count after[] = {
		{ "interval", s->interval }, { "lost", s->lost },
		{ "missed", s->missed }, { "ring-size", s->ring_size },
		{ "sample-size", s->sample_size }, { "samples", s->samples },
	};
	unsigned int i;

	jw_obj_start(w);
	counts_json(w, before, ARRAY_SIZE(before));
	jw_key(w, "ifindex");
	jw_arr_start(w);
	for (i = 0; i < s->ndevs; i++)
		jw_uint(w, s->ifindex[i]);
	jw_arr_end(w);
	counts_json(w, after, ARRAY_SIZE(after));
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
