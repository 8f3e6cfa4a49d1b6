// SPDX-License-Identifier: GPL-2.0
/*
 * The plots of ksft-perfmon-report --svg: one SVG file per test case,
 * metric and labels but host, a line per host for a scalar series and a
 * heat map per host for a per-cpu one, under names made safe for any
 * file system.
 */

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "report.h"

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
 * return, nor U+FFFE and U+FFFF, not even as character references, and
 * HTML takes no C1 control or DEL either: those are written as the text
 * \uXXXX, as JSON escapes them, and so are the line and bidi controls
 * that would change how the text around them is shown (as rp_esc()
 * does); a byte that is not UTF-8 (a case name can be anything) as \xNN.
 */
void rp_xml_text(FILE *f, const char *s)
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
		else if (rp_esc_cp(cp) || cp == 0xfffe || cp == 0xffff)
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

/*
 * Where @v is from @lo to @hi, 0 to 1: finite for every finite @v, @lo
 * and @hi > @lo, exact where hi - lo is a double (subnormal ones too),
 * through halves where it is over DBL_MAX.
 */
static double svg_frac(double v, double lo, double hi)
{
	double d = hi - lo;

	if (isfinite(d))
		return (v - lo) / d;
	return (v / 2 - lo / 2) / (hi / 2 - lo / 2);
}

/* the value a fraction @x of the way from @lo to @hi, finite as they are */
static double svg_at(double x, double lo, double hi)
{
	return lo * (1 - x) + hi * x;
}

/*
 * A range a person tells apart from a point: around a value, or values
 * within a millionth of it of each other (a flat rate, less a division's
 * rounding), a millionth of it (at least 0.5) either side, so that a
 * flat series at 2e16, where a double's step is 4, is a line in the
 * middle and its ticks are round.
 */
static void svg_widen(double *lo, double *hi)
{
	double mid = *lo / 2 + *hi / 2;
	double d = fmax(0.5, fabs(mid) * 1e-6);

	if (*hi > *lo && *hi - *lo > fabs(mid) * 1e-6)
		return;
	*lo = mid - d;
	*hi = mid + d;
	if (!isfinite(*hi)) {
		*hi = mid;
		*lo = mid - 2 * d;
	} else if (!isfinite(*lo)) {
		*lo = mid;
		*hi = mid + 2 * d;
	}
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
	if (!isfinite(r.t0)) {
		r.t0 = 0;
		r.t1 = 1;
	}
	/* display_range fixes the axis, unless it is a point */
	if (!(p->has_min && p->has_max && r.hi > r.lo))
		svg_widen(&r.lo, &r.hi);
	svg_widen(&r.t0, &r.t1);
	return r;
}

static double svg_x(const struct svg_range *r, double t)
{
	return SVG_LEFT + svg_frac(t, r->t0, r->t1) *
	       (SVG_W - SVG_LEFT - SVG_RIGHT);
}

/* at most this many ticks on an axis, at round numbers */
#define SVG_TICKS	8

/* an axis's ticks: @n at @t, @step apart (0: not round), up to @max */
struct svg_ticks {
	double t[SVG_TICKS];
	double step, max;	/* max: the largest magnitude of a tick */
	int n;
};

/*
 * Ticks from @lo to @hi at a round step (1, 2 or 5 times a power of 10)
 * of about a quarter of the range. Where no such step is a double that
 * tells ticks apart (ranges at a double's edges), five evenly spaced ones
 * and a step of 0.
 */
