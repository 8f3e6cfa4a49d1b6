// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-report: what the netdev CI computes from the KTAP metric
 * lines of a run, locally. A summary per test case and series (a metric
 * and all its labels); with --baseline, each series' regression verdict
 * against an earlier run; with --svg, one plot per metric and labels but
 * host.
 *
 * This file: the options, the input read (read.c), a row per series
 * (summary.c), the plots (svg.c), OpenMetrics (openmetrics.c), and the
 * exit status.
 */

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "opts.h"
#include "report.h"

#define EXIT_REGRESSED	1
#define EXIT_INPUT	2	/* usage, lines refused, or output not written */

static const struct kpm_opt report_opts[] = {
	{ .name = "json", .val = 'j',
	  .help = "one JSON object per line instead of a table" },
	{ .name = "baseline", .val = 'b', .arg = "FILE",
	  .help = "compare with an earlier run by each metric's\n"
		  "regression policy; exit 1 on a regression" },
	{ .name = "svg", .val = 's', .arg = "DIR",
	  .help = "write one plot per test case, metric and labels\n"
		  "but host into DIR" },
	{ .name = "html", .val = 'H', .arg = "FILE",
	  .help = "write the run as one self-contained HTML page\n"
		  "into FILE: per test case the table (with the\n"
		  "verdicts against --baseline), the queue balances\n"
		  "and the plots" },
	{ .name = "openmetrics", .val = 'o', .arg = "FILE",
	  .help = "write every observation as an OpenMetrics sample\n"
		  "with its timestamp, and every summary as a gauge,\n"
		  "into FILE (for promtool tsdb create-blocks-from\n"
		  "openmetrics)" },
	{ .name = "run", .val = 'R', .long_only = true, .arg = "ID",
	  .help = "label every sample of FILE run=\"ID\"" },
	{ .name = "kernel", .val = 'K', .long_only = true, .arg = "RELEASE",
	  .help = "label every sample of FILE kernel=\"RELEASE\"" },
	{ .name = "start", .val = 'S', .long_only = true, .arg = "TIME",
	  .help = "the Unix time (seconds) of each case's time 0;\n"
		  "without it, the run ends now: the current time\n"
		  "less the latest time of any observation" },
	{}
};

static const struct kpm_cmd report_cmd = {
	.usage = "usage: " PROG " [--json] [--baseline FILE] [--svg DIR] [--html FILE]\n"
		 "         [--openmetrics FILE [--run ID] [--kernel RELEASE] [--start TIME]]\n"
		 "         [FILE]\n",
	.about = "\n"
		"Reads KTAP output (FILE, or stdin without it or for -) with metric lines\n"
		"at any nesting depth, applies each metric's policy (transform, then\n"
		"aggregation, then summarize) and prints a summary per test case and\n"
		"series: a metric name with all its labels (host and any other key but\n"
		"name, shape, time and value).\n"
		"\n",
	.opts = report_opts,
	.more = "\n"
		"Exit status: 0, 1 when a metric regressed, 2 on a usage error, when an\n"
		"input could not be read, when input lines were refused (each named on\n"
		"stderr; the rest is processed), when a --json row would not be true\n"
		"(an infinite value), when the output, a plot, the page or a series\n"
		"of --openmetrics could not be written.\n",
	.usage_err = KPM_USAGE_LINE,
	.help_col = 23,
};

/* @path (stdin for NULL or "-") into @run: false, said, when unreadable */
static bool read_file(struct rp_run *run, const char *path)
{
	const char *name = path && strcmp(path, "-") ? path : "<stdin>";
	FILE *f = stdin;
	int err;

	rp_run_init(run, name);
	if (path && strcmp(path, "-")) {
		f = fopen(path, "r");
		if (!f) {
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
			return false;
		}
	}
	err = rp_read(run, f);
	if (f != stdin)
		fclose(f);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", name, strerror(err));
		rp_run_free(run);
	}
	return !err;
}

/* --start: a Unix time in seconds, decimal, from 1970 to 5138 */
static bool parse_start(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (end != arg && !*end && !errno && *out >= 0 && *out < 1e11 &&
	    strspn(arg, "0123456789.eE+-") == strlen(arg))
		return true;
	fprintf(stderr, PROG ": --start %s: not a Unix time in seconds\n",
		arg);
	return false;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the latest time of any observation of @run, 0 without one */
static double latest_time(const struct rp_run *run)
{
	double t = 0;
	size_t i, j, k;

	for (i = 0; i < run->nr_cases; i++)
		for (j = 0; j < run->cases[i].nr_ser; j++)
			for (k = 0; k < run->cases[i].ser[j].nr_obs; k++)
				t = fmax(t, run->cases[i].ser[j].obs[k].time);
	return t;
}

static bool write_html(const struct rp_run *run, const struct rp_run *base,
		       const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return false;
	}
	rp_html(run, base, f);
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return false;
	}
	return true;
}

