// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl dump": the samples in a session's ring, as JSON
 * (raw.c), a line each or one array with -j.
 */

#include "nl-cmd.h"

/* the sample_fn of dump: into the -j array, or a line each */
static void dump_sample(struct drain *d, const struct sample *smp)
{
	if (d->arg)
		sample_json(d->arg, d->s, smp);
	else
		sample_json_line(stdout, d->s, smp);
}

int do_dump(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &dump_cmd };
	uint64_t id = 0, cursor = 0;
	struct jw jw, *w;
	struct kpm_nl nl;
	struct session s;
	struct drain d;
	int opt;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0) {
		if (opt == 'n')
			id = parse_u64("--id", optarg, UINT32_MAX);
		else if (opt == 'c')
			cursor = parse_u64("--cursor", optarg, UINT64_MAX);
		else
			json_opt(opt);
	}
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (!id || optind < argc) {
		kpm_usage_error(&dump_cmd);
		return EXIT_USAGE;
	}
	kpm_nl_open(&nl);
	if (session_get(&nl, id, &s))
		return EXIT_ERROR;
	w = json_out_start(&jw);
	if (drain_init(&d, &s, dump_sample, w))
		die("out of memory");
	d.cursor = cursor;
	if (drain(&nl, &d))
		return EXIT_ERROR;
	json_out_end(w);
	return 0;
}
