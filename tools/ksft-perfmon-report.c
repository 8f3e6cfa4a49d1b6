// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-report: what the netdev CI computes from the KTAP metric
 * lines of a run, locally. A summary per test case and series (a metric
 * and all its labels); with --baseline, each series' regression verdict
 * against an earlier run; with --svg, one plot per metric and labels but
 * host.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "report.h"

#define PROG "ksft-perfmon-report"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define EXIT_REGRESSED	1
#define EXIT_INPUT	2	/* usage, lines refused, or output not written */

#define USAGE "usage: " PROG " [--json] [--baseline FILE] [--svg DIR]\n" \
	"         [--openmetrics FILE [--run ID] [--kernel RELEASE] [--start TIME]]\n" \
	"         [FILE]\n"

static const char usage_text[] =
USAGE
"\n"
"Reads KTAP output (FILE, or stdin without it or for -) with metric lines\n"
"at any nesting depth, applies each metric's policy (transform, then\n"
"aggregation, then summarize) and prints a summary per test case and\n"
"series: a metric name with all its labels (host and any other key but\n"
"name, shape, time and value).\n"
"\n"
"  -j, --json           one JSON object per line instead of a table\n"
"  -b, --baseline FILE  compare with an earlier run by each metric's\n"
"                       regression policy; exit 1 on a regression\n"
"  -s, --svg DIR        write one plot per test case, metric and labels\n"
"                       but host into DIR\n"
"  -o, --openmetrics FILE\n"
"                       write every observation as an OpenMetrics sample\n"
"                       with its timestamp, and every summary as a gauge,\n"
"                       into FILE (for promtool tsdb create-blocks-from\n"
"                       openmetrics)\n"
"      --run ID         label every sample of FILE run=\"ID\"\n"
"      --kernel RELEASE label every sample of FILE kernel=\"RELEASE\"\n"
"      --start TIME     the Unix time (seconds) of each case's time 0;\n"
"                       without it, the run ends now: the current time\n"
"                       less the latest time of any observation\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0, 1 when a metric regressed, 2 on a usage error, when\n"
"input lines were refused (each named on stderr; the rest is processed),\n"
"when a --json row would not be true (an infinite value), when the\n"
"output, a plot or a series of --openmetrics could not be written.\n";

enum verdict {
	V_NONE, V_NO_BASELINE, V_IMPROVED, V_UNCHANGED, V_REGRESSED,
	V_PER_CPU,	/* nothing to compare: per-cpu without aggregation */
};

static const char *const verdict_names[] = {
	[V_NO_BASELINE] = "no baseline", [V_IMPROVED] = "improved",
	[V_UNCHANGED] = "unchanged", [V_REGRESSED] = "regressed",
	[V_PER_CPU] = "not judged (per-cpu without aggregation)",
};

struct verdict_info {
	enum verdict v;
	double current, baseline, allowance;
};

static bool read_file(struct rp_run *run, const char *path)
{
	FILE *f = stdin;

	rp_run_init(run, path && strcmp(path, "-") ? path : "<stdin>");
	if (path && strcmp(path, "-")) {
		f = fopen(path, "r");
		if (!f) {
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
			return false;
		}
	}
	rp_read(run, f);
	if (f != stdin)
		fclose(f);
	return true;
}

static const struct rp_policy *policy_of(const struct rp_case *c,
					 const struct rp_series *s)
{
	const struct rp_policy *p = rp_policy_find(c, s->metric);

	return p ? p : rp_policy_default();
}

/* the scalar a regression policy compares: column 0 of an aggregate */
static bool compared(const struct rp_series *s, const struct rp_policy *p,
		     double *out)
{
	struct rp_points pts;
	bool ok;

	rp_process(s, p, &pts);
	ok = pts.width == 1 && rp_stat(&pts, 0, p->compare, out);
	rp_points_free(&pts);
	return ok;
}

