// SPDX-License-Identifier: GPL-2.0
/*
 * "ksft-perfmon-nl metric": the ktap-metric-json line of a shell test's
 * own scalar observation, its VALUE checked to be a JSON number.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "nl-cmd.h"

/*
 * Whether @s is a JSON number (RFC 8259): 1 for an integer, 0 for one
 * with a fraction or an exponent, -1 for anything else.
 */
static int json_number(const char *s)
{
	bool integer = true;

	s += *s == '-';
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		s += strspn(s, "0123456789");
	else
		return -1;
	if (*s == '.') {
		integer = false;
		if (!isdigit((unsigned char)*++s))
			return -1;
		s += strspn(s, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		integer = false;
		s += s[1] == '+' || s[1] == '-';
		if (!isdigit((unsigned char)*++s))
			return -1;
		s += strspn(s, "0123456789");
	}
	return *s ? -1 : integer;
}

int do_metric(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &metric_cmd };
	const char *host = "local", *name, *value;
	bool have_base = false;
	int integer;
	uint64_t time_base = 0;
	long long ll = 0;
	double v = 0;
	struct jw w;
	char *end;
	int opt;

	while ((opt = kpm_getopt(&g, argc, argv)) > 0) {
		if (opt == 't') {
			time_base = parse_u64("--time-base", optarg,
					      UINT64_MAX);
			have_base = true;
		} else {
			host = parse_label("--host", optarg);
		}
	}
	if (opt < 0)
		return g.help ? 0 : EXIT_USAGE;
	if (!have_base || argc - optind != 2) {
		fprintf(stderr, PROG " metric: give --time-base, NAME and VALUE\n");
		return EXIT_USAGE;
	}
	name = argv[optind];
	value = argv[optind + 1];
	parse_label("NAME", name);
	integer = json_number(value);
	if (integer < 0)
		die("metric: '%s' is not a JSON number", value);
	errno = 0;
	if (integer)
		ll = strtoll(value, &end, 10);
	else
		v = strtod(value, &end);
	/* a float's underflow is the nearest double, as in Python */
	if ((integer && errno) || (!integer && !isfinite(v)))
		die("metric: '%s' is not a finite number%s", value,
		    integer ? " of 64 bits" : "");

	obs_line_start(stdout, &w, host, name, "scalar", now_ns(), time_base);
	if (integer)
		jw_int(&w, ll);
	else
		jw_double(&w, v);
	jw_obj_end(&w);
	putchar('\n');
	return w.error ? EXIT_ERROR : 0;
}
