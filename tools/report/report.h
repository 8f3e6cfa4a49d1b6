/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read the KTAP metric lines of a test run and apply each metric's policy
 * as the netdev CI defines it: transform, then aggregation, then
 * summarize (Documentation/man/ksft-perfmon-report.rst). What the files
 * of ksft-perfmon-report share: util.c (memory, the index of strings),
 * read.c (the lines read), summary.c (the arithmetic, verdicts and rows),
 * svg.c (--svg), html.c (--html) and openmetrics.c (--openmetrics).
 */
#ifndef KPM_REPORT_H
#define KPM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROG "ksft-perfmon-report"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define RP_NONE	SIZE_MAX	/* no index */

/* between the names of a case's path where a person reads it */
#define RP_PATH_SEP	" / "

/* an index of strings: open addressing, linear probing, half full at most */
struct rp_hash {
	struct rp_hash_slot {
		const char *key;	/* owned by what idx stands for */
		size_t idx;
	} *slot;
	size_t cap, nr;
};

/* the index that @key stands for in @h, or RP_NONE */
size_t rp_hash_get(const struct rp_hash *h, const char *key);
/* @key, which is not in @h, for @idx; @key must outlive @h */
void rp_hash_put(struct rp_hash *h, const char *key, size_t idx);
void rp_hash_free(struct rp_hash *h);

/*
 * @s as a terminal may show it: UTF-8 as it is, but for the controls a
 * terminal acts on or that change what it shows (C0, DEL, C1, line and
 * bidi controls) as \uXXXX, as the JSON writer writes them, and a byte
 * that is not UTF-8 as \xNN. Valid until the RP_ESC_RING-th call after
 * this one.
 */
#define RP_ESC_RING	8
const char *rp_esc(const char *s);
/* whether rp_esc() escapes code point @cp: C0, DEL, C1, line and bidi */
bool rp_esc_cp(unsigned int cp);

/*
 * @v for a person to read, into @buf: four significant digits below
 * 10,000 (135.2, 0.01235), three and an SI prefix from there (10k,
 * 12.3k, 9.41G, up to E); @buf.
 */
#define RP_FMT_LEN	32
const char *rp_fmt(double v, char *buf, size_t len);

/*
 * realloc(), strdup(), open_memstream() and an array that grows by
 * doubling; abort on ENOMEM
 */
void *rp_xrealloc(void *p, size_t n, size_t size);
char *rp_xstrdup(const char *s);
FILE *rp_xmemstream(char **buf, size_t *len);
/* grows *@arr of *@cap elements of @size to hold one more than @nr */
void *rp_grow(void *arr, size_t nr, size_t *cap, size_t size);

enum rp_stat {
	RP_LAST, RP_TOTAL, RP_P50, RP_P90, RP_P99, RP_MAX, RP_DISTRIBUTION,
	RP_NR_STATS
};

extern const char *const rp_stat_names[RP_NR_STATS];

struct rp_policy {
	char *name;
	void *json;		/* as registered, to find a conflicting one */
	unsigned int line;
	enum rp_stat summarize;
	bool rate;
	bool busy_cores;	/* aggregation busy-core-equivalents */
	bool regression;
	enum rp_stat compare;
	bool higher_is_better;
	double rel_tol, abs_tol;	/* 0 when absent */
	bool has_min, has_max;
	double min, max;	/* display_range */
	double scale;		/* display_scale, 1 when absent */
	char *label;		/* display_label or NULL */
};

/* one observation; NAN stands for null in a per-cpu array */
struct rp_obs {
	double time;
	double *v;
	size_t n;
};

/* a label of an observation other than host: a key and a JSON scalar */
struct rp_label {
	char *key;
	void *value;		/* json_t: a string, number, bool or null */
};

struct rp_series {
	char *metric;
	char *host;		/* "" without a host label */
	char *key;		/* name and all labels as JSON: its id */
	char *plot;		/* the same but host: the plot it is in */
	struct rp_label *labels;	/* the labels but host, sorted by key */
	size_t nr_labels;
	bool per_cpu;
	struct rp_obs *obs;
	size_t nr_obs, cap_obs;
	/* the next series of the same plot, and in its first, the last */
	size_t plot_next, plot_last;
};

/* a metric name observed in a case, in any series */
struct rp_metric {
	char *name;
	bool per_cpu;		/* the shape of all its series */
	unsigned int line;	/* of its first observation */
};