static bool write_openmetrics(const struct rp_run *run,
			      const struct rp_om_opts *o, const char *path)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return false;
	}
	ok = rp_openmetrics(run, o, f);
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return false;
	}
	return ok;
}

int main(int argc, char **argv)
{
	struct kpm_getopt g = { .cmd = &report_cmd };
	const char *baseline = NULL, *svg = NULL, *om = NULL, *start = NULL;
	const char *html = NULL;
	struct rp_om_opts om_opts = { };
	struct rp_run run, base;
	bool json = false, regressed = false, svg_failed = false;
	bool json_failed = false, om_failed = false, html_failed = false;
	struct rp_balance *bal;
	size_t nr_bal;
	int svg_fd;
	size_t i, j;
	int c;

	out_check_at_exit(PROG, EXIT_INPUT);
	while ((c = kpm_getopt(&g, argc, argv)) > 0) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'b':
			baseline = optarg;
			break;
		case 's':
			svg = optarg;
			break;
		case 'H':
			html = optarg;
			break;
		case 'o':
			om = optarg;
			break;
		case 'R':
			om_opts.run_id = optarg;
			break;
		case 'K':
			om_opts.kernel = optarg;
			break;
		case 'S':
			start = optarg;
			break;
		}
	}
	if (c < 0)
		return g.help ? 0 : EXIT_INPUT;
	if (argc - optind > 1) {
		fprintf(stderr, PROG ": one input file at most\n");
		return EXIT_INPUT;
	}
	if (!om && (om_opts.run_id || om_opts.kernel || start)) {
		fprintf(stderr, PROG ": --run, --kernel and --start go with --openmetrics\n");
		return EXIT_INPUT;
	}
	if (start && !parse_start(start, &om_opts.start))
		return EXIT_INPUT;
	if ((om_opts.run_id && !rp_utf8_valid(om_opts.run_id)) ||
	    (om_opts.kernel && !rp_utf8_valid(om_opts.kernel))) {
		fprintf(stderr, PROG ": --run and --kernel must be UTF-8\n");
		return EXIT_INPUT;
	}
	if (svg && mkdir(svg, 0755) && errno != EEXIST) {
		fprintf(stderr, PROG ": %s: %s\n", svg, strerror(errno));
		return EXIT_INPUT;
	}
	/* plots are opened in it: no path is longer than DIR itself */
	svg_fd = svg ? open(svg, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (svg && svg_fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", svg, strerror(errno));
		return EXIT_INPUT;
	}
	if (baseline && !read_file(&base, baseline))
		return EXIT_INPUT;
	if (!read_file(&run, optind < argc ? argv[optind] : NULL)) {
		if (baseline)
			rp_run_free(&base);
		return EXIT_INPUT;
	}

	for (i = 0; i < run.nr_cases; i++) {
		const struct rp_case *tc = &run.cases[i];

		if (!json) {
			char *name = rp_case_name(tc);

			printf("%s%s (%s)\n", i ? "\n" : "", rp_esc(name),
			       tc->ok ? "ok" : "not ok");
			free(name);
			printf("  %-22s %-8s %-12s %6s  %s\n", "metric", "host",
			       "summarize", "n", "value");
		}
		for (j = 0; j < tc->nr_ser; j++) {
			const struct rp_series *s = &tc->ser[j];
			struct rp_verdict_info vi;

			vi = rp_judge(baseline ? &base : NULL, tc, s,
				      rp_policy_of(tc, s));
			regressed |= vi.v == V_REGRESSED;
			if (json)
				json_failed |= !rp_json_row(&run, tc, s, &vi);
			else
				rp_table_row(tc, s, &vi);
		}
		nr_bal = rp_balances(tc, &bal, NULL);
		for (j = 0; j < nr_bal; j++)
			json_failed |= !rp_balance_row(&run, tc, &bal[j], json);
		free(bal);
		if (svg && rp_svg_case(svg_fd, svg, i + 1, tc))
			svg_failed = true;
	}
	if (!run.nr_cases && !json)
		printf("no metric lines\n");
	if (html)
		html_failed = !write_html(&run, baseline ? &base : NULL, html);
	if (om) {
		if (!start)
			om_opts.start = fmax(0, now() - latest_time(&run));
		om_failed = !write_openmetrics(&run, &om_opts, om);
	}
	c = run.errors || (baseline && base.errors) || svg_failed ||
	    json_failed || om_failed || html_failed ?
	    EXIT_INPUT : regressed ? EXIT_REGRESSED : 0;
	if (run.errors || (baseline && base.errors))
		fprintf(stderr, PROG ": %u lines refused\n",
			run.errors + (baseline ? base.errors : 0));
	rp_run_free(&run);
	if (baseline)
		rp_run_free(&base);
	return c;
}