static struct verdict_info judge(const struct rp_run *base,
				 const struct rp_case *c,
				 const struct rp_series *s,
				 const struct rp_policy *p)
{
	struct verdict_info vi = { .v = V_NONE };
	const struct rp_series *old;
	double diff;

	if (!base || !p->regression)
		return vi;
	/* an array is no number to compare, whatever its width */
	if (s->per_cpu && !p->busy_cores) {
		vi.v = V_PER_CPU;
		return vi;
	}
	if (!compared(s, p, &vi.current))
		return vi;
	old = rp_series_find(rp_case_find(base, c->name), s->key);
	if (!old || !compared(old, p, &vi.baseline)) {
		vi.v = V_NO_BASELINE;
		return vi;
	}
	vi.allowance = fmax(p->rel_tol * fabs(vi.baseline), p->abs_tol);
	diff = vi.current - vi.baseline;
	if (!p->higher_is_better)
		diff = -diff;
	vi.v = diff < -vi.allowance ? V_REGRESSED :
	       diff > vi.allowance ? V_IMPROVED : V_UNCHANGED;
	return vi;
}

/* distribution: last for one point, else p50, p90, p99 and max */
static const enum rp_stat dist_stats[] = { RP_P50, RP_P90, RP_P99, RP_MAX };

static void print_stat(const struct rp_points *pts, size_t col,
		       enum rp_stat stat)
{
	double v;

	if (rp_stat(pts, col, stat, &v))
		printf(" %.6g", v);
	else
		printf(" -");
}

static void print_column(const struct rp_points *pts, size_t col,
			 enum rp_stat sum)
{
	size_t i;

	if (sum != RP_DISTRIBUTION) {
		print_stat(pts, col, sum);
	} else if (pts->nr == 1) {
		printf(" last");
		print_stat(pts, col, RP_LAST);
	} else {
		for (i = 0; i < ARRAY_SIZE(dist_stats); i++) {
			printf(" %s", rp_stat_names[dist_stats[i]]);
			print_stat(pts, col, dist_stats[i]);
		}
	}
}

/* @v, a label's value, as json.dumps writes it */
static void jw_label(struct jw *w, const json_t *v)
{
	if (json_is_string(v))
		jw_str(w, json_string_value(v));
	else if (json_is_integer(v))
		jw_int(w, json_integer_value(v));
	else if (json_is_real(v))
		jw_double(w, json_real_value(v));
	else if (json_is_boolean(v))
		jw_bool(w, json_is_true(v));
	else
		jw_null(w);
}

/*
 * the metric's name and its labels but host: name{key="value",key=1};
 * with @no_queue, but queue too
 */
static char *series_name(const struct rp_series *s, bool no_queue)
{
	bool first = true;
	size_t i, len;
	struct jw w;
	char *name;
	FILE *f;

	f = open_memstream(&name, &len);
	if (!f)
		abort();
	fputs(s->metric, f);
	for (i = 0; i < s->nr_labels; i++) {
		if (no_queue && !strcmp(s->labels[i].key, "queue"))
			continue;
		fputs(first ? "{" : ",", f);
		first = false;
		py_json_fputs(s->labels[i].key, f);
		fputc('=', f);
		jw_init(&w, f);
		jw_label(&w, s->labels[i].value);
	}
	if (!first)
		fputc('}', f);
	fclose(f);
	return name;
}

static void table_row(const struct rp_case *c, const struct rp_series *s,
		      const struct verdict_info *vi)
{
	const struct rp_policy *p = policy_of(c, s);
	char *name = series_name(s, false);
	struct rp_points pts;
	size_t col;

	rp_process(s, p, &pts);
	printf("  %-22s %-8s %-12s %6zu ", name, *s->host ? s->host : "-",
	       rp_stat_names[p->summarize], pts.nr);
	for (col = 0; col < pts.width; col++) {
		if (pts.width > 1)
			printf("%scpu%zu", col ? " " : "", col);
		print_column(&pts, col, p->summarize);
	}
	putchar('\n');
	if (vi->v == V_NO_BASELINE || vi->v == V_PER_CPU)
		printf("    %s %s: %s\n", rp_stat_names[p->compare],
		       p->higher_is_better ? "(higher is better)" :
		       "(lower is better)", verdict_names[vi->v]);
	else if (vi->v != V_NONE)
		printf("    %s %.6g against %.6g (%+.2f%%, allowed %.6g, %s is better): %s\n",
		       rp_stat_names[p->compare], vi->current, vi->baseline,
		       vi->baseline ? 100 * (vi->current - vi->baseline) /
				      fabs(vi->baseline) : 0.0,
		       vi->allowance, p->higher_is_better ? "higher" : "lower",
		       verdict_names[vi->v]);
	rp_points_free(&pts);
	free(name);
}

