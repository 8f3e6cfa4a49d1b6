// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-report --openmetrics: every observation of a run as an
 * OpenMetrics sample with its timestamp, and every summary the report
 * prints as a gauge, for promtool tsdb create-blocks-from openmetrics.
 *
 * A metric is the family "ksft_" and its name, each character but
 * [a-zA-Z0-9_] as '_'. One whose policy takes its rate is a cumulative
 * count: a counter, its samples named with "_total". cpu.time.* are in
 * seconds: "_seconds", with a UNIT, as names ending in "_bytes" have one.
 * A per-cpu observation is a sample a CPU, labelled cpu, null ones left
 * out. Families are written whole, each series' samples together and in
 * time order (OpenMetrics allows nothing else).
 */

#include <jansson.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"

#define OM_PREFIX "ksft_"
#define OM_SUMMARY OM_PREFIX "report_stat"
#define OM_BALANCE OM_PREFIX "report_queue_balance"

/* the labels this writer sets: a line's own of these names is exported_ */
static const char *const om_own_labels[] = {
	"run", "kernel", "case", "host", "cpu", "metric", "stat",
};

struct om_member {
	size_t c, s;	/* a case and a series of it */
	char *labels;	/* as om_labels() writes them */
};

struct om_family {
	char *name;
	const char *metric;	/* the KTAP name */
	const char *unit;	/* or NULL */
	bool counter;
	struct om_member *m;
	size_t nr, cap;
};

struct om {
	const struct rp_run *run;
	const struct rp_om_opts *o;
	FILE *f;
	struct om_family *fam;
	size_t nr_fam, cap_fam;
	/*
	 * the names of the families' samples, to the family (OM_OWN: the
	 * report's), so that no two families share one; the series written
	 * (sample name and labels) and the queue balances (metric and
	 * labels), to the case, so that none is written twice
	 */
	struct rp_hash names, ids, balances;
	char **keys;	/* those hashes' keys */
	size_t nr_keys, cap_keys;
	unsigned long same_ms;	/* samples left out: a millisecond's second */
	bool **written;		/* [case][series]: placed in a family */
	bool failed;
};

#define OM_OWN	(RP_NONE - 1)

/* the latest Unix time written: its milliseconds are exact in a double */
#define OM_MAX_TIME	1e11

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);

	return n >= e && !strcmp(s + n - e, end);
}

static bool om_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* the family of a KTAP metric, as the comment at the top says */
static char *om_family_name(const char *metric, bool counter,
			    const char **unit)
{
	bool cpu_time = !strncmp(metric, "cpu.time.", 9);
	size_t i, n = strlen(OM_PREFIX);
	char *name;

	name = rp_xrealloc(NULL, n + strlen(metric) + sizeof("_seconds"), 1);
	strcpy(name, OM_PREFIX);
	for (i = 0; metric[i]; i++)
		name[n + i] = om_name_char(metric[i]) ? metric[i] : '_';
	name[n + i] = '\0';
	if (counter && ends_with(name, "_total"))
		name[strlen(name) - strlen("_total")] = '\0';
	if (cpu_time && !ends_with(name, "_seconds"))
		strcat(name, "_seconds");
	*unit = ends_with(name, "_seconds") ? "seconds" :
		ends_with(name, "_bytes") ? "bytes" : NULL;
	return name;
}

/*
 * a label's name: each character but [a-zA-Z0-9_] as '_', then exported_
 * before one that is empty, begins with a digit or "__" (Prometheus's),
 * or is one of this writer's own
 */
static char *om_label_name(const char *key)
{
	static const char pfx[] = "exported_";
	size_t i, n = sizeof(pfx) - 1;
	bool exported;
	char *name;

	name = rp_xrealloc(NULL, n + strlen(key) + 1, 1);
	strcpy(name, pfx);
	for (i = 0; key[i]; i++)
		name[n + i] = om_name_char(key[i]) ? key[i] : '_';
	name[n + i] = '\0';
	exported = !key[0] || !strncmp(name + n, "__", 2) ||
		   (name[n] >= '0' && name[n] <= '9');
	for (i = 0; i < sizeof(om_own_labels) / sizeof(*om_own_labels); i++)
		exported |= !strcmp(name + n, om_own_labels[i]);
	if (!exported)
		memmove(name, name + n, strlen(name + n) + 1);
	return name;
}