/*
 * A case is its path: the names of the result lines that enclose its own,
 * from the outermost program to the case, as a nested KTAP run writes
 * them after it (rp_read() puts each in as it comes). The names are the
 * run's, each kept once however many cases it encloses.
 */
struct rp_case {
	const char **path;	/* innermost first while read, then outermost */
	size_t nr_path;
	uint64_t hash;		/* of the path, to find it in another run */
	bool ok;
	struct rp_policy *pol;
	size_t nr_pol, cap_pol;
	struct rp_metric *metrics;
	size_t nr_metrics, cap_metrics;
	struct rp_series *ser;
	size_t nr_ser, cap_ser;
	/* by name, key and plot (its first series) */
	struct rp_hash pol_idx, metric_idx, ser_idx, plot_idx;
};

/*
 * Cases whose enclosing result lines are still to come: runs of cases
 * from @first to the next run's (or the last case), the innermost
 * enclosing name of each at depth @depth.
 */
struct rp_open {
	unsigned int depth;
	size_t first;
};

struct rp_run {
	const char *file;	/* for messages */
	struct rp_case *cases;
	size_t nr_cases, cap_cases;
	/* the cases by rp_case.hash, then in their order */
	struct rp_case_ref {
		uint64_t hash;
		size_t idx;
	} *by_hash;
	char **names;		/* of the result lines in the cases' paths */
	size_t nr_names, cap_names;
	struct rp_case pending;	/* metrics not yet followed by a result */
	struct rp_open *open;	/* by depth, the outermost first */
	size_t nr_open, cap_open;
	unsigned int errors;	/* lines refused, each with a message */
};

/*
 * The widest per-cpu array read: Linux's NR_CPUS is at most 8192 (x86_64
 * with MAXSMP, powerpc), so this leaves room to grow while a row of the
 * table or of --json stays of a sane width.
 */
#define RP_MAX_CPUS	65536

/* the values of one column of points, only those that exist */
struct rp_col {
	double *v;
	size_t *idx;		/* the point of each value */
	size_t nr, cap;
};

/*
 * A series after its policy's transform and aggregation: memory in
 * proportion to the values, not to the points times the widest array.
 */
struct rp_points {
	double *t;		/* the time of each point */
	struct rp_col *col;	/* width columns */
	size_t nr, width;	/* width 1 once aggregated or for a scalar */
};

void rp_run_init(struct rp_run *run, const char *file);
void rp_run_free(struct rp_run *run);
/*
 * Reads every line; refused ones are counted in run->errors. 0, or the
 * errno of a read that failed (the lines before it are read).
 */
int rp_read(struct rp_run *run, FILE *f);

const struct rp_policy *rp_policy_find(const struct rp_case *c,
				       const char *metric);
/* the series whose rp_series.key is @key in @c (which may be NULL), or NULL */
struct rp_series *rp_series_find(const struct rp_case *c, const char *key);
/* the first case of @run with the path of case @c, or NULL */
const struct rp_case *rp_case_find(const struct rp_run *run,
				   const struct rp_case *c);
/* @c's path joined by RP_PATH_SEP, as it is shown; malloc()ed */
char *rp_case_name(const struct rp_case *c);
/* default policy: summarize total, nothing else */
const struct rp_policy *rp_policy_default(void);

void rp_process(const struct rp_series *s, const struct rp_policy *p,
		struct rp_points *out);
void rp_points_free(struct rp_points *pts);

/*
 * How evenly the queues of a netdev carried a counter in a case: a group
 * of scalar series of one metric and host that differ only in a numeric
 * "queue" label, two or more. Each queue's amount is its series' last
 * value less its first (a counter since the start: what the queue
 * carried in the case); of those amounts, the coefficient of variation
 * (population standard deviation over the mean) and the largest over the
 * mean, NAN when the mean is 0.
 */
struct rp_balance {
	size_t first;		/* the group's first series, for its name */
	size_t nr;		/* its queues */
	double total, cv, max_mean;
};

/*
 * The balances of case @c, malloc()ed into *@out, in the order of their
 * first series; how many. With @of, an array of c->nr_ser: the balance of
 * each series, RP_NONE for none.
 */
size_t rp_balances(const struct rp_case *c, struct rp_balance **out,
		   size_t *of);
/*
 * @stat of column @col of @pts (never RP_DISTRIBUTION); false when the
 * column has no value.
 */
bool rp_stat(const struct rp_points *pts, size_t col, enum rp_stat stat,
	     double *out);