/*
 * @v, or the first non-finite one's name into *@bad: JSON has no NaN or
 * infinity, and null would say there is no value.
 */
static void json_num(struct jw *w, double v, const char *name,
		     const char **bad)
{
	if (!isfinite(v) && !*bad)
		*bad = name;
	jw_double(w, v);
}

static void json_stat(struct jw *w, const struct rp_points *pts, size_t col,
		      enum rp_stat stat, const char **bad)
{
	double v;

	if (rp_stat(pts, col, stat, &v))
		json_num(w, v, rp_stat_names[stat], bad);
	else
		jw_null(w);
}

static void json_summary(struct jw *w, const struct rp_points *pts,
			 size_t col, enum rp_stat sum, const char **bad)
{
	static const enum rp_stat sorted_dist[] = {
		RP_MAX, RP_P50, RP_P90, RP_P99
	};
	size_t i;

	if (sum != RP_DISTRIBUTION || pts->nr == 1) {
		json_stat(w, pts, col, sum == RP_DISTRIBUTION ? RP_LAST : sum,
			  bad);
		return;
	}
	jw_obj_start(w);
	for (i = 0; i < 4; i++) {
		jw_key(w, rp_stat_names[sorted_dist[i]]);
		json_stat(w, pts, col, sorted_dist[i], bad);
	}
	jw_obj_end(w);
}

/*
 * the labels but host (and with @no_queue, but queue) as an object, sorted
 * by key as json.dumps does
 */
static void json_labels(struct jw *w, const struct rp_series *s,
			bool no_queue)
{
	size_t i;

	jw_obj_start(w);
	for (i = 0; i < s->nr_labels; i++) {
		if (no_queue && !strcmp(s->labels[i].key, "queue"))
			continue;
		jw_key(w, s->labels[i].key);
		jw_label(w, s->labels[i].value);
	}
	jw_obj_end(w);
}

static void json_regression(struct jw *w, const struct rp_policy *p,
			    const struct verdict_info *vi, const char **bad)
{
	jw_obj_start(w);
	if (vi->v != V_NO_BASELINE && vi->v != V_PER_CPU) {
		jw_key(w, "allowance");
		json_num(w, vi->allowance, "the allowance", bad);
		jw_key(w, "baseline");
		json_num(w, vi->baseline, "the baseline", bad);
	}
	jw_key(w, "better");
	jw_str(w, p->higher_is_better ? "higher" : "lower");
	jw_key(w, "compare");
	jw_str(w, rp_stat_names[p->compare]);
	if (vi->v != V_PER_CPU) {
		jw_key(w, "current");
		json_num(w, vi->current, "the current value", bad);
	}
	jw_key(w, "verdict");
	jw_str(w, verdict_names[vi->v]);
	jw_obj_end(w);
}

static void json_series(struct jw *w, const struct rp_case *c,
			const struct rp_series *s,
			const struct verdict_info *vi, const char **bad)
{
	const struct rp_policy *p = policy_of(c, s);
	struct rp_points pts;
	size_t col;

	rp_process(s, p, &pts);
	jw_obj_start(w);
	jw_key(w, "case");
	jw_str(w, c->name);
	jw_key(w, "host");
	jw_str(w, s->host);
	if (s->nr_labels) {
		jw_key(w, "labels");
		json_labels(w, s, false);
	}
	jw_key(w, "metric");
	jw_str(w, s->metric);
	jw_key(w, "n");
	jw_uint(w, pts.nr);
	if (vi->v != V_NONE) {
		jw_key(w, "regression");
		json_regression(w, p, vi, bad);
	}
	jw_key(w, "result");
	jw_str(w, c->ok ? "ok" : "not ok");
	jw_key(w, "summarize");
	jw_str(w, rp_stat_names[p->summarize]);
	jw_key(w, "value");
	if (pts.width == 1) {
		json_summary(w, &pts, 0, p->summarize, bad);
	} else {
		jw_arr_start(w);
		for (col = 0; col < pts.width; col++)
			json_summary(w, &pts, col, p->summarize, bad);
		jw_arr_end(w);
	}
	jw_obj_end(w);
	rp_points_free(&pts);
}

