/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A command's options from one table: each option's long name, short
 * letter, argument and help, from which kpm_getopt() builds getopt_long()'s
 * string and array and prints --help and the usage error; they cannot
 * disagree. --help is every table's last option.
 */
#ifndef KPM_OPTS_H
#define KPM_OPTS_H

#include <getopt.h>
#include <stdbool.h>

/* an option; a table ends with an empty one */
struct kpm_opt {
	const char *name;	/* the long name */
	int val;		/* what kpm_getopt() returns for it */
	bool long_only;		/* no short form; else val is its letter */
	const char *arg;	/* the argument's name, or NULL: none */
	const char *help;	/* its lines of help, split by '\n' */
	const struct kpm_opt *group;	/* or, in its place, these */
};

/* what a usage error prints */
enum kpm_usage_err {
	KPM_USAGE_LINE,		/* the usage line(s) */
	KPM_USAGE_HEAD,		/* those and the text before the options */
	KPM_USAGE_ALL,		/* the whole of --help */
};

struct kpm_cmd {
	const char *usage;	/* "usage: ...\n" */
	const char *about;	/* what --help prints between it and options */
	const struct kpm_opt *opts;
	const char *more;	/* what --help prints after them, or NULL */
	enum kpm_usage_err usage_err;
	unsigned int help_col;	/* the column an option's help starts at */
	bool in_order;		/* options end at the first non-option */
};

#define KPM_OPTS_MAX	32

/* getopt_long()'s arguments, built from a kpm_cmd */
struct kpm_getopt {
	const struct kpm_cmd *cmd;
	bool help;		/* kpm_getopt() returned -1 for --help */
	unsigned int nr;	/* options in longs */
	char shorts[2 + 2 * KPM_OPTS_MAX + 1];
	struct option longs[KPM_OPTS_MAX + 1];
};

/*
 * The next option of @argv as getopt_long() returns it, from g->cmd's
 * table; 0 at the end of the options (optind the first operand), or -1
 * once --help was printed to stdout (g->help set) or a usage error to
 * stderr.
 */
int kpm_getopt(struct kpm_getopt *g, int argc, char **argv);
/* the usage error of @cmd, to stderr */
void kpm_usage_error(const struct kpm_cmd *cmd);

#endif