static void svg_ticks(double lo, double hi, struct svg_ticks *tk)
{
	double raw = (hi - lo) / 4, mag, first, step;
	int n = 0;

	mag = pow(10, floor(log10(raw)));
	step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag :
	       raw / mag < 7 ? 5 * mag : 10 * mag;
	first = ceil(lo / step) * step;
	if (isfinite(step) && step > 0 && isfinite(first) &&
	    first + step > first)
		for (; n < SVG_TICKS; n++) {
			tk->t[n] = first + n * step;
			if (!isfinite(tk->t[n]) || tk->t[n] - hi > step * 1e-9)
				break;
		}
	if (n < 2) {
		for (n = 0; n <= 4; n++)
			tk->t[n] = svg_at(n / 4.0, lo, hi);
		step = 0;
	}
	tk->n = n;
	tk->step = step;
	tk->max = fmax(fabs(tk->t[0]), fabs(tk->t[n - 1]));
}

/*
 * Tick @k of @tk: as many decimals as the step has, with an SI prefix
 * from 10,000 on (20, 0.5, 2500, 25k, 1.5G)
 */
static void svg_tick_text(FILE *f, const struct svg_ticks *tk, int k)
{
	static const char prefix[] = " kMGTPE";
	double v = tk->t[k], step = tk->step, max = tk->max;
	double div = 1;
	int i = 0, dec;

	for (; max >= 10000 && max / div >= 999.5 && i < 6; i++)
		div *= 1000;
	dec = step > 0 ? (int)-floor(log10(step / div) + 1e-9) : 99;
	if (dec < 0)
		dec = 0;
	if (fabs(v) < step / 2)
		fputc('0', f);
	else if (!step)
		fprintf(f, "%.4g", v);
	else if (dec > 9 || max / div >= 999.5 * (i ? 1 : 10))
		/* the digits that tell ticks a step apart */
		fprintf(f, "%.*g", (int)fmin(17, ceil(log10(max / step)) + 1),
			v);
	else if (i)
		fprintf(f, "%.*f%c", dec, v / div, prefix[i]);
	else
		fprintf(f, "%.*f", dec, v);
}

/* a value axis's name: display_label, else what the policy made of it */
static void svg_value_name(FILE *f, const struct rp_policy *p)
{
	if (p->label)
		rp_xml_text(f, p->label);
	else
		fprintf(f, "%s%s", p->rate ? "per second" : "value",
			p->scale != 1 ? " (scaled)" : "");
}

/*
 * The frame of a plot of height @h at @y0, its time axis with ticks and
 * its name, and with @p a value axis with ticks, grid lines and a name
 */
static void svg_axes(FILE *f, const struct svg_range *r, double y0,
		     double h, const struct rp_policy *p)
{
	struct svg_ticks tk;
	double y;
	int i;

	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
		SVG_LEFT, y0, SVG_W - SVG_LEFT - SVG_RIGHT, h);
	svg_ticks(r->t0, r->t1, &tk);
	for (i = 0; i < tk.n; i++) {
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
			svg_x(r, tk.t[i]), svg_x(r, tk.t[i]), y0 + h,
			y0 + h + 4);
		fprintf(f, "<text class=\"tick-t\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
			svg_x(r, tk.t[i]), y0 + h + 16);
		svg_tick_text(f, &tk, i);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">time (s)</text>\n",
		SVG_W - SVG_RIGHT, y0 + h + 30);
	if (!p)
		return;
	svg_ticks(r->lo, r->hi, &tk);
	for (i = 0; i < tk.n; i++) {
		y = y0 + h - svg_frac(tk.t[i], r->lo, r->hi) * h;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			SVG_LEFT, SVG_W - SVG_RIGHT, y, y);
		fprintf(f, "<text class=\"tick-v\" x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">",
			SVG_LEFT - 4, y + 4);
		svg_tick_text(f, &tk, i);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text class=\"axis\" x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
		y0 + h / 2, y0 + h / 2);
	svg_value_name(f, p);
	fputs("</text>\n", f);
}