/*
 * @s in a one-line message: as JSON escapes it, or, where it is not
 * UTF-8, every byte outside printable ASCII as \xNN
 */
static void message_str(FILE *f, const char *s)
{
	const unsigned char *p;
	unsigned int cp;
	int n = 1;

	for (p = (const unsigned char *)s; *p && n; p += n)
		n = utf8_decode(p, &cp);
	if (n) {
		py_json_fputs(s, f);
		return;
	}
	for (p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			fputc(*p, f);
		else
			fprintf(f, "\\x%02x", *p);
}

/*
 * A row of --json, or when it would not be the truth (a value JSON cannot
 * hold, a name that is not UTF-8), none and a message: false.
 */
static bool json_row(const struct rp_run *run, const struct rp_case *c,
		     const struct rp_series *s, const struct verdict_info *vi)
{
	const char *bad = NULL;
	struct jw w;
	size_t len;
	char *row;
	FILE *f;

	f = open_memstream(&row, &len);
	if (!f)
		abort();
	jw_init(&w, f);
	json_series(&w, c, s, vi, &bad);
	fclose(f);
	if (!w.error)
		printf("%s\n", row);
	free(row);
	if (!w.error)
		return true;
	/* one line: the case escaped, the series as its JSON key */
	fprintf(stderr, PROG ": %s: case \"", run->file);
	message_str(stderr, c->name);
	fprintf(stderr, "\", series %s: %s%s; row not written\n", s->key,
		bad ? bad : "a string is not UTF-8",
		bad ? " is not finite, which JSON cannot hold" : "");
	return false;
}

/* a number of a balance: null for none (a mean of 0) */
static void json_maybe(struct jw *w, double v, const char *name,
		       const char **bad)
{
	if (isnan(v))
		jw_null(w);
	else
		json_num(w, v, name, bad);
}

/* the balance across queues @b of case @c: a row of the table or --json */
static bool balance_row(const struct rp_run *run, const struct rp_case *c,
			const struct rp_balance *b, bool json)
{
	const struct rp_series *s = &c->ser[b->first];
	char *name = series_name(s, true), *row;
	const char *bad = NULL;
	struct jw w;
	size_t len;
	FILE *f;

	if (!json) {
		printf("  balance of %s (%s): %zu queues, total %.6g, cv %.4g, max/mean %.4g\n",
		       name, *s->host ? s->host : "-", b->nr, b->total, b->cv,
		       b->max_mean);
		free(name);
		return true;
	}
	free(name);
	f = open_memstream(&row, &len);
	if (!f)
		abort();
	jw_init(&w, f);
	jw_obj_start(&w);
	jw_key(&w, "balance");
	jw_obj_start(&w);
	jw_key(&w, "cv");
	json_maybe(&w, b->cv, "the cv", &bad);
	jw_key(&w, "max_mean");
	json_maybe(&w, b->max_mean, "max/mean", &bad);
	jw_key(&w, "queues");
	jw_uint(&w, b->nr);
	jw_key(&w, "total");
	json_num(&w, b->total, "the total", &bad);
	jw_obj_end(&w);
	jw_key(&w, "case");
	jw_str(&w, c->name);
	jw_key(&w, "host");
	jw_str(&w, s->host);
	jw_key(&w, "labels");
	json_labels(&w, s, true);
	jw_key(&w, "metric");
	jw_str(&w, s->metric);
	jw_key(&w, "result");
	jw_str(&w, c->ok ? "ok" : "not ok");
	jw_obj_end(&w);
	fclose(f);
	if (!w.error)
		printf("%s\n", row);
	free(row);
	if (!w.error)
		return true;
	fprintf(stderr, PROG ": %s: case \"", run->file);
	message_str(stderr, c->name);
	fprintf(stderr, "\", balance of %s: %s%s; row not written\n", s->key,
		bad ? bad : "a string is not UTF-8",
		bad ? " is not finite, which JSON cannot hold" : "");
	return false;
}

/* ---- plots ------------------------------------------------------------ */

#define SAFE_CHARS	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
			"0123456789.-_"
#define SVG_W		720
#define SVG_PLOT_H	300
#define SVG_LEFT	70
#define SVG_RIGHT	20
#define SVG_TOP		40
#define SVG_BOTTOM	50

static const char *const host_colors[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
};

/*
 * @s as XML 1.0 text. XML has no C0 control but tab, newline and carriage
 * return, nor U+FFFE and U+FFFF, not even as character references: those
 * are written as the text \uXXXX, as JSON escapes them, and a byte that
 * is not UTF-8 (a case name can be anything) as \xNN.
 */
static void svg_text(FILE *f, const char *s)
{
	static const char *const escaped[] = {
		['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;",
	};
	const unsigned char *p = (const unsigned char *)s;
	unsigned int cp;
	int n;

	while (*p) {
		n = utf8_decode(p, &cp);
		if (!n)
			fprintf(f, "\\x%02x", *p++);
		else if (cp < 0x20 || cp == 0xfffe || cp == 0xffff)
			fprintf(f, "\\u%04x", cp);
		else if (cp < ARRAY_SIZE(escaped) && escaped[cp])
			fputs(escaped[cp], f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

struct svg_range {
	double t0, t1, lo, hi;
};

/* the series of the plot of @first, processed for display: no aggregation */
static size_t svg_points(const struct rp_case *c, size_t first,
			 const struct rp_policy *p, struct rp_points *pts,
			 const struct rp_series **ser, size_t max)
{
	struct rp_policy shown = *p;
	size_t i, n = 0, k, col;

	shown.busy_cores = false;
	for (i = first; i != RP_NONE && n < max; i = c->ser[i].plot_next) {
		rp_process(&c->ser[i], &shown, &pts[n]);
		for (col = 0; col < pts[n].width; col++)
			for (k = 0; k < pts[n].col[col].nr; k++)
				pts[n].col[col].v[k] *= p->scale;
		ser[n++] = &c->ser[i];
	}
	return n;
}

static struct svg_range svg_range(const struct rp_points *pts, size_t n,
				  const struct rp_policy *p)
{
	struct svg_range r = { INFINITY, -INFINITY, INFINITY, -INFINITY };
	const struct rp_col *c;
	size_t i, k, col;

	for (i = 0; i < n; i++) {
		for (k = 0; k < pts[i].nr; k++) {
			r.t0 = fmin(r.t0, pts[i].t[k]);
			r.t1 = fmax(r.t1, pts[i].t[k]);
		}
		for (col = 0; col < pts[i].width; col++) {
			c = &pts[i].col[col];
			for (k = 0; k < c->nr; k++) {
				r.lo = fmin(r.lo, c->v[k]);
				r.hi = fmax(r.hi, c->v[k]);
			}
		}
	}
	if (p->has_min)
		r.lo = p->min;
	if (p->has_max)
		r.hi = p->max;
	if (!isfinite(r.lo) || !isfinite(r.hi)) {
		r.lo = 0;
		r.hi = 1;
	}
	if (r.hi <= r.lo)
		r.hi = r.lo + 1;
	if (!isfinite(r.t0) || r.t1 <= r.t0)
		r.t1 = (isfinite(r.t0) ? r.t0 : (r.t0 = 0)) + 1;
	return r;
}

static double svg_x(const struct svg_range *r, double t)
{
	return SVG_LEFT + (t - r->t0) / (r->t1 - r->t0) *
	       (SVG_W - SVG_LEFT - SVG_RIGHT);
}

static void svg_axes(FILE *f, const struct svg_range *r, double y0,
		     double h, bool values, const char *label)
{
	int i;

	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
		SVG_LEFT, y0, SVG_W - SVG_LEFT - SVG_RIGHT, h);
	for (i = 0; i <= 4; i++) {
		double t = r->t0 + (r->t1 - r->t0) * i / 4;

		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%.3g</text>\n",
			svg_x(r, t), y0 + h + 14, t);
		if (!values)
			continue;
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.4g</text>\n",
			SVG_LEFT - 4, y0 + h - h * i / 4 + 4,
			r->lo + (r->hi - r->lo) * i / 4);
	}
	if (label) {
		fprintf(f, "<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
			y0 + h / 2, y0 + h / 2);
		svg_text(f, label);
		fputs("</text>\n", f);
	}
}

static void svg_scalar(FILE *f, const struct rp_points *pts,
		       const struct rp_series **ser, size_t n,
		       const struct rp_policy *p)
{
	struct svg_range r = svg_range(pts, n, p);
	size_t i, k;

	svg_axes(f, &r, SVG_TOP, SVG_PLOT_H, true, p->label);
	for (i = 0; i < n; i++) {
		const char *color = host_colors[i % 6];

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			color);
		for (k = 0; k < pts[i].col[0].nr; k++) {
			double v = fmin(fmax(pts[i].col[0].v[k], r.lo), r.hi);
			double t = pts[i].t[pts[i].col[0].idx[k]];

			fprintf(f, "%.1f,%.1f ", svg_x(&r, t),
				SVG_TOP + SVG_PLOT_H -
				(v - r.lo) / (r.hi - r.lo) * SVG_PLOT_H);
		}
		fputs("\"/>\n", f);
		fprintf(f, "<text x=\"%zu\" y=\"%d\" font-size=\"12\" fill=\"%s\">",
			SVG_LEFT + 10 + i * 120, SVG_TOP - 8, color);
		svg_text(f, *ser[i]->host ? ser[i]->host : "-");
		fputs("</text>\n", f);
	}
}

/* white through blue to red */
static void heat_color(double x, char *buf, size_t len)
{
	double r, g, b;

	x = fmin(fmax(x, 0), 1);
	if (x < 0.5) {
		r = 1 - 2 * x * 0.88;
		g = 1 - 2 * x * 0.6;
		b = 1;
	} else {
		r = 0.12 + (x - 0.5) * 2 * 0.72;
		g = 0.4 - (x - 0.5) * 2 * 0.3;
		b = 1 - (x - 0.5) * 2 * 0.8;
	}
	snprintf(buf, len, "#%02x%02x%02x", (int)(r * 255), (int)(g * 255),
		 (int)(b * 255));
}

/* a cell per value of column @cpu, from the point before it */
static void svg_cells(FILE *f, const struct rp_points *pts, size_t cpu,
		      const struct svg_range *r, double y, double row)
{
	const struct rp_col *c = &pts->col[cpu];
	double x0, v;
	char color[8];
	size_t j, k;

	for (j = 0; j < c->nr; j++) {
		k = c->idx[j];
		v = c->v[j];
		x0 = svg_x(r, k ? pts->t[k - 1] : r->t0);
		heat_color((v - r->lo) / (r->hi - r->lo), color, sizeof(color));
		fprintf(f, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			x0, y, svg_x(r, pts->t[k]) - x0 + 0.5, row, color);
	}
}

static void svg_heat(FILE *f, const struct rp_points *pts,
		     const struct rp_series **ser, size_t n,
		     const struct rp_policy *p)
{
	struct svg_range r = svg_range(pts, n, p);
	double y0 = SVG_TOP;
	size_t i, cpu;

	for (i = 0; i < n; i++) {
		double row = fmax(4, fmin(20, 240.0 / pts[i].width));
		double h = row * pts[i].width;

		svg_axes(f, &r, y0, h, false, NULL);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\">",
			SVG_LEFT, y0 - 6);
		svg_text(f, *ser[i]->host ? ser[i]->host : "-");
		fputs(", one row per CPU</text>\n", f);
		for (cpu = 0; cpu < pts[i].width; cpu++) {
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"end\">%zu</text>\n",
				SVG_LEFT - 4, y0 + row * (cpu + 1) - 1, cpu);
			svg_cells(f, &pts[i], cpu, &r, y0 + row * cpu, row);
		}
		y0 += h + SVG_BOTTOM;
	}
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\">color: %.4g (white) to %.4g (red)",
		SVG_LEFT, y0 - SVG_BOTTOM + 30, r.lo, r.hi);
	if (p->label) {
		fputs(", ", f);
		svg_text(f, p->label);
	}
	fputs("</text>\n", f);
}

