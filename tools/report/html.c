// SPDX-License-Identifier: GPL-2.0
/*
 * ksft-perfmon-report --html: a run as one page that needs nothing else,
 * no script, no style sheet, no image from elsewhere: per test case, the
 * table with the verdicts against a baseline, the queue balances and the
 * plots, inline.
 */

#include <stdlib.h>

#include "report.h"

static const char html_style[] =
	"body{font-family:sans-serif;margin:1em 2em;color:#222}"
	"h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"th,td{border:1px solid #ccc;padding:2px 8px;text-align:left}"
	"th{background:#f4f4f4}"
	"td.value{font-variant-numeric:tabular-nums}td.unit{white-space:nowrap}"
	"tr.regressed td{background:#fdd}tr.improved td{background:#dfd}"
	"p.none{color:#888}svg{display:block;margin:1em 0}";

/* @pts of @s as the table shows them, then its unit: two cells */
static void html_values(FILE *f, const struct rp_series *s,
			const struct rp_points *pts,
			const struct rp_policy *p)
{
	char buf[RP_UNIT_LEN];
	char *text;
	size_t len;
	FILE *m;

	m = rp_xmemstream(&text, &len);
	rp_values_text(m, s, pts, p);
	fclose(m);
	fputs("<td class=\"value\">", f);
	rp_xml_text(f, text[0] == ' ' ? text + 1 : text);
	fputs("</td><td class=\"unit\">", f);
	rp_xml_text(f, rp_unit(p, buf, sizeof(buf)));
	fputs("</td>", f);
	free(text);
}

static void html_verdict(FILE *f, const struct rp_series *s,
			 const struct rp_policy *p,
			 const struct rp_verdict_info *vi)
{
	char *text;
	size_t len;
	FILE *m;

	fputs("<td>", f);
	if (vi->v != V_NONE) {
		m = rp_xmemstream(&text, &len);
		rp_verdict_text(m, s, p, vi);
		fclose(m);
		rp_xml_text(f, text);
		free(text);
	}
	fputs("</td>", f);
}

static void html_cell(FILE *f, const char *s)
{
	fputs("<td>", f);
	rp_xml_text(f, s);
	fputs("</td>", f);
}

/* the table of case @c, with a column of verdicts with @base */
static void html_table(FILE *f, const struct rp_run *base,
		       const struct rp_case *c)
{
	const struct rp_policy *p;
	struct rp_verdict_info vi;
	struct rp_points pts;
	size_t i;
	char *name;

	fputs("<table class=\"summary\"><tr><th>metric</th><th>host</th><th>summarize</th><th>n</th><th>value</th><th>unit</th>",
	      f);
	fputs(base ? "<th>against the baseline</th></tr>\n" : "</tr>\n", f);
	for (i = 0; i < c->nr_ser; i++) {
		const struct rp_series *s = &c->ser[i];

		p = rp_policy_of(c, s);
		vi = rp_judge(base, c, s, p);
		rp_process(s, p, &pts);
		name = rp_series_name(s, false);
		fprintf(f, "<tr class=\"%s\">",
			vi.v == V_REGRESSED ? "regressed" :
			vi.v == V_IMPROVED ? "improved" : "series");
		html_cell(f, name);
		html_cell(f, *s->host ? s->host : "-");
		html_cell(f, rp_stat_names[p->summarize]);
		fprintf(f, "<td>%zu</td>", pts.nr);
		html_values(f, s, &pts, p);
		if (base)
			html_verdict(f, s, p, &vi);
		fputs("</tr>\n", f);
		free(name);
		rp_points_free(&pts);
	}
	fputs("</table>\n", f);
}

/* the queue balances of case @c, if it has any */
static void html_balances(FILE *f, const struct rp_case *c)
{
	struct rp_balance *bal;
	char buf[RP_FMT_LEN];
	size_t i, nr;
	char *name;

	nr = rp_balances(c, &bal, NULL);
	if (nr)
		fputs("<table class=\"balances\"><tr><th>balance of</th><th>host</th><th>queues</th><th>total</th><th>cv</th><th>max/mean</th></tr>\n",
		      f);
	for (i = 0; i < nr; i++) {
		const struct rp_series *s = &c->ser[bal[i].first];

		name = rp_series_name(s, true);
		fputs("<tr>", f);
		html_cell(f, name);
		html_cell(f, *s->host ? s->host : "-");
		fprintf(f, "<td>%zu</td><td>%s</td><td>%.4g</td><td>%.4g</td></tr>\n",
			bal[i].nr, rp_fmt(bal[i].total, buf, sizeof(buf)),
			bal[i].cv, bal[i].max_mean);
		free(name);
	}
	if (nr)
		fputs("</table>\n", f);
	free(bal);
}

void rp_html(const struct rp_run *run, const struct rp_run *base, FILE *f)
{
	char *name;
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>",
	      f);
	rp_xml_text(f, run->file);
	fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>", html_style);
	rp_xml_text(f, run->file);
	fputs("</h1>\n<p>", f);
	fprintf(f, "%zu test cases with metrics", run->nr_cases);
	if (base) {
		fputs(", against the baseline ", f);
		rp_xml_text(f, base->file);
	}
	fputs("</p>\n", f);
	if (!run->nr_cases)
		fputs("<p class=\"none\">no metric lines</p>\n", f);
	for (i = 0; i < run->nr_cases; i++) {
		const struct rp_case *c = &run->cases[i];

		name = rp_case_name(c);
		fprintf(f, "<h2 id=\"case-%zu\">", i + 1);
		rp_xml_text(f, name);
		free(name);
		fprintf(f, " (%s)</h2>\n", c->ok ? "ok" : "not ok");
		html_table(f, base, c);
		html_balances(f, c);
		rp_svg_inline(f, c, i + 1);
	}
	fputs("</body></html>\n", f);
}
