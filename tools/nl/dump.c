// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl dump": the samples in a session's ring, as JSON
 * (raw.c), a line each or one array with -j.
 */

#include <getopt.h>

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
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'n' },
		{ "cursor", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const char usage[] =
		"usage: " PROG " dump --id N [--cursor SEQ] [-j] [-p]\n\n"
		"Print the samples of session N that are in its ring, from\n"
		"sequence number SEQ on, one JSON object a line (times in ns).\n\n";
	uint64_t id = 0, cursor = 0;
	struct jw jw, *w;
	struct kpm_nl nl;
	struct session s;
	struct drain d;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:c:jph", opts, NULL)) != -1) {
		if (!json_opt(opt))
			continue;
		switch (opt) {
		case 'n':
			id = parse_u64("--id", optarg, UINT32_MAX);
			break;
		case 'c':
			cursor = parse_u64("--cursor", optarg, UINT64_MAX);
			break;
		case 'h':
			printf("%s  -n, --id N            the session\n"
			       "  -c, --cursor SEQ      the first sequence number (default 0)\n"
			       "%s  -h, --help            this text\n", usage, json_opts_help);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (!id || optind < argc) {
		fputs(usage, stderr);
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