/* @s as a file name: @s with each character outside SAFE_CHARS as _ */
static void svg_name_part(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(strchr(SAFE_CHARS, *s) ? *s : '_', f);
}

/* room for "-<series>-<more>.svg" after a cut name, in 255 bytes */
#define SVG_NAME_MAX	200

/*
 * <case>-<metric>[,<key>=<value>...].svg: a string value as it is; a name
 * over SVG_NAME_MAX bytes is cut there
 */
static char *svg_file_name(size_t idx, const struct rp_series *s)
{
	const json_t *v;
	size_t i, len;
	struct jw w;
	char *name;
	FILE *f;

	f = open_memstream(&name, &len);
	if (!f)
		abort();
	fprintf(f, "%zu-", idx);
	svg_name_part(f, s->metric);
	for (i = 0; i < s->nr_labels; i++) {
		v = s->labels[i].value;
		fputc(',', f);
		svg_name_part(f, s->labels[i].key);
		fputc('=', f);
		if (json_is_string(v)) {
			svg_name_part(f, json_string_value(v));
		} else {
			jw_init(&w, f);	/* numbers, true, false, null */
			jw_label(&w, v);
		}
	}
	fclose(f);
	/* a file name has 255 bytes; svg_unique() tells cut names apart */
	if (len > SVG_NAME_MAX)
		name[SVG_NAME_MAX] = '\0';
	name = realloc(name, strlen(name) + sizeof(".svg"));
	if (!name)
		abort();
	strcat(name, ".svg");
	return name;
}