static void svg_scalar(FILE *f, const struct rp_points *pts,
		       const struct rp_series **ser, size_t n,
		       const struct rp_policy *p)
{
	struct svg_range r = svg_range(pts, n, p);
	size_t i, k;

	svg_axes(f, &r, SVG_TOP, SVG_PLOT_H, p);
	for (i = 0; i < n; i++) {
		const char *color = host_colors[i % 6];

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			color);
		for (k = 0; k < pts[i].col[0].nr; k++) {
			double v = fmin(fmax(pts[i].col[0].v[k], r.lo), r.hi);
			double t = pts[i].t[pts[i].col[0].idx[k]];

			fprintf(f, "%.1f,%.1f ", svg_x(&r, t),
				SVG_TOP + SVG_PLOT_H -
				svg_frac(v, r.lo, r.hi) * SVG_PLOT_H);
		}
		fputs("\"/>\n", f);
		fprintf(f, "<text x=\"%zu\" y=\"%d\" font-size=\"12\" fill=\"%s\">",
			SVG_LEFT + 10 + i * 120, SVG_TOP - 8, color);
		rp_xml_text(f, *ser[i]->host ? ser[i]->host : "-");
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
		heat_color(svg_frac(v, r->lo, r->hi), color, sizeof(color));
		fprintf(f, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			x0, y, svg_x(r, pts->t[k]) - x0 + 0.5, row, color);
	}
}

/* the color scale under the heat maps, its top at @y */
#define SVG_SCALE_H	50
#define SVG_SCALE_W	300

static void svg_color_scale(FILE *f, const struct svg_range *r, double y,
			    const struct rp_policy *p, const char *id)
{
	struct svg_ticks tk;
	char color[8];
	double x;
	int i;

	fprintf(f, "<defs><linearGradient id=\"%s\">", id);
	for (i = 0; i <= 10; i++) {
		heat_color(i / 10.0, color, sizeof(color));
		fprintf(f, "<stop offset=\"%d%%\" stop-color=\"%s\"/>",
			i * 10, color);
	}
	fputs("</linearGradient></defs>\n", f);
	fprintf(f, "<rect class=\"scale\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"12\" fill=\"url(#%s)\" stroke=\"#444\"/>\n",
		SVG_LEFT, y, SVG_SCALE_W, id);
	svg_ticks(r->lo, r->hi, &tk);
	for (i = 0; i < tk.n; i++) {
		x = SVG_LEFT + svg_frac(tk.t[i], r->lo, r->hi) * SVG_SCALE_W;
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
			x, x, y + 12, y + 16);
		fprintf(f, "<text class=\"tick-c\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
			x, y + 28);
		svg_tick_text(f, &tk, i);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%.1f\" font-size=\"12\">",
		SVG_LEFT + SVG_SCALE_W + 12, y + 11);
	svg_value_name(f, p);
	fputs("</text>\n", f);
}

/* a heat map's row height for @cpus CPUs: 4 to 40 pixels, 240 in all */
static double svg_row(size_t cpus)
{
	return fmax(4, fmin(40, 240.0 / cpus));
}

static void svg_heat(FILE *f, const struct rp_points *pts,
		     const struct rp_series **ser, size_t n,
		     const struct rp_policy *p, const char *id)
{
	struct svg_range r = svg_range(pts, n, p);
	double y0 = SVG_TOP;
	size_t i, cpu, every;

	for (i = 0; i < n; i++) {
		double row = svg_row(pts[i].width);
		double h = row * pts[i].width;

		svg_axes(f, &r, y0, h, NULL);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\">",
			SVG_LEFT, y0 - 6);
		rp_xml_text(f, *ser[i]->host ? ser[i]->host : "-");
		fputs(", one row per CPU</text>\n", f);
		fprintf(f, "<text class=\"axis\" x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">CPU</text>\n",
			y0 + h / 2, y0 + h / 2);
		/* a CPU's number every 10 pixels or more: 1, 2, 4... rows */
		for (every = 1; row * every < 10; every *= 2)
			;
		for (cpu = 0; cpu < pts[i].width; cpu++) {
			if (cpu % every == 0)
				fprintf(f, "<text class=\"cpu\" x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"end\">%zu</text>\n",
					SVG_LEFT - 4,
					y0 + row * (cpu + 1) - (row - 7) / 2,
					cpu);
			svg_cells(f, &pts[i], cpu, &r, y0 + row * cpu, row);
		}
		y0 += h + SVG_BOTTOM;
	}
	svg_color_scale(f, &r, y0 - 10, p, id);
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

	f = rp_xmemstream(&name, &len);
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
			rp_jw_label(&w, v);
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