bool rp_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int cp;
	int n;

	for (; *p; p += n) {
		n = utf8_decode(p, &cp);
		if (!n)
			return false;
	}
	return true;
}

/* name="value", escaped as OpenMetrics has it; false if not UTF-8 */
static bool om_label(FILE *f, const char *name, const char *value)
{
	if (!rp_utf8_valid(value))
		return false;
	fprintf(f, "%s=\"", name);
	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			fputc('\\', f);
		if (*value == '\n')
			fputs("\\n", f);
		else
			fputc(*value, f);
	}
	fputc('"', f);
	return true;
}

/* a label of a line: a string as it is, any other scalar as JSON */
static bool om_json_label(FILE *f, const char *name, const json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		return om_label(f, name, json_string_value(v));
	if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
	else if (json_is_real(v))
		py_float_repr(json_real_value(v), buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" :
			 json_is_false(v) ? "false" : "null");
	return om_label(f, name, buf);
}

static void __attribute__((format(printf, 4, 5)))
om_refuse(struct om *om, const struct rp_case *c, const char *metric,
	  const char *fmt, ...)
{
	char *name = rp_case_name(c);
	va_list ap;

	fprintf(stderr, PROG ": --openmetrics: case %s, %s: ", rp_esc(name),
		rp_esc(metric));
	free(name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; not written\n", stderr);
	om->failed = true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The labels of series @s of case @c but cpu, metric and stat (and with
 * @no_queue, queue), comma separated, malloc()ed; NULL, with a message,
 * when two would have one name or a value is not UTF-8.
 */
static char *om_labels(struct om *om, const struct rp_case *c,
		       const struct rp_series *s, bool no_queue)
{
	char **names = rp_xrealloc(NULL, s->nr_labels + 1, sizeof(char *));
	char **sorted = rp_xrealloc(NULL, s->nr_labels + 1, sizeof(char *));
	const char *why = NULL;
	char *text, *name;
	size_t i, len;
	FILE *f;

	for (i = 0; i < s->nr_labels; i++)
		sorted[i] = names[i] = om_label_name(s->labels[i].key);
	/* sorted, two of one name are neighbours */
	qsort(sorted, s->nr_labels, sizeof(*sorted), cmp_str);
	for (i = 1; i < s->nr_labels && !why; i++)
		if (!strcmp(sorted[i - 1], sorted[i]))
			why = "two labels would have one name";
	free(sorted);
	f = rp_xmemstream(&text, &len);
	if (om->o->run_id && om_label(f, "run", om->o->run_id))
		fputc(',', f);
	if (om->o->kernel && om_label(f, "kernel", om->o->kernel))
		fputc(',', f);
	name = rp_case_name(c);
	if (!om_label(f, "case", name))
		why = why ?: "its case's name is not UTF-8";
	free(name);
	if (*s->host && (fputc(',', f), !om_label(f, "host", s->host)))
		why = why ?: "its host is not UTF-8";
	for (i = 0; i < s->nr_labels && !why; i++) {
		if (no_queue && !strcmp(s->labels[i].key, "queue"))
			continue;
		fputc(',', f);
		if (!om_json_label(f, names[i], s->labels[i].value))
			why = "a label's value is not UTF-8";
	}
	for (i = 0; i < s->nr_labels; i++)
		free(names[i]);
	free(names);
	fclose(f);
	if (!why)
		return text;
	om_refuse(om, c, s->metric, "%s", why);
	free(text);
	return NULL;
}

/*
 * @t of a case as a timestamp in seconds, to the millisecond (all that
 * Prometheus keeps) into @buf; that millisecond
 */
static long long om_time(const struct om *om, double t, char *buf,
			 size_t len)
{
	long long ms = llround((om->o->start + t) * 1000);

	snprintf(buf, len, "%lld.%03lld", ms / 1000, ms % 1000);
	return ms;
}

static void om_value(FILE *f, double v)
{
	char buf[32];

	if (!py_float_repr(v, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "%s", isnan(v) ? "NaN" :
			 v > 0 ? "+Inf" : "-Inf");
	fputs(buf, f);
}

static int cmp_obs_time(const void *a, const void *b)
{
	const struct rp_obs *x = *(const struct rp_obs *const *)a;
	const struct rp_obs *y = *(const struct rp_obs *const *)b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x > y) - (x < y);	/* as recorded */
}

/*
 * One series' samples of column @col, in time order: of @obs, those in
 * the list @next holds from @next[@nr] on (each has the column).
 */
static void om_samples(struct om *om, const char *name, const char *labels,
		       const struct rp_series *s, const struct rp_obs **obs,
		       const size_t *next, size_t nr, size_t col)
{
	long long ms, last = LLONG_MIN;
	char ts[32];
	size_t i;

	for (i = next[nr]; i != nr; i = next[i]) {
		if (isnan(obs[i]->v[col]))
			continue;
		ms = om_time(om, obs[i]->time, ts, sizeof(ts));
		if (ms <= last) {
			om->same_ms++;
			continue;
		}
		last = ms;
		fprintf(om->f, "%s{%s", name, labels);
		if (s->per_cpu)
			fprintf(om->f, ",cpu=\"%zu\"", col);
		fputs("} ", om->f);
		om_value(om->f, obs[i]->v[col]);
		fprintf(om->f, " %s\n", ts);
	}
}

/* a family's metadata: TYPE, UNIT, HELP (@help_of escaped) */
static void om_header(FILE *f, const char *name, const char *type,
		      const char *unit, const char *help_what,
		      const char *help_of)
{
	fprintf(f, "# TYPE %s %s\n", name, type);
	if (unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s %s", name, help_what);
	for (; help_of && *help_of; help_of++)
		if (*help_of == '\\' || *help_of == '"')
			fprintf(f, "\\%c", *help_of);
		else if (*help_of == '\n')
			fputs("\\n", f);
		else
			fputc(*help_of, f);
	fputs(".\n", f);
}

/* an observation by its width: n, and i in time order */
struct om_width {
	size_t n, i;
};

static int cmp_width(const void *a, const void *b)
{
	const struct om_width *x = a, *y = b;

	return (x->n > y->n) - (x->n < y->n);
}

/*
 * The samples of series @s, a column (a CPU) after another, each in time
 * order. The observations that have a column are kept in a list in time
 * order, from which each leaves after its last column: the work is in
 * proportion to the values, not to the columns times the observations.
 */
static void om_series(struct om *om, const char *name, const char *labels,
		      const struct rp_series *s)
{
	size_t i, k, col, nr = s->nr_obs, width = 0;
	const struct rp_obs **obs;
	struct om_width *by_n;
	size_t *next, *prev;

	obs = rp_xrealloc(NULL, nr, sizeof(*obs));
	next = rp_xrealloc(NULL, nr + 1, sizeof(*next));
	prev = rp_xrealloc(NULL, nr + 1, sizeof(*prev));
	by_n = rp_xrealloc(NULL, nr, sizeof(*by_n));
	for (i = 0; i < nr; i++) {
		obs[i] = &s->obs[i];
		width = s->obs[i].n > width ? s->obs[i].n : width;
	}
	qsort(obs, nr, sizeof(*obs), cmp_obs_time);
	/* a circular list through @nr, its head, in time order */
	for (i = 0; i <= nr; i++) {
		next[i] = i == nr ? 0 : i + 1;
		prev[i] = i == 0 ? nr : i - 1;
		if (i < nr)
			by_n[i] = (struct om_width){ obs[i]->n, i };
	}
	qsort(by_n, nr, sizeof(*by_n), cmp_width);
	for (col = 0, k = 0; col < width; col++) {
		for (; k < nr && by_n[k].n <= col; k++) {
			i = by_n[k].i;
			next[prev[i]] = next[i];
			prev[next[i]] = prev[i];
		}
		om_samples(om, name, labels, s, obs, next, nr, col);
	}
	free(by_n);
	free(prev);
	free(next);
	free(obs);
}

static void om_family_write(struct om *om, const struct om_family *fam)
{
	const struct rp_run *run = om->run;
	size_t i;
	char *sample;

	om_header(om->f, fam->name, fam->counter ? "counter" : "gauge",
		  fam->unit, "The KTAP metric ", fam->metric);
	sample = rp_xrealloc(NULL, strlen(fam->name) + sizeof("_total"), 1);
	sprintf(sample, "%s%s", fam->name, fam->counter ? "_total" : "");
	for (i = 0; i < fam->nr; i++) {
		const struct rp_case *c = &run->cases[fam->m[i].c];
		const struct rp_series *s = &c->ser[fam->m[i].s];

		om_series(om, sample, fam->m[i].labels, s);
	}
	free(sample);
}

/* the time of the last observation of @s */
static double om_last_time(const struct rp_series *s)
{
	double t = -INFINITY;
	size_t i;

	for (i = 0; i < s->nr_obs; i++)
		t = fmax(t, s->obs[i].time);
	return t;
}

static void om_gauge(struct om *om, const char *family, const char *labels,
		     const char *metric, const char *stat, long long cpu,
		     double v, double t)
{
	char ts[32];

	om_time(om, t, ts, sizeof(ts));
	fprintf(om->f, "%s{%s,", family, labels);
	om_label(om->f, "metric", metric);
	fprintf(om->f, ",stat=\"%s\"", stat);
	if (cpu >= 0)
		fprintf(om->f, ",cpu=\"%lld\"", cpu);
	fputs("} ", om->f);
	om_value(om->f, v);
	fprintf(om->f, " %s\n", ts);
}

/*
 * What the report prints of each series written: its policy's summarize
 * (distribution: max, p50, p90 and p99, or the last of one point), a
 * column a CPU unless aggregated; at the time of its last observation.
 */
static void om_summaries(struct om *om)
{
	static const enum rp_stat dist[] = { RP_MAX, RP_P50, RP_P90, RP_P99 };
	const struct om_member *m;
	struct rp_points pts;
	const struct rp_policy *p;
	size_t i, j, k, col, nr;
	enum rp_stat stat;
	double v, last;
	bool cpu;

	om_header(om->f, OM_SUMMARY, "gauge", NULL,
		  "A series' summary, as ksft-perfmon-report computes it", NULL);
	for (i = 0; i < om->nr_fam; i++) {
		for (j = 0; j < om->fam[i].nr; j++) {
			const struct rp_case *c;
			const struct rp_series *s;

			m = &om->fam[i].m[j];
			c = &om->run->cases[m->c];
			s = &c->ser[m->s];
			p = rp_policy_find(c, s->metric) ?: rp_policy_default();
			rp_process(s, p, &pts);
			nr = p->summarize == RP_DISTRIBUTION && pts.nr > 1 ?
			     4 : 1;
			cpu = s->per_cpu && !p->busy_cores;
			last = om_last_time(s);
			for (col = 0; col < pts.width; col++) {
				for (k = 0; k < nr; k++) {
					stat = nr == 4 ? dist[k] :
					       p->summarize == RP_DISTRIBUTION ?
					       RP_LAST : p->summarize;
					if (!rp_stat(&pts, col, stat, &v))
						continue;
					om_gauge(om, OM_SUMMARY, m->labels,
						 s->metric, rp_stat_names[stat],
						 cpu ? (long long)col : -1, v,
						 last);
				}
			}
			rp_points_free(&pts);
		}
	}
}

/* @a, @sep and @b in a new string; with @keep, @om frees it at the end */
static char *om_key(struct om *om, const char *a, const char *sep,
		    const char *b, bool keep)
{
	char *k = rp_xrealloc(NULL, strlen(a) + strlen(sep) + strlen(b) + 1,
			      1);

	sprintf(k, "%s%s%s", a, sep, b);
	if (keep) {
		om->keys = rp_grow(om->keys, om->nr_keys, &om->cap_keys,
				   sizeof(*om->keys));
		om->keys[om->nr_keys++] = k;
	}
	return k;
}

/*
 * Each case's queue balances, as the report prints them, of series that
 * were all written; a balance of the same metric and labels as one of an
 * earlier case (of the same path) is not.
 */
static void om_balances(struct om *om)
{
	static const char *const stat[] = { "queues", "total", "cv",
					    "max_mean" };
	const struct rp_series *s;
	const struct rp_case *c;
	struct rp_balance *bal;
	char *labels, *key;
	size_t i, j, k, nr, *of;
	bool *whole;
	double v[4];

	om_header(om->f, OM_BALANCE, "gauge", NULL,
		  "A queue balance, as ksft-perfmon-report computes it", NULL);
	for (i = 0; i < om->run->nr_cases; i++) {
		c = &om->run->cases[i];
		of = rp_xrealloc(NULL, c->nr_ser ? c->nr_ser : 1, sizeof(*of));
		nr = rp_balances(c, &bal, of);
		/* each balance whose series were all written */
		whole = rp_xrealloc(NULL, nr ? nr : 1, sizeof(*whole));
		memset(whole, true, nr * sizeof(*whole));
		for (j = 0; j < c->nr_ser; j++)
			if (of[j] != RP_NONE && !om->written[i][j])
				whole[of[j]] = false;
		for (j = 0; j < nr; j++) {
			s = &c->ser[bal[j].first];
			/* a series not written was refused, said so, already */
			if (!whole[j])
				continue;
			labels = om_labels(om, c, s, true);
			if (!labels)
				continue;
			key = om_key(om, s->metric, "{", labels, true);
			if (rp_hash_get(&om->balances, key) != RP_NONE) {
				om_refuse(om, c, s->metric,
					  "its queue balance is an earlier case's of the same path");
				free(labels);
				continue;
			}
			rp_hash_put(&om->balances, key, i);
			v[0] = bal[j].nr;
			v[1] = bal[j].total;
			v[2] = bal[j].cv;
			v[3] = bal[j].max_mean;
			for (k = 0; k < 4; k++)
				if (!isnan(v[k]))
					om_gauge(om, OM_BALANCE, labels,
						 s->metric, stat[k], -1, v[k],
						 om_last_time(s));
			free(labels);
		}
		free(bal);
		free(of);
		free(whole);
	}
}

/* the names of a family's samples (OpenMetrics 1.0: a counter's three) */
static const char *const om_suffixes[2][3] = {
	{ "" }, { "", "_total", "_created" },
};

/*
 * the family that has a sample name that family @name (a counter with
 * @counter) would have, or RP_NONE; with @add, those names are its, @f
 */
static size_t om_names(struct om *om, const char *name, bool counter,
		       bool add, size_t f)
{
	size_t i, owner = RP_NONE;
	char *n;

	for (i = 0; i < 3 && om_suffixes[counter][i]; i++) {
		n = om_key(om, name, om_suffixes[counter][i], "", add);
		if (add)
			rp_hash_put(&om->names, n, f);
		else if (owner == RP_NONE)
			owner = rp_hash_get(&om->names, n);
		if (!add)
			free(n);
	}
	return owner;
}

/*
 * why series @s cannot be written: a time that is no Unix time once
 * --start is added, or a negative value of a counter's; NULL when it can
 */
static const char *om_bad_values(const struct om *om, const struct rp_series *s,
				 bool counter)
{
	double t;
	size_t i, j;

	for (i = 0; i < s->nr_obs; i++) {
		t = om->o->start + s->obs[i].time;
		if (!(t >= 0 && t < OM_MAX_TIME))
			return "a time before 1970 or after 5138, --start added";
		for (j = 0; counter && j < s->obs[i].n; j++)
			if (s->obs[i].v[j] < 0)
				return "a counter (a policy with transform rate) with a negative value";
	}
	return NULL;
}

/* series @si of case @ci into its family, unless it cannot be written */
static void om_place(struct om *om, size_t ci, size_t si)
{
	const struct rp_case *c = &om->run->cases[ci];
	const struct rp_series *s = &c->ser[si];
	const struct rp_policy *p;
	struct om_family *fam;
	char *name, *labels = NULL, *id;
	const char *unit, *bad;
	size_t f, owner;

	p = rp_policy_find(c, s->metric) ?: rp_policy_default();
	name = om_family_name(s->metric, p->rate, &unit);
	owner = om_names(om, name, p->rate, false, 0);
	f = owner != RP_NONE && owner != OM_OWN &&
	    !strcmp(om->fam[owner].name, name) &&
	    !strcmp(om->fam[owner].metric, s->metric) ? owner : RP_NONE;
	bad = om_bad_values(om, s, p->rate);
	if (!rp_utf8_valid(s->metric))
		om_refuse(om, c, s->metric, "the name is not UTF-8");
	else if (owner == OM_OWN)
		om_refuse(om, c, s->metric, "%s is the report's own",
			  rp_esc(name));
	else if (owner != RP_NONE && f == RP_NONE)
		om_refuse(om, c, s->metric, "%s shares a sample's name with %s",
			  rp_esc(name), rp_esc(om->fam[owner].metric));
	else if (f != RP_NONE && om->fam[f].counter != p->rate)
		om_refuse(om, c, s->metric,
			  "a counter (a policy with transform rate) in one case, a gauge in another");
	else if (bad)
		om_refuse(om, c, s->metric, "%s", bad);
	else
		labels = om_labels(om, c, s, false);
	if (!labels) {
		free(name);
		return;
	}
	/* what the samples are told apart by: their name and labels */
	id = om_key(om, name, "{", labels, true);
	if (rp_hash_get(&om->ids, id) != RP_NONE) {
		om_refuse(om, c, s->metric,
			  "an earlier series has the same labels (a case of the same path, or labels written alike)");
		free(labels);
		free(name);
		return;
	}
	rp_hash_put(&om->ids, id, ci);
	if (f == RP_NONE) {
		om->fam = rp_grow(om->fam, om->nr_fam, &om->cap_fam,
				  sizeof(*om->fam));
		f = om->nr_fam++;
		fam = &om->fam[f];
		memset(fam, 0, sizeof(*fam));
		fam->name = name;
		fam->metric = s->metric;
		fam->unit = unit;
		fam->counter = p->rate;
		om_names(om, name, p->rate, true, f);
	} else {
		fam = &om->fam[f];
		free(name);
	}
	fam->m = rp_grow(fam->m, fam->nr, &fam->cap, sizeof(*fam->m));
	fam->m[fam->nr++] = (struct om_member){ ci, si, labels };
	om->written[ci][si] = true;
}

bool rp_openmetrics(const struct rp_run *run, const struct rp_om_opts *o,
		    FILE *f)
{
	struct om om = { .run = run, .o = o, .f = f };
	size_t i, j;

	om_names(&om, OM_SUMMARY, false, true, OM_OWN);
	om_names(&om, OM_BALANCE, false, true, OM_OWN);
	om.written = rp_xrealloc(NULL, run->nr_cases ? run->nr_cases : 1,
				 sizeof(*om.written));
	for (i = 0; i < run->nr_cases; i++) {
		om.written[i] = calloc(run->cases[i].nr_ser ?: 1, sizeof(bool));
		if (!om.written[i])
			abort();
		for (j = 0; j < run->cases[i].nr_ser; j++)
			om_place(&om, i, j);
	}
	for (i = 0; i < om.nr_fam; i++)
		om_family_write(&om, &om.fam[i]);
	om_summaries(&om);
	om_balances(&om);
	fputs("# EOF\n", f);
	if (om.same_ms)
		fprintf(stderr, PROG ": --openmetrics: %lu observations in the millisecond of an earlier one of their series (Prometheus keeps milliseconds): not written\n",
			om.same_ms);
	for (i = 0; i < om.nr_fam; i++) {
		for (j = 0; j < om.fam[i].nr; j++)
			free(om.fam[i].m[j].labels);
		free(om.fam[i].m);
		free(om.fam[i].name);
	}
	for (i = 0; i < om.nr_keys; i++)
		free(om.keys[i]);
	free(om.keys);
	free(om.fam);
	rp_hash_free(&om.names);
	rp_hash_free(&om.ids);
	rp_hash_free(&om.balances);
	for (i = 0; i < run->nr_cases; i++)
		free(om.written[i]);
	free(om.written);
	return !om.failed;
}
