// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl replay": the lines of a record that was killed, from
 * its spool (spool.c).
 */

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "nl-cmd.h"
#include "spool.h"

static const char replay_usage[] =
"usage: " PROG " replay [--raw] FILE\n"
"\n"
"Print the lines of a recording from its spool (record --spool FILE) as\n"
"record prints them, for example after a harness's timeout killed\n"
"record: the samples it had read by then, up to a fifth of a second or\n"
"the drain before the kill. A spool has no end: the kernel's counts of\n"
"lost samples and missed periods are not in it, and gaps in the\n"
"sequence numbers are reported as lost.\n"
"\n"
"      --raw             print the raw samples as dump does\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 1 on an error, 2 on a usage error, 3 when samples were\n"
"lost, else 0.\n";

int do_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct spool_head h;
	bool raw = false, partial;
	uint64_t gaps = 0;
	struct record r;
	char *host;
	FILE *f;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'R':
			raw = true;
			break;
		case 'h':
			fputs(replay_usage, stdout);
			return 0;
		default:
			fputs(replay_usage, stderr);
			return EXIT_USAGE;
		}
	}
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
