// SPDX-License-Identifier: GPL-2.0
/*
 * The reading of ksft-perfmon-report: KTAP lines in, at any nesting
 * depth, per test case policies and series out, each line that is not
 * as Documentation/metric-format.rst says refused with a message. JSON
 * is parsed with jansson; summary.c does the arithmetic.
 */

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char POLICY_TAG[] = "ktap-metric-policy-json: ";
static const char OBS_TAG[] = "ktap-metric-json: ";

static void __attribute__((format(printf, 3, 4)))
refuse(struct rp_run *run, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s:%u: ", run->file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	run->errors++;
}

void rp_run_init(struct rp_run *run, const char *file)
{
	memset(run, 0, sizeof(*run));
	run->file = file;
}

static void series_free(struct rp_series *s)
{
	size_t i;

	for (i = 0; i < s->nr_obs; i++)
		free(s->obs[i].v);
	for (i = 0; i < s->nr_labels; i++) {
		free(s->labels[i].key);
		json_decref(s->labels[i].value);
	}
	free(s->obs);
	free(s->labels);
	free(s->metric);
	free(s->host);
	free(s->key);
	free(s->plot);
}

static void case_free(struct rp_case *c)
{
	size_t i;

	for (i = 0; i < c->nr_pol; i++) {
		free(c->pol[i].name);
		free(c->pol[i].label);
		json_decref(c->pol[i].json);
	}
	for (i = 0; i < c->nr_ser; i++)
		series_free(&c->ser[i]);
	for (i = 0; i < c->nr_metrics; i++)
		free(c->metrics[i].name);
	free(c->metrics);
	rp_hash_free(&c->pol_idx);
	rp_hash_free(&c->metric_idx);
	rp_hash_free(&c->ser_idx);
	rp_hash_free(&c->plot_idx);
	free(c->pol);
	free(c->ser);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

void rp_run_free(struct rp_run *run)
{
	size_t i;

	for (i = 0; i < run->nr_cases; i++)
		case_free(&run->cases[i]);
	case_free(&run->pending);
	free(run->by_hash);
	free(run->cases);
	free(run->open);
	for (i = 0; i < run->nr_names; i++)
		free(run->names[i]);
	free(run->names);
}

const struct rp_policy *rp_policy_find(const struct rp_case *c,
				       const char *metric)
{
	size_t i = rp_hash_get(&c->pol_idx, metric);

	return i == RP_NONE ? NULL : &c->pol[i];
}

const struct rp_policy *rp_policy_default(void)
{
	static const struct rp_policy p = {
		.summarize = RP_TOTAL,
		.scale = 1,
	};

	return &p;
}

static bool stat_parse(const char *s, bool distribution, enum rp_stat *out)
{
	int i;

	for (i = 0; i < RP_NR_STATS; i++) {
		if (i == RP_DISTRIBUTION && !distribution)
			break;
		if (!strcmp(s, rp_stat_names[i])) {
			*out = i;
			return true;
		}
	}
	return false;
}

/* a JSON number (integer or real) into @out */
static bool number(const json_t *j, double *out)
{
	if (!json_is_number(j))
		return false;
	*out = json_number_value(j);
	return true;
}

static bool policy_regression(struct rp_run *run, unsigned int line,
			      json_t *reg, struct rp_policy *p)
{
	bool rel = false, abs = false;
	const char *key;
	json_t *v;

	if (!json_is_object(reg)) {
		refuse(run, line, "regression: not an object");
		return false;
	}
	json_object_foreach(reg, key, v) {
		if (!strcmp(key, "compare")) {
			if (!json_is_string(v) ||
			    !stat_parse(json_string_value(v), false,
					&p->compare)) {
				refuse(run, line, "regression.compare: not one of last, total, p50, p90, p99, max");
				return false;
			}
		} else if (!strcmp(key, "better")) {
			const char *b = json_string_value(v);

			if (!b || (strcmp(b, "higher") && strcmp(b, "lower"))) {
				refuse(run, line, "regression.better: not higher or lower");
				return false;
			}
			p->higher_is_better = !strcmp(b, "higher");
		} else if (!strcmp(key, "relative_tolerance") ||
			   !strcmp(key, "absolute_tolerance")) {
			bool is_rel = key[0] == 'r';
			double t;

			if (!number(v, &t) || t < 0) {
				refuse(run, line, "regression.%s: not a non-negative number",
				       rp_esc(key));
				return false;
			}
			*(is_rel ? &p->rel_tol : &p->abs_tol) = t;
			*(is_rel ? &rel : &abs) = true;
		} else {
			refuse(run, line, "regression: unknown key \"%s\"",
			       rp_esc(key));
			return false;
		}
	}
	if (!json_object_get(reg, "compare") || !json_object_get(reg, "better")) {
		refuse(run, line, "regression: needs compare and better");
		return false;
	}
	if (!rel && !abs) {
		refuse(run, line, "regression: needs relative_tolerance or absolute_tolerance");
		return false;
	}
	p->regression = true;
	return true;
}

static bool policy_range(struct rp_run *run, unsigned int line, json_t *r,
			 struct rp_policy *p)
{
	const char *key;
	json_t *v;

	if (!json_is_object(r) || !json_object_size(r)) {
		refuse(run, line, "display_range: not an object with min or max");
		return false;
	}
	json_object_foreach(r, key, v) {
		bool is_min = !strcmp(key, "min");

		if (!is_min && strcmp(key, "max")) {
			refuse(run, line, "display_range: unknown key \"%s\"",
			       rp_esc(key));
			return false;
		}
		if (!number(v, is_min ? &p->min : &p->max)) {
			refuse(run, line, "display_range.%s: not a number",
			       rp_esc(key));
			return false;
		}
		*(is_min ? &p->has_min : &p->has_max) = true;
	}
	if (p->has_min && p->has_max && p->min >= p->max) {
		refuse(run, line, "display_range: min is not below max");
		return false;
	}
	return true;
}

/* fills @p from @j; false, with a message, when a key or value is bad */
static bool policy_parse(struct rp_run *run, unsigned int line, json_t *j,
			 struct rp_policy *p)
{
	const char *key, *s;
	json_t *v;

	memset(p, 0, sizeof(*p));
	p->summarize = RP_TOTAL;
	p->scale = 1;
	json_object_foreach(j, key, v) {
		s = json_string_value(v);
		if (!strcmp(key, "name")) {
			if (!s || !*s) {
				refuse(run, line, "name: not a non-empty string");
				return false;
			}
		} else if (!strcmp(key, "summarize")) {
			if (!s || !stat_parse(s, true, &p->summarize)) {
				refuse(run, line, "summarize: not one of last, total, p50, p90, p99, max, distribution");
				return false;
			}
		} else if (!strcmp(key, "transform")) {
			if (!s || strcmp(s, "rate")) {
				refuse(run, line, "transform: not \"rate\"");
				return false;
			}
			p->rate = true;
		} else if (!strcmp(key, "aggregation")) {
			if (!s || strcmp(s, "busy-core-equivalents")) {
				refuse(run, line, "aggregation: not \"busy-core-equivalents\"");
				return false;
			}
			p->busy_cores = true;
		} else if (!strcmp(key, "regression")) {
			if (!policy_regression(run, line, v, p))
				return false;
		} else if (!strcmp(key, "display_range")) {
			if (!policy_range(run, line, v, p))
				return false;
		} else if (!strcmp(key, "display_scale")) {
			if (!number(v, &p->scale) || !(p->scale > 0)) {
				refuse(run, line, "display_scale: not a positive number");
				return false;
			}
		} else if (!strcmp(key, "display_label")) {
			if (!s || !*s) {
				refuse(run, line, "display_label: not a non-empty string");
				return false;
			}
		} else {
			refuse(run, line, "unknown policy key \"%s\"",
			       rp_esc(key));
			return false;
		}
	}
	if (!json_object_get(j, "name")) {
		refuse(run, line, "policy without a name");
		return false;
	}
	p->name = rp_xstrdup(json_string_value(json_object_get(j, "name")));
	s = json_string_value(json_object_get(j, "display_label"));
	p->label = s ? rp_xstrdup(s) : NULL;
	p->json = json_incref(j);
	p->line = line;
	return true;
}

struct rp_series *rp_series_find(const struct rp_case *c, const char *key)
{
	size_t i = c ? rp_hash_get(&c->ser_idx, key) : RP_NONE;

	return i == RP_NONE ? NULL : &c->ser[i];
}

static bool same_path(const struct rp_case *a, const struct rp_case *b)
{
	size_t i;

	if (a->hash != b->hash || a->nr_path != b->nr_path)
		return false;
	for (i = 0; i < a->nr_path; i++)
		if (strcmp(a->path[i], b->path[i]))
			return false;
	return true;
}

const struct rp_case *rp_case_find(const struct rp_run *run,
				   const struct rp_case *c)
{
	size_t lo = 0, hi = run->nr_cases, mid;

	/* the first of those with its hash, then the first with its path */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (run->by_hash[mid].hash < c->hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < run->nr_cases && run->by_hash[lo].hash == c->hash; lo++)
		if (same_path(&run->cases[run->by_hash[lo].idx], c))
			return &run->cases[run->by_hash[lo].idx];
	return NULL;
}

char *rp_case_name(const struct rp_case *c)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < c->nr_path; i++)
		len += strlen(c->path[i]) + strlen(RP_PATH_SEP);
	s = rp_xrealloc(NULL, len, 1);
	*s = '\0';
	for (i = 0; i < c->nr_path; i++) {
		if (i)
			strcat(s, RP_PATH_SEP);
		strcat(s, c->path[i]);
	}
	return s;
}

