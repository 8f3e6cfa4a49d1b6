// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl replay": the lines of a record that was killed, from
 * its spool (spool.c).
 */

#include <errno.h>
#include <string.h>

#include "nl-cmd.h"
#include "spool.h"

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
	record_free(&r);
	free(host);
	fclose(f);
	return gaps ? EXIT_LOST : 0;
}
