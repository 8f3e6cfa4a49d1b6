/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --ktap: COMMAND's KTAP output passed through as it comes, and
 * before each leaf test case's result line, the metric lines of the
 * samples taken while that case ran, at the result line's depth.
 */
#ifndef KPM_NL_CASES_H
#define KPM_NL_CASES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nl-cmd.h"

struct cases;

/*
 * COMMAND's output is read from @fd (non-blocking, ours to close); the
 * samples of session @s are in @spool, which cases_sample() writes, and
 * drained from @nl into @d; @start is when COMMAND started.
 */
struct cases *cases_new(int fd, FILE *spool, const struct session *s,
			uint32_t metrics, const char *host, uint64_t start,
			struct kpm_nl *nl, struct drain *d);
void cases_free(struct cases *c);
/* the sample_fn of record's drain, its arg a struct cases */
void cases_sample(struct drain *d, const struct sample *smp);
/*
 * Pass on what COMMAND writes for up to @ns, less when a signal comes or
 * its output ends. A read of the session that fails for a case's lines
 * is returned (non-zero); its case goes without them.
 */
int cases_wait(struct cases *c, uint64_t ns);
/*
 * Once COMMAND is gone: pass on what it left in the pipe, and the end of
 * a line cut short. What a process it left running writes later is not
 * read.
 */
int cases_end(struct cases *c);
/* whether COMMAND's output, after cases_end(), ended within a line */
bool cases_mid_line(const struct cases *c);

#endif