static struct rp_metric *observed(const struct rp_case *c,
				  const char *metric)
{
	size_t i = rp_hash_get(&c->metric_idx, metric);

	return i == RP_NONE ? NULL : &c->metrics[i];
}

/*
 * All series of a metric in a case have one shape, whatever their hosts
 * and labels: a plot or a comparison of a scalar with per-cpu arrays
 * would mean nothing.
 */
static bool same_shape(struct rp_run *run, unsigned int line,
		       const char *metric, bool per_cpu)
{
	struct rp_case *c = &run->pending;
	struct rp_metric *m = observed(c, metric);

	if (m && m->per_cpu != per_cpu) {
		refuse(run, line, "%s: shape %s, unlike its earlier observations (line %u)",
		       rp_esc(metric), per_cpu ? "per-cpu" : "scalar", m->line);
		return false;
	}
	if (!m) {
		c->metrics = rp_grow(c->metrics, c->nr_metrics,
				     &c->cap_metrics, sizeof(*c->metrics));
		m = &c->metrics[c->nr_metrics];
		m->name = rp_xstrdup(metric);
		m->per_cpu = per_cpu;
		m->line = line;
		rp_hash_put(&c->metric_idx, m->name, c->nr_metrics++);
	}
	return true;
}

static void read_policy(struct rp_run *run, unsigned int line, json_t *j)
{
	struct rp_case *c = &run->pending;
	const struct rp_policy *old;
	struct rp_policy p;

	if (!policy_parse(run, line, j, &p))
		return;
	old = rp_policy_find(c, p.name);
	if (old && !json_equal(old->json, j)) {
		refuse(run, line, "policy of %s conflicts with line %u",
		       rp_esc(p.name), old->line);
	} else if (!old && observed(c, p.name)) {
		refuse(run, line, "policy of %s after an observation of it",
		       rp_esc(p.name));
	} else if (!old) {
		c->pol = rp_grow(c->pol, c->nr_pol, &c->cap_pol, sizeof(*c->pol));
		c->pol[c->nr_pol] = p;
		rp_hash_put(&c->pol_idx, p.name, c->nr_pol++);
		return;
	}
	free(p.name);
	free(p.label);
	json_decref(p.json);
}

