// SPDX-License-Identifier: GPL-2.0
/*
 * A command's options from one table (opts.h): getopt_long()'s string and
 * array, --help and the usage error.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const struct kpm_opt help_opt = {
	.name = "help", .val = 'h', .help = "this text",
};

typedef void (*opt_fn)(const struct kpm_opt *o, void *arg);

/* @fn on each option of @opts, groups expanded in place */
static void walk_opts(const struct kpm_opt *opts, opt_fn fn, void *arg)
{
	for (; opts->name || opts->group; opts++)
		if (opts->group)
			walk_opts(opts->group, fn, arg);
		else
			fn(opts, arg);
}

/* @fn on each option of @cmd, then on --help */
static void walk_cmd_opts(const struct kpm_cmd *cmd, opt_fn fn, void *arg)
{
	walk_opts(cmd->opts, fn, arg);
	fn(&help_opt, arg);
}

static void add_opt(const struct kpm_opt *o, void *arg)
{
	struct kpm_getopt *g = arg;
	size_t len = strlen(g->shorts);

	/* a table that outgrows KPM_OPTS_MAX is a bug that any run finds */
	if (g->nr == KPM_OPTS_MAX)
		abort();
	g->longs[g->nr++] = (struct option){
		.name = o->name,
		.has_arg = o->arg ? required_argument : no_argument,
		.val = o->val,
	};
	if (o->long_only)
		return;
	g->shorts[len++] = o->val;
	if (o->arg)
		g->shorts[len++] = ':';
	g->shorts[len] = '\0';
}

struct help_out {
	FILE *f;
	int col;
};

/* "  -i, --ifname NAME     its help", further lines in the same column */
static void print_opt(const struct kpm_opt *o, void *arg)
{
	const struct help_out *h = arg;
	const char *p = o->help;
	int n;

	if (o->long_only)
		n = fprintf(h->f, "      --%s", o->name);
	else
		n = fprintf(h->f, "  -%c, --%s", o->val, o->name);
	if (o->arg)
		n += fprintf(h->f, " %s", o->arg);
	if (n < h->col)
		fprintf(h->f, "%*s", h->col - n, "");
	else
		fprintf(h->f, "\n%*s", h->col, "");
	while (p[n = strcspn(p, "\n")]) {
		fprintf(h->f, "%.*s\n%*s", n, p, h->col, "");
		p += n + 1;
	}
	fprintf(h->f, "%s\n", p);
}

static void print_help(const struct kpm_cmd *cmd, FILE *f)
{
	struct help_out h = { f, cmd->help_col };

	fputs(cmd->usage, f);
	fputs(cmd->about, f);
	walk_cmd_opts(cmd, print_opt, &h);
	if (cmd->more)
		fputs(cmd->more, f);
}

void kpm_usage_error(const struct kpm_cmd *cmd)
{
	switch (cmd->usage_err) {
	case KPM_USAGE_LINE:
		fputs(cmd->usage, stderr);
		break;
	case KPM_USAGE_HEAD:
		fputs(cmd->usage, stderr);
		fputs(cmd->about, stderr);
		break;
	case KPM_USAGE_ALL:
		print_help(cmd, stderr);
		break;
	}
}

int kpm_getopt(struct kpm_getopt *g, int argc, char **argv)
{
	int opt;

	if (!g->nr) {
		if (g->cmd->in_order)
			g->shorts[0] = '+';
		walk_cmd_opts(g->cmd, add_opt, g);
	}
	opt = getopt_long(argc, argv, g->shorts, g->longs, NULL);
	switch (opt) {
	case -1:
		return 0;
	case 'h':
		print_help(g->cmd, stdout);
		g->help = true;
		return -1;
	case '?':
		kpm_usage_error(g->cmd);
		return -1;
	}
	return opt;
}