/* @id: of the heat maps' color gradient, unique in a page of plots */
static void svg_write(FILE *f, const struct rp_case *c,
		      const struct rp_series *first, const struct rp_policy *p,
		      const struct rp_points *pts,
		      const struct rp_series **ser, size_t n, const char *id)
{
	size_t height = SVG_TOP + SVG_PLOT_H + SVG_BOTTOM, i;
	char *title;

	if (first->per_cpu) {
		height = SVG_TOP + SVG_SCALE_H;
		for (i = 0; i < n; i++)
			height += svg_row(pts[i].width) * pts[i].width +
				  SVG_BOTTOM;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" font-family=\"sans-serif\">\n",
		SVG_W, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"16\" font-size=\"14\">", SVG_LEFT);
	title = rp_series_name(first, false);
	rp_xml_text(f, title);
	free(title);
	fputs(" (", f);
	title = rp_case_name(c);
	rp_xml_text(f, title);
	free(title);
	fprintf(f, ")%s</text>\n", p->rate ? ", rate" : "");
	if (first->per_cpu)
		svg_heat(f, pts, ser, n, p, id);
	else
		svg_scalar(f, pts, ser, n, p);
	fputs("</svg>\n", f);
}

/* the plot of series @first_idx into @f, its gradient @id */
static void svg_draw(FILE *f, const struct rp_case *c, size_t first_idx,
		     const char *id)
{
	const struct rp_series *first = &c->ser[first_idx];
	const struct rp_policy *p = rp_policy_of(c, first);
	const struct rp_series *ser[SVG_MAX_SERIES];
	struct rp_points pts[SVG_MAX_SERIES];
	size_t n, i;

	n = svg_points(c, first_idx, p, pts, ser, SVG_MAX_SERIES);
	svg_write(f, c, first, p, pts, ser, n, id);
	for (i = 0; i < n; i++)
		rp_points_free(&pts[i]);
}

/* a plot of the series @first_idx and those of other hosts and its labels */
static int svg_plot(int dirfd, const char *dir, const char *name,
		    const struct rp_case *c, size_t first_idx)
{
	const char *why = NULL;
	struct stat st;
	FILE *f = NULL;
	int fd, bad;

	/*
	 * Not through a link someone planted where the plot goes, nor into
	 * a FIFO (O_NONBLOCK: no wait for a reader, ENXIO without one) or a
	 * device: a plot replaces a regular file or none.
	 */
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC, 0644);
	if (fd < 0)
		why = errno == ENXIO ? "not a regular file" : strerror(errno);
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (fcntl(fd, F_SETFL, 0) || ftruncate(fd, 0) ||
		 !(f = fdopen(fd, "w")))
		why = strerror(errno);
	if (why) {
		fprintf(stderr, PROG ": %s/%s: %s\n", dir, name, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	svg_draw(f, c, first_idx, "heat");
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

	f = rp_xmemstream(&name, &len);
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
int rp_svg_case(int dirfd, const char *dir, size_t idx,
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

void rp_svg_inline(FILE *f, const struct rp_case *c, size_t idx)
{
	char id[48];
	size_t i;

	for (i = 0; i < c->nr_ser; i++) {
		if (rp_hash_get(&c->plot_idx, c->ser[i].plot) != i)
			continue;
		snprintf(id, sizeof(id), "heat-%zu-%zu", idx, i + 1);
		svg_draw(f, c, i, id);
	}
}