/* the keys of an observation that are not labels */
static bool format_key(const char *key)
{
	return !strcmp(key, "name") || !strcmp(key, "shape") ||
	       !strcmp(key, "value") || !strcmp(key, "time");
}

/* every key other than the format's own is a label, with a scalar value */
static bool obs_labels(struct rp_run *run, unsigned int line, json_t *j)
{
	const char *key;
	json_t *v;

	json_object_foreach(j, key, v) {
		if (format_key(key))
			continue;
		if (!strcmp(key, "host") && !json_is_string(v)) {
			refuse(run, line, "host: not a string");
			return false;
		}
		if (json_is_object(v) || json_is_array(v)) {
			refuse(run, line, "label \"%s\": not a string, number, boolean or null",
			       rp_esc(key));
			return false;
		}
	}
	return true;
}

/* the name and the labels (but host, without @host) of @j as JSON text */
static char *labels_text(json_t *j, bool host)
{
	json_t *ids = json_object(), *v;
	const char *key;
	char *text;

	json_object_foreach(j, key, v) {
		if (format_key(key) && strcmp(key, "name"))
			continue;
		/* "host": "" is no host, as it has always been */
		if (!strcmp(key, "host") &&
		    (!host || (json_is_string(v) && !json_string_length(v))))
			continue;
		json_object_set(ids, key, v);
	}
	text = json_dumps(ids, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(ids);
	if (!text)
		abort();
	return text;
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rp_label *)a)->key,
		      ((const struct rp_label *)b)->key);
}