/* linear interpolation between closest ranks, as numpy's default */
double rp_percentile(const double *sorted, size_t n, double p);

/* a series' verdict against the baseline, and the numbers behind it */
enum rp_verdict {
	V_NONE, V_NO_BASELINE, V_IMPROVED, V_UNCHANGED, V_REGRESSED,
	V_PER_CPU,	/* nothing to compare: per-cpu without aggregation */
};

struct rp_verdict_info {
	enum rp_verdict v;
	double current, baseline, allowance;
};

struct jw;
struct json_t;

/* @v, a label's value (a json_t), as json.dumps writes it */
void rp_jw_label(struct jw *w, const struct json_t *v);
/* the policy of series @s of case @c, or the default one */
const struct rp_policy *rp_policy_of(const struct rp_case *c,
				     const struct rp_series *s);
/*
 * the metric's name and its labels but host: name{key="value",key=1};
 * with @no_queue, but queue too; malloc()ed
 */
char *rp_series_name(const struct rp_series *s, bool no_queue);
/* series @s of case @c against the same series of @base, if any */
struct rp_verdict_info rp_judge(const struct rp_run *base,
				const struct rp_case *c,
				const struct rp_series *s,
				const struct rp_policy *p);
/*
 * What a value of series @s is multiplied by to be shown as policy @p
 * says: display_scale, which is of a CPU's value, times 100 for
 * busy-core-equivalents of percentages (their sum over 100)
 */
double rp_display_scale(const struct rp_series *s, const struct rp_policy *p);
/*
 * The values of a row of the table, of @pts of series @s as policy @p
 * shows them (a column per CPU, each with its statistics), and the
 * numbers of verdict @vi, into @f (the table and --html)
 */
void rp_values_text(FILE *f, const struct rp_series *s,
		    const struct rp_points *pts, const struct rp_policy *p);
/*
 * What a shown value of policy @p is in: display_label, or without one
 * "(scaled xN)" for a display_scale (in @buf), or ""
 */
#define RP_UNIT_LEN	32
const char *rp_unit(const struct rp_policy *p, char *buf, size_t len);
void rp_verdict_text(FILE *f, const struct rp_series *s,
		     const struct rp_policy *p,
		     const struct rp_verdict_info *vi);
/* the row of series @s in the table */
void rp_table_row(const struct rp_case *c, const struct rp_series *s,
		  const struct rp_verdict_info *vi);
/*
 * A row of --json, or when it would not be the truth (a value JSON cannot
 * hold, a name that is not UTF-8), none and a message: false.
 */
bool rp_json_row(const struct rp_run *run, const struct rp_case *c,
		 const struct rp_series *s, const struct rp_verdict_info *vi);
/* the balance across queues @b of case @c: a row of the table or --json */
bool rp_balance_row(const struct rp_run *run, const struct rp_case *c,
		    const struct rp_balance *b, bool json);

/*
 * --svg: the plots of case @c, the @idx-th of the run, into directory
 * @dir, open as @dirfd; 0, or -1 when one could not be written (each
 * named on stderr)
 */
int rp_svg_case(int dirfd, const char *dir, size_t idx,
		const struct rp_case *c);

/*
 * The plots of case @c, the @idx-th of the run, into @f, one <svg> after
 * another, for a page that holds them (--html)
 */
void rp_svg_inline(FILE *f, const struct rp_case *c, size_t idx);
/*
 * @s as XML 1.0 (and HTML) text: markup escaped, characters XML has
 * not as \uXXXX, a byte that is not UTF-8 as \xNN
 */
void rp_xml_text(FILE *f, const char *s);

/*
 * --html: @run as one self-contained HTML page into @f, with verdicts
 * against @base (or NULL) (html.c)
 */
void rp_html(const struct rp_run *run, const struct rp_run *base, FILE *f);

/* what --openmetrics adds to every sample, and where its times start */
struct rp_om_opts {
	const char *run_id;	/* label "run", or NULL */
	const char *kernel;	/* label "kernel", or NULL */
	double start;		/* the Unix time of each case's time 0 */
};

/*
 * @run as OpenMetrics text into @f (openmetrics.c); false when a
 * series could not be written, each named on stderr
 */
bool rp_openmetrics(const struct rp_run *run, const struct rp_om_opts *o,
		    FILE *f);
/* whether @s is UTF-8, as OpenMetrics text must be */
bool rp_utf8_valid(const char *s);

#endif