/* hosts beyond the 16th of a plot are not drawn */
#define SVG_MAX_SERIES	16

static void svg_write(FILE *f, const struct rp_case *c,
		      const struct rp_series *first, const struct rp_policy *p,
		      const struct rp_points *pts,
		      const struct rp_series **ser, size_t n)
{
	size_t height = SVG_TOP + SVG_PLOT_H + SVG_BOTTOM, i;
	char *title;

	if (first->per_cpu) {
		height = SVG_TOP;
		for (i = 0; i < n; i++)
			height += fmax(4, fmin(20, 240.0 / pts[i].width)) *
				  pts[i].width + SVG_BOTTOM;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" font-family=\"sans-serif\">\n",
		SVG_W, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"16\" font-size=\"14\">", SVG_LEFT);
	title = series_name(first, false);
	svg_text(f, title);
	free(title);
	fputs(" (", f);
	svg_text(f, c->name);
	fprintf(f, ")%s%s, time in s</text>\n", p->rate ? ", rate" : "",
		p->scale != 1 ? ", scaled" : "");
	if (first->per_cpu)
		svg_heat(f, pts, ser, n, p);
	else
		svg_scalar(f, pts, ser, n, p);
	fputs("</svg>\n", f);
}

/* a plot of the series @first_idx and those of other hosts and its labels */
static int svg_plot(int dirfd, const char *dir, const char *name,
		    const struct rp_case *c, size_t first_idx)
{
	const struct rp_series *first = &c->ser[first_idx];
	const struct rp_policy *p = policy_of(c, first);
	const struct rp_series *ser[SVG_MAX_SERIES];
	struct rp_points pts[SVG_MAX_SERIES];
	size_t n, i;
	FILE *f = NULL;
	int fd, bad;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
	if (fd >= 0)
		f = fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, PROG ": %s/%s: %s\n", dir, name,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = svg_points(c, first_idx, p, pts, ser, SVG_MAX_SERIES);
	svg_write(f, c, first, p, pts, ser, n);
	for (i = 0; i < n; i++)
		rp_points_free(&pts[i]);
	/* fclose() reports its own flush, not a write that failed before */
	bad = ferror(f);
	if (fclose(f) || bad) {
		fprintf(stderr, PROG ": %s/%s: %s\n", dir, name,
			bad ? "a write failed" : strerror(errno));
		return -1;
	}
	return 0;
}