static void series_init(struct rp_series *s, json_t *j, char *key)
{
	const char *k;
	json_t *v;

	memset(s, 0, sizeof(*s));
	s->metric = rp_xstrdup(json_string_value(json_object_get(j, "name")));
	k = json_string_value(json_object_get(j, "host"));
	s->host = rp_xstrdup(k ? k : "");
	s->key = key;
	s->plot = labels_text(j, false);
	s->per_cpu = strcmp(json_string_value(json_object_get(j, "shape")),
			    "scalar");
	json_object_foreach(j, k, v) {
		if (format_key(k) || !strcmp(k, "host"))
			continue;
		s->labels = rp_xrealloc(s->labels, s->nr_labels + 1,
					sizeof(*s->labels));
		s->labels[s->nr_labels].key = rp_xstrdup(k);
		s->labels[s->nr_labels++].value = json_incref(v);
	}
	if (s->nr_labels > 1)
		qsort(s->labels, s->nr_labels, sizeof(*s->labels), label_cmp);
}

/* a new series of @c for @j, and in the index of its key and its plot */
static struct rp_series *series_add(struct rp_case *c, json_t *j, char *key)
{
	size_t idx = c->nr_ser, first;
	struct rp_series *s;

	c->ser = rp_grow(c->ser, c->nr_ser, &c->cap_ser, sizeof(*c->ser));
	s = &c->ser[c->nr_ser++];
	series_init(s, j, key);
	rp_hash_put(&c->ser_idx, s->key, idx);
	s->plot_next = RP_NONE;
	first = rp_hash_get(&c->plot_idx, s->plot);
	if (first == RP_NONE) {
		rp_hash_put(&c->plot_idx, s->plot, idx);
		s->plot_last = idx;
	} else {
		c->ser[c->ser[first].plot_last].plot_next = idx;
		c->ser[first].plot_last = idx;
	}
	return s;
}

/* the values of @j's value into @o; false, with a message, when bad */
static bool obs_values(struct rp_run *run, unsigned int line, json_t *j,
		       struct rp_obs *o)
{
	const char *shape = json_string_value(json_object_get(j, "shape"));
	json_t *val = json_object_get(j, "value"), *v;
	size_t i;

	if (!strcmp(shape, "scalar")) {
		o->n = 1;
		o->v = rp_xrealloc(NULL, 1, sizeof(double));
		if (!number(val, o->v)) {
			refuse(run, line, "value: not a number");
			free(o->v);
			return false;
		}
		return true;
	}
	if (!json_is_array(val)) {
		refuse(run, line, "value: not an array for shape per-cpu");
		return false;
	}
	o->n = json_array_size(val);
	if (o->n > RP_MAX_CPUS) {
		refuse(run, line, "value: %zu CPUs, more than the %u the report takes",
		       o->n, RP_MAX_CPUS);
		return false;
	}
	o->v = rp_xrealloc(NULL, o->n, sizeof(double));
	json_array_foreach(val, i, v) {
		if (json_is_null(v)) {
			o->v[i] = NAN;
		} else if (!number(v, &o->v[i])) {
			refuse(run, line, "value[%zu]: not a number or null", i);
			free(o->v);
			return false;
		}
	}
	return true;
}

