// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl replay": the lines of a record that was killed, from
 * its spool (spool.c).
 */

#include <errno.h>
#include <string.h>

#include "nl-cmd.h"
#include "spool.h"

static const struct kpm_opt replay_opts[] = {
	{ .name = "raw", .val = 'R', .long_only = true,
	  .help = "print the raw samples as dump does" },
	{}
};

static const struct kpm_cmd replay_cmd = {
	.usage = "usage: " PROG " replay [--raw] FILE\n",
	.about = "\n"
		"Print the lines of a recording from its spool (record --spool FILE) as\n"
		"record prints them, for example after a harness's timeout killed\n"
		"record: the samples it had read by then, up to a fifth of a second or\n"
		"the drain before the kill. A spool has no end: the kernel's counts of\n"
		"lost samples and missed periods are not in it, and gaps in the\n"
		"sequence numbers are reported as lost.\n"
		"\n",
	.opts = replay_opts,
	.more = "\n"
		"Exit status: 1 on an error, 2 on a usage error, 3 when samples were\n"
		"lost, else 0.\n",
	.usage_err = KPM_USAGE_ALL,
	.help_col = HELP_COL,
};

int do_replay(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &replay_cmd };
	struct spool_head h;
	bool raw = false, partial;
	uint64_t gaps = 0;
	struct record r;
	char *host;
	FILE *f;
	int opt;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0)
		raw = true;	/* --raw */
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (argc - optind != 1) {
		fprintf(stderr, PROG " replay: give one FILE\n");
		return EXIT_USAGE;
	}
	f = fopen(argv[optind], "r");
	if (!f)
		die("%s: %s", argv[optind], strerror(errno));
	spool_read_head(f, argv[optind], &h, &host);
	partial = print_spool(f, host, h.time_base, &h.s, h.metrics, raw, true,
			      &r, &gaps);
	printf("# ksft-perfmon: replayed from a spool%s\n",
	       partial ? ", which ends in part of a sample, left out" : "");
	if (gaps)
		printf("# ksft-perfmon: %llu samples lost between the spooled ones\n",
		       (unsigned long long)gaps);
	print_end(&r);
	return gaps ? EXIT_LOST : 0;
}