/* @base, a name that ends in .svg, with -@nr and -@more if above 1 */
static char *svg_alt_name(const char *base, size_t nr, size_t more)
{
	char *name;
	size_t len;
	FILE *f;

	f = open_memstream(&name, &len);
	if (!f)
		abort();
	fprintf(f, "%.*s-%zu", (int)(strlen(base) - strlen(".svg")), base,
		nr);
	if (more > 1)
		fprintf(f, "-%zu", more);
	fputs(".svg", f);
	fclose(f);
	return name;
}

/*
 * @name, or when a plot of the case has it already (names that differ
 * only where SAFE_CHARS replaced a character), with -@nr, the series'
 * number in the case, and if need be -2, -3... before .svg.
 */
static char *svg_unique(struct rp_hash *used, char *name, size_t nr)
{
	char *base = name;
	size_t more;

	for (more = 1; rp_hash_get(used, name) != RP_NONE; more++) {
		if (name != base)
			free(name);
		name = svg_alt_name(base, nr, more);
	}
	if (name != base)
		free(base);
	rp_hash_put(used, name, nr);
	return name;
}

/* one plot per metric and labels but host, each in a file of its own */
static int svg_case(int dirfd, const char *dir, size_t idx,
		    const struct rp_case *c)
{
	struct rp_hash used = { 0 };
	char **names;
	size_t i, nr = 0;
	int err = 0;

	names = calloc(c->nr_ser, sizeof(*names));
	if (!names)
		abort();
	for (i = 0; i < c->nr_ser; i++) {
		if (rp_hash_get(&c->plot_idx, c->ser[i].plot) != i)
			continue;
		names[nr] = svg_unique(&used, svg_file_name(idx, &c->ser[i]),
				       i + 1);
		if (svg_plot(dirfd, dir, names[nr++], c, i))
			err = -1;
	}
	rp_hash_free(&used);
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return err;
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
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "svg", required_argument, NULL, 's' },
		{ "openmetrics", required_argument, NULL, 'o' },
		{ "run", required_argument, NULL, 'R' },
		{ "kernel", required_argument, NULL, 'K' },
		{ "start", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *baseline = NULL, *svg = NULL, *om = NULL, *start = NULL;
	struct rp_om_opts om_opts = { };
	struct rp_run run, base;
	bool json = false, regressed = false, svg_failed = false;
	bool json_failed = false, om_failed = false;
	struct rp_balance *bal;
	size_t nr_bal;
	int svg_fd;
	size_t i, j;
	int c;

	out_check_at_exit(PROG, EXIT_INPUT);
	while ((c = getopt_long(argc, argv, "jb:s:o:h", opts, NULL)) != -1) {
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
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(USAGE, stderr);
			return EXIT_INPUT;
		}
	}
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
	if (!read_file(&run, optind < argc ? argv[optind] : NULL))
		return EXIT_INPUT;

	for (i = 0; i < run.nr_cases; i++) {
		const struct rp_case *tc = &run.cases[i];

		if (!json) {
			printf("%s%s (%s)\n", i ? "\n" : "", tc->name,
			       tc->ok ? "ok" : "not ok");
			printf("  %-22s %-8s %-12s %6s  %s\n", "metric", "host",
			       "summarize", "n", "value");
		}
		for (j = 0; j < tc->nr_ser; j++) {
			const struct rp_series *s = &tc->ser[j];
			struct verdict_info vi;

			vi = judge(baseline ? &base : NULL, tc, s,
				   policy_of(tc, s));
			regressed |= vi.v == V_REGRESSED;
			if (json)
				json_failed |= !json_row(&run, tc, s, &vi);
			else
				table_row(tc, s, &vi);
		}
		nr_bal = rp_balances(tc, &bal);
		for (j = 0; j < nr_bal; j++)
			json_failed |= !balance_row(&run, tc, &bal[j], json);
		free(bal);
		if (svg && svg_case(svg_fd, svg, i + 1, tc))
			svg_failed = true;
	}
	if (!run.nr_cases && !json)
		printf("no metric lines\n");
	if (om) {
		if (!start)
			om_opts.start = fmax(0, now() - latest_time(&run));
		om_failed = !write_openmetrics(&run, &om_opts, om);
	}
	c = run.errors || (baseline && base.errors) || svg_failed ||
	    json_failed || om_failed ?
	    EXIT_INPUT : regressed ? EXIT_REGRESSED : 0;
	if (run.errors || (baseline && base.errors))
		fprintf(stderr, PROG ": %u lines refused\n",
			run.errors + (baseline ? base.errors : 0));
	rp_run_free(&run);
	if (baseline)
		rp_run_free(&base);
	return c;
}
