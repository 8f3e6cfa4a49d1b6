// SPDX-License-Identifier: GPL-2.0
/*
 * The summaries of ksft-perfmon-report: each series processed as its
 * policy says (transform, then aggregation), its statistics, the balance
 * across a netdev's queues and the verdict against a baseline, and the
 * rows of the table and of --json that say them.
 */

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"

const char *const rp_stat_names[RP_NR_STATS] = {
	[RP_LAST] = "last", [RP_TOTAL] = "total", [RP_P50] = "p50",
	[RP_P90] = "p90", [RP_P99] = "p99", [RP_MAX] = "max",
	[RP_DISTRIBUTION] = "distribution",
};

static const char *const verdict_names[] = {
	[V_NO_BASELINE] = "no baseline", [V_IMPROVED] = "improved",
	[V_UNCHANGED] = "unchanged", [V_REGRESSED] = "regressed",
	[V_PER_CPU] = "not judged (per-cpu without aggregation)",
};

/* ---- processing -------------------------------------------------------- */

static size_t series_width(const struct rp_series *s)
{
	size_t i, w = 1;

	for (i = 0; i < s->nr_obs; i++)
		if (s->obs[i].n > w)
			w = s->obs[i].n;
	return w;
}

static double obs_at(const struct rp_obs *o, size_t i)
{
	return i < o->n ? o->v[i] : NAN;
}

static void col_add(struct rp_col *c, size_t idx, double v)
{
	if (c->nr == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->v = rp_xrealloc(c->v, c->cap, sizeof(*c->v));
		c->idx = rp_xrealloc(c->idx, c->cap, sizeof(*c->idx));
	}
	c->v[c->nr] = v;
	c->idx[c->nr++] = idx;
}

/* the point of observation @i of @s into @out, if it gives one */
static void process_obs(const struct rp_series *s, const struct rp_policy *p,
			size_t i, bool aggregate, struct rp_points *out)
{
	const struct rp_obs *cur = &s->obs[i], *prev = &s->obs[i - !!p->rate];
	double dt = cur->time - prev->time, sum = 0, x;
	bool any = false;
	size_t k;

	if (p->rate && !(dt > 0))
		return;		/* no rate over no time */
	for (k = 0; k < cur->n; k++) {
		x = cur->v[k];
		if (p->rate) {
			double before = obs_at(prev, k);

			/* a counter decrease gives no rate */
			x = x >= before ? (x - before) / dt : NAN;
		}
		if (isnan(x))
			continue;
		any = true;
		if (aggregate)
			sum += x;
		else
			col_add(&out->col[k], out->nr, x);
	}
	if (!any)
		return;
	if (aggregate)
		col_add(&out->col[0], out->nr, p->rate ? sum : sum / 100);
	out->t[out->nr++] = cur->time;
}

void rp_process(const struct rp_series *s, const struct rp_policy *p,
		struct rp_points *out)
{
	bool aggregate = p->busy_cores && s->per_cpu;
	size_t i;

	out->width = aggregate ? 1 : series_width(s);
	out->col = calloc(out->width, sizeof(*out->col));
	if (!out->col)
		abort();
	out->t = rp_xrealloc(NULL, s->nr_obs, sizeof(double));
	out->nr = 0;
	for (i = p->rate ? 1 : 0; i < s->nr_obs; i++)
		process_obs(s, p, i, aggregate, out);
}

void rp_points_free(struct rp_points *pts)
{
	size_t i;

	for (i = 0; i < pts->width; i++) {
		free(pts->col[i].v);
		free(pts->col[i].idx);
	}
	free(pts->col);
	free(pts->t);
}