static void read_obs(struct rp_run *run, unsigned int line, json_t *j)
{
	const char *metric, *shape;
	struct rp_case *c = &run->pending;
	struct rp_series *s;
	struct rp_obs o;
	char *key;

	metric = json_string_value(json_object_get(j, "name"));
	shape = json_string_value(json_object_get(j, "shape"));
	if (!metric || !*metric) {
		refuse(run, line, "name: not a non-empty string");
		return;
	}
	if (!shape || (strcmp(shape, "scalar") && strcmp(shape, "per-cpu"))) {
		refuse(run, line, "shape: not scalar or per-cpu");
		return;
	}
	if (!number(json_object_get(j, "time"), &o.time)) {
		refuse(run, line, "time: not a number");
		return;
	}
	if (!obs_labels(run, line, j) || !obs_values(run, line, j, &o))
		return;
	if (!same_shape(run, line, metric, strcmp(shape, "scalar"))) {
		free(o.v);
		return;
	}
	key = labels_text(j, true);
	s = rp_series_find(c, key);
	if (!s)
		s = series_add(c, j, key);
	else
		free(key);
	s->obs = rp_grow(s->obs, s->nr_obs, &s->cap_obs, sizeof(*s->obs));
	s->obs[s->nr_obs++] = o;
}

/* "ok N name" or "not ok N name [# directive]": the case's name */
static char *result_line(const char *l, bool *ok)
{
	const char *name, *end;

	*ok = strncmp(l, "not ok ", 7);
	l += *ok ? 0 : 4;
	if (strncmp(l, "ok ", 3))
		return NULL;
	l += 3;
	if (*l < '0' || *l > '9')
		return NULL;
	while (*l >= '0' && *l <= '9')
		l++;
	if (*l != ' ' && *l != '\0')
		return NULL;
	name = *l ? l + 1 : l;
	end = strstr(name, " # ");
	if (!end)
		end = name + strlen(name);
	while (end > name && (end[-1] == ' ' || end[-1] == '\n'))
		end--;
	return strndup(name, end - name);
}

/* @name, a copy, kept by @run for the paths of its cases */
static const char *name_keep(struct rp_run *run, const char *name)
{
	run->names = rp_grow(run->names, run->nr_names, &run->cap_names,
			     sizeof(*run->names));
	return run->names[run->nr_names++] = rp_xstrdup(name);
}

/*
 * Cases from @first on open at @depth, where no result line encloses
 * them yet: a run of their own, unless the last run is at @depth already
 * (they follow it) or @depth is 0 (nothing can enclose them).
 */
static void open_at(struct rp_run *run, unsigned int depth, size_t first)
{
	if (!depth ||
	    (run->nr_open && run->open[run->nr_open - 1].depth == depth))
		return;
	run->open = rp_grow(run->open, run->nr_open, &run->cap_open,
			    sizeof(*run->open));
	run->open[run->nr_open++] = (struct rp_open){ depth, first };
}

/*
 * The result line @name at @depth ends every program deeper than it:
 * each case still open deeper is one of its, and is open at @depth from
 * now on. Open runs are kept by depth, so these are the last ones, and
 * each case gets a name per depth it is under, the one copy of it.
 */
static void enclose(struct rp_run *run, unsigned int depth, const char *name)
{
	size_t i, first = run->nr_cases;
	const char *kept;
	struct rp_case *c;

	if (!run->nr_open || run->open[run->nr_open - 1].depth <= depth)
		return;
	while (run->nr_open && run->open[run->nr_open - 1].depth > depth)
		first = run->open[--run->nr_open].first;
	kept = name_keep(run, name);
	for (i = first; i < run->nr_cases; i++) {
		c = &run->cases[i];
		c->path = rp_xrealloc(c->path, c->nr_path + 1,
				      sizeof(*c->path));
		c->path[c->nr_path++] = kept;
	}
	open_at(run, depth, first);
}

/* the pending metrics as the case @name at @depth */
static void case_add(struct rp_run *run, const char *name,
		     unsigned int depth, bool ok)
{
	struct rp_case *c;

	run->cases = rp_grow(run->cases, run->nr_cases, &run->cap_cases,
			     sizeof(*run->cases));
	c = &run->cases[run->nr_cases];
	*c = run->pending;
	memset(&run->pending, 0, sizeof(run->pending));
	c->path = rp_xrealloc(NULL, 1, sizeof(*c->path));
	c->path[c->nr_path++] = name_keep(run, name);
	c->ok = ok;
	open_at(run, depth, run->nr_cases);
	run->nr_cases++;
}