double rp_percentile(const double *sorted, size_t n, double p)
{
	double rank = p / 100 * (n - 1), t, d;
	size_t lo = (size_t)rank;

	if (lo + 1 >= n)
		return sorted[n - 1];
	/* numpy's _lerp(), from the nearer end: the same double as numpy */
	t = rank - lo;
	d = sorted[lo + 1] - sorted[lo];
	return t >= 0.5 ? sorted[lo + 1] - d * (1 - t) : sorted[lo] + d * t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

bool rp_stat(const struct rp_points *pts, size_t col, enum rp_stat stat,
	     double *out)
{
	size_t i, n = pts->col[col].nr;
	double *x;

	if (!n)
		return false;
	x = rp_xrealloc(NULL, n, sizeof(double));
	memcpy(x, pts->col[col].v, n * sizeof(double));
	switch (stat) {
	case RP_LAST:
		*out = x[n - 1];
		break;
	case RP_TOTAL:
		*out = 0;
		for (i = 0; i < n; i++)
			*out += x[i];
		break;
	case RP_MAX:
		*out = x[0];
		for (i = 1; i < n; i++)
			*out = x[i] > *out ? x[i] : *out;
		break;
	default:
		qsort(x, n, sizeof(*x), cmp_double);
		*out = rp_percentile(x, n, stat == RP_P50 ? 50 :
					   stat == RP_P90 ? 90 : 99);
		break;
	}
	free(x);
	return true;
}

/* @s's amount in a queue balance, as rp_balance says; NAN when none */
static double queue_amount(const struct rp_series *s)
{
	const struct rp_obs *a, *b;

	if (s->per_cpu || !s->nr_obs)
		return NAN;
	a = &s->obs[0];
	b = &s->obs[s->nr_obs - 1];
	return a->n == 1 && b->n == 1 ? b->v[0] - a->v[0] : NAN;
}

/*
 * The group of @s in a queue balance: its metric, host and labels but a
 * numeric queue, as JSON; NULL when it has no numeric queue label.
 */
static char *queue_group(const struct rp_series *s)
{
	json_t *g = json_object();
	bool queue = false;
	char *text;
	size_t i;

	if (!g)
		abort();
	json_object_set_new(g, "\x01metric", json_string(s->metric));
	json_object_set_new(g, "\x01host", json_string(s->host));
	for (i = 0; i < s->nr_labels; i++) {
		if (!strcmp(s->labels[i].key, "queue") &&
		    json_is_number((json_t *)s->labels[i].value))
			queue = true;
		else
			json_object_set(g, s->labels[i].key, s->labels[i].value);
	}
	text = queue ? json_dumps(g, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(g);
	return text;
}

size_t rp_balances(const struct rp_case *c, struct rp_balance **out,
		   size_t *of)
{
	size_t n = c->nr_ser ? c->nr_ser : 1, i, f, nr = 0;
	char **group = rp_xrealloc(NULL, n, sizeof(*group));
	size_t *first = rp_xrealloc(NULL, n, sizeof(*first));
	struct rp_acc { double sum, max, var; size_t n, bal; } *acc;
	struct rp_balance *b = NULL;
	struct rp_hash idx = {};
	double x;

	acc = rp_xrealloc(NULL, n, sizeof(*acc));
	/* each series' group, by the first series of it */
	for (i = 0; i < c->nr_ser; i++) {
		group[i] = queue_group(&c->ser[i]);
		first[i] = RP_NONE;
		acc[i] = (struct rp_acc){ 0, -INFINITY, 0, 0, RP_NONE };
		if (!group[i])
			continue;
		first[i] = rp_hash_get(&idx, group[i]);
		if (first[i] == RP_NONE) {
			first[i] = i;
			rp_hash_put(&idx, group[i], i);
		}
		x = queue_amount(&c->ser[i]);
		if (!isnan(x)) {
			acc[first[i]].sum += x;
			acc[first[i]].max = fmax(acc[first[i]].max, x);
			acc[first[i]].n++;
		}
	}
	for (i = 0; i < c->nr_ser; i++) {
		x = first[i] == RP_NONE ? NAN : queue_amount(&c->ser[i]);
		f = first[i];
		if (!isnan(x))
			acc[f].var += (x - acc[f].sum / acc[f].n) *
				      (x - acc[f].sum / acc[f].n) / acc[f].n;
	}
	/* those of two queues or more, in the order of their first series */
	for (i = 0; i < c->nr_ser; i++) {
		double mean = acc[i].n ? acc[i].sum / acc[i].n : NAN;

		if (first[i] != i || acc[i].n < 2)
			continue;
		b = rp_xrealloc(b, nr + 1, sizeof(*b));
		b[nr].first = i;
		b[nr].nr = acc[i].n;
		b[nr].total = acc[i].sum;
		b[nr].cv = mean ? sqrt(acc[i].var) / mean : NAN;
		b[nr].max_mean = mean ? acc[i].max / mean : NAN;
		acc[i].bal = nr++;
	}
	for (i = 0; of && i < c->nr_ser; i++)
		of[i] = first[i] == RP_NONE ? RP_NONE : acc[first[i]].bal;
	for (i = 0; i < c->nr_ser; i++)
		free(group[i]);
	rp_hash_free(&idx);
	free(group);
	free(first);
	free(acc);
	*out = b;
	return nr;
}

/* ---- verdicts and rows ------------------------------------------------- */

const struct rp_policy *rp_policy_of(const struct rp_case *c,
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

struct rp_verdict_info rp_judge(const struct rp_run *base,
				const struct rp_case *c,
				const struct rp_series *s,
				const struct rp_policy *p)
{
	struct rp_verdict_info vi = { .v = V_NONE };
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
	old = rp_series_find(rp_case_find(base, c), s->key);
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

/* @stat of column @col, as display_scale shows it, for a person */
static void print_stat(FILE *f, const struct rp_points *pts, size_t col,
		       enum rp_stat stat, double scale)
{
	char buf[RP_FMT_LEN];
	double v;

	if (rp_stat(pts, col, stat, &v))
		fprintf(f, " %s", rp_fmt(v * scale, buf, sizeof(buf)));
	else
		fputs(" -", f);
}

static void print_column(FILE *f, const struct rp_points *pts, size_t col,
			 enum rp_stat sum, double scale)
{
	size_t i;

	if (sum != RP_DISTRIBUTION) {
		print_stat(f, pts, col, sum, scale);
	} else if (pts->nr == 1) {
		fputs(" last", f);
		print_stat(f, pts, col, RP_LAST, scale);
	} else {
		for (i = 0; i < ARRAY_SIZE(dist_stats); i++) {
			fprintf(f, " %s", rp_stat_names[dist_stats[i]]);
			print_stat(f, pts, col, dist_stats[i], scale);
		}
	}
}

double rp_display_scale(const struct rp_series *s, const struct rp_policy *p)
{
	/* busy-core-equivalents of percentages are their sum over 100 */
	return s->per_cpu && p->busy_cores && !p->rate ? 100 * p->scale :
	       p->scale;
}

void rp_values_text(FILE *f, const struct rp_series *s,
		    const struct rp_points *pts, const struct rp_policy *p)
{
	double scale = rp_display_scale(s, p);
	size_t col;

	for (col = 0; col < pts->width; col++) {
		if (pts->width > 1)
			fprintf(f, "%scpu%zu", col ? " " : "", col);
		print_column(f, pts, col, p->summarize, scale);
	}
}

const char *rp_unit(const struct rp_policy *p, char *buf, size_t len)
{
	if (p->label)
		return p->label;
	if (p->scale == 1)
		return "";
	snprintf(buf, len, "(scaled x%g)", p->scale);
	return buf;
}

void rp_verdict_text(FILE *f, const struct rp_series *s,
		     const struct rp_policy *p,
		     const struct rp_verdict_info *vi)
{
	double scale = rp_display_scale(s, p);
	char buf[RP_FMT_LEN];

	if (vi->v == V_NO_BASELINE || vi->v == V_PER_CPU) {
		fprintf(f, "%s %s: %s", rp_stat_names[p->compare],
			p->higher_is_better ? "(higher is better)" :
			"(lower is better)", verdict_names[vi->v]);
		return;
	}
	fprintf(f, "%s %s against ", rp_stat_names[p->compare],
		rp_fmt(vi->current * scale, buf, sizeof(buf)));
	fprintf(f, "%s (%+.2f%%, ",
		rp_fmt(vi->baseline * scale, buf, sizeof(buf)),
		vi->baseline ? 100 * (vi->current - vi->baseline) /
			       fabs(vi->baseline) : 0.0);
	fprintf(f, "allowed %s, %s is better): %s",
		rp_fmt(vi->allowance * scale, buf, sizeof(buf)),
		p->higher_is_better ? "higher" : "lower",
		verdict_names[vi->v]);
}

/* @v, a label's value, as json.dumps writes it */
void rp_jw_label(struct jw *w, const json_t *v)
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
char *rp_series_name(const struct rp_series *s, bool no_queue)
{
	bool first = true;
	size_t i, len;
	struct jw w;
	char *name;
	FILE *f;

	f = rp_xmemstream(&name, &len);
	fputs(s->metric, f);
	for (i = 0; i < s->nr_labels; i++) {
		if (no_queue && !strcmp(s->labels[i].key, "queue"))
			continue;
		fputs(first ? "{" : ",", f);
		first = false;
		py_json_fputs(s->labels[i].key, f);
		fputc('=', f);
		jw_init(&w, f);
		rp_jw_label(&w, s->labels[i].value);
	}
	if (!first)
		fputc('}', f);
	fclose(f);
	return name;
}

void rp_table_row(const struct rp_case *c, const struct rp_series *s,
		  const struct rp_verdict_info *vi)
{
	const struct rp_policy *p = rp_policy_of(c, s);
	char *name = rp_series_name(s, false);
	char buf[RP_UNIT_LEN];
	struct rp_points pts;
	const char *unit;

	rp_process(s, p, &pts);
	printf("  %-22s %-8s %-12s %6zu ", rp_esc(name),
	       *s->host ? rp_esc(s->host) : "-",
	       rp_stat_names[p->summarize], pts.nr);
	rp_values_text(stdout, s, &pts, p);
	unit = rp_unit(p, buf, sizeof(buf));
	if (*unit)
		printf("  %s", rp_esc(unit));
	putchar('\n');
	if (vi->v != V_NONE) {
		fputs("    ", stdout);
		rp_verdict_text(stdout, s, p, vi);
		putchar('\n');
	}
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

/* "case": case @c's path, as it is shown */
static void json_case(struct jw *w, const struct rp_case *c)
{
	char *name = rp_case_name(c);

	jw_key(w, "case");
	jw_str(w, name);
	free(name);
}

/* "path": the names of case @c's path, the outermost first */
static void json_path(struct jw *w, const struct rp_case *c)
{
	size_t i;

	jw_key(w, "path");
	jw_arr_start(w);
	for (i = 0; i < c->nr_path; i++)
		jw_str(w, c->path[i]);
	jw_arr_end(w);
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
		rp_jw_label(w, s->labels[i].value);
	}
	jw_obj_end(w);
}

static void json_regression(struct jw *w, const struct rp_policy *p,
			    const struct rp_verdict_info *vi, const char **bad)
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
			const struct rp_verdict_info *vi, const char **bad)
{
	const struct rp_policy *p = rp_policy_of(c, s);
	struct rp_points pts;
	size_t col;

	rp_process(s, p, &pts);
	jw_obj_start(w);
	json_case(w, c);
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
	json_path(w, c);
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
 * The --json row @row, which @w wrote: printed and freed; or, when it
 * could not be written (@bad, a value JSON cannot hold, or a string that
 * is not UTF-8), one line on stderr instead: the case escaped, and the
 * row's @what and @key (a series as its JSON key). True when printed.
 */
static bool json_row_out(const struct rp_run *run, const struct rp_case *c,
			 const struct jw *w, char *row, const char *bad,
			 const char *what, const char *key)
{
	char *name;

	if (!w->error)
		printf("%s\n", row);
	free(row);
	if (!w->error)
		return true;
	fprintf(stderr, PROG ": %s: case \"", run->file);
	name = rp_case_name(c);
	message_str(stderr, name);
	free(name);
	fprintf(stderr, "\", %s %s: %s%s; row not written\n", what, rp_esc(key),
		bad ? bad : "a string is not UTF-8",
		bad ? " is not finite, which JSON cannot hold" : "");
	return false;
}

/*
 * A row of --json, or when it would not be the truth (a value JSON cannot
 * hold, a name that is not UTF-8), none and a message: false.
 */
bool rp_json_row(const struct rp_run *run, const struct rp_case *c,
		 const struct rp_series *s, const struct rp_verdict_info *vi)
{
	const char *bad = NULL;
	struct jw w;
	size_t len;
	char *row;
	FILE *f;

	f = rp_xmemstream(&row, &len);
	jw_init(&w, f);
	json_series(&w, c, s, vi, &bad);
	fclose(f);
	return json_row_out(run, c, &w, row, bad, "series", s->key);
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
bool rp_balance_row(const struct rp_run *run, const struct rp_case *c,
		    const struct rp_balance *b, bool json)
{
	const struct rp_series *s = &c->ser[b->first];
	char *name = rp_series_name(s, true), *row;
	const char *bad = NULL;
	struct jw w;
	size_t len;
	FILE *f;

	if (!json) {
		char buf[RP_FMT_LEN];

		printf("  balance of %s (%s): %zu queues, total %s, cv %.4g, max/mean %.4g\n",
		       rp_esc(name), *s->host ? rp_esc(s->host) : "-", b->nr,
		       rp_fmt(b->total, buf, sizeof(buf)), b->cv, b->max_mean);
		free(name);
		return true;
	}
	free(name);
	f = rp_xmemstream(&row, &len);
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
	json_case(&w, c);
	jw_key(&w, "host");
	jw_str(&w, s->host);
	jw_key(&w, "labels");
	json_labels(&w, s, true);
	jw_key(&w, "metric");
	jw_str(&w, s->metric);
	json_path(&w, c);
	jw_key(&w, "result");
	jw_str(&w, c->ok ? "ok" : "not ok");
	jw_obj_end(&w);
	fclose(f);
	return json_row_out(run, c, &w, row, bad, "balance of", s->key);
}