static int cmp_case_ref(const void *a, const void *b)
{
	const struct rp_case_ref *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* FNV-1a of @h and then @s and its NUL */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	} while (*s++);
	return h;
}

/* every case's path outermost first, its hash, and the index by hash */
static void paths_done(struct rp_run *run)
{
	size_t i, j;

	run->by_hash = rp_xrealloc(NULL, run->nr_cases,
				   sizeof(*run->by_hash));
	for (i = 0; i < run->nr_cases; i++) {
		struct rp_case *c = &run->cases[i];

		c->hash = 0xcbf29ce484222325ULL;
		for (j = 0; j < c->nr_path / 2; j++) {
			const char *t = c->path[j];

			c->path[j] = c->path[c->nr_path - 1 - j];
			c->path[c->nr_path - 1 - j] = t;
		}
		for (j = 0; j < c->nr_path; j++)
			c->hash = fnv1a(c->hash, c->path[j]);
		run->by_hash[i] = (struct rp_case_ref){ c->hash, i };
	}
	qsort(run->by_hash, run->nr_cases, sizeof(*run->by_hash),
	      cmp_case_ref);
}

static void read_line(struct rp_run *run, unsigned int line, char *l,
		      size_t len)
{
	const char *tag = NULL;
	unsigned int depth = 0;
	json_error_t err;
	bool ok, nul;
	json_t *j;
	char *name;

	while (len && (l[len - 1] == '\n' || l[len - 1] == '\r'))
		len--;
	nul = memchr(l, '\0', len);
	l[strcspn(l, "\r\n")] = '\0';
	for (; !strncmp(l, "# ", 2); depth++)
		l += 2;
	if (!strncmp(l, POLICY_TAG, sizeof(POLICY_TAG) - 1))
		tag = POLICY_TAG;
	else if (!strncmp(l, OBS_TAG, sizeof(OBS_TAG) - 1))
		tag = OBS_TAG;
	if (!tag) {
		name = result_line(l, &ok);
		if (!name)
			return;
		enclose(run, depth, name);
		if (run->pending.nr_pol || run->pending.nr_ser)
			case_add(run, name, depth, ok);
		free(name);
		return;
	}

	/* json.loads() refuses a NUL; jansson would not see what follows it */
	if (nul) {
		refuse(run, line, "a NUL byte in the line");
		return;
	}
	/* NaN and Infinity are not JSON: jansson refuses them too */
	j = json_loads(l + strlen(tag), JSON_REJECT_DUPLICATES, &err);
	if (!j) {
		refuse(run, line, "not JSON: %s, column %d of the JSON",
		       rp_esc(err.text), err.column);
		return;
	}
	if (!json_is_object(j))
		refuse(run, line, "not a JSON object");
	else if (tag == POLICY_TAG)
		read_policy(run, line, j);
	else
		read_obs(run, line, j);
	json_decref(j);
}

int rp_read(struct rp_run *run, FILE *f)
{
	unsigned int line = 0;
	size_t cap = 0;
	char *l = NULL;
	ssize_t len;
	int err = 0;

	for (;;) {
		char *p, *end, *cr;

		errno = 0;
		len = getline(&l, &cap, f);
		/* the errno of the getline() that failed, not a later one */
		if (ferror(f) && !err)
			err = errno ? errno : EIO;
		if (len < 0)
			break;
		/*
		 * A lone CR ends a line too, as Python's universal newlines
		 * read a file: a CR-only file is not one long line.
		 */
		p = l;
		end = l + len;
		while ((cr = memchr(p, '\r', end - p)) && cr + 1 < end &&
		       cr[1] != '\n') {
			read_line(run, ++line, p, cr + 1 - p);
			p = cr + 1;
		}
		read_line(run, ++line, p, end - p);
	}
	free(l);
	/* metrics with no result line after them: a case of their own */
	if (run->pending.nr_pol || run->pending.nr_ser)
		case_add(run, "(no result line)", 0, false);
	paths_done(run);
	return err;
}
