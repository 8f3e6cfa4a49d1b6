/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record's spool, and reading it back into lines (record, replay).
 *
 * While recording, samples are only parsed and spooled, raw, to a
 * temporary file, or to the file of --spool; they become metric lines
 * once the session is gone. The reader then keeps up with the sampler on
 * slow machines too. A spool starts with what reading it back needs, and
 * is for the same build of the tool: the structs are as they are in
 * memory, and their sizes are checked.
 */
#ifndef KPM_NL_SPOOL_H
#define KPM_NL_SPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ktap.h"
#include "samples.h"

struct spool_head {
	char magic[8];
	/* of struct session, cpu_stats, dev_stats, dev_qstats, queue_stats */
	uint32_t sizes[5];
	uint32_t host_len;	/* the host label follows, unterminated */
	uint32_t metrics;	/* the optional ones, M_BIT()s */
	uint64_t time_base;
	struct session s;
};

/*
 * record --control --stream writes its samples to standard output as it
 * reads them, for record --ktap on the host at the other end of the
 * line, in frames: a byte of their type, their length (a uint32_t) and
 * that many bytes. First 'H', a spool's head and host label; then 'S', a
 * sample as a spool has it, for each; 'A' once the samples of a read that
 * a line "sync" asked for are out; at the end, 'E', a struct stream_end.
 * As a spool, for a record of the same build.
 */
struct stream_end {
	uint64_t lost, kernel_lost, missed, qstats_skipped, early;
};

FILE *spool_open(const char *path);
void spool_start(FILE *f, const struct session *s, uint32_t metrics,
		 const char *host, uint64_t time_base);
void spool_read_head(FILE *f, const char *path, struct spool_head *h,
		     char **host);
/*
 * The next sample of spool @f, of session @s, into @smp, which has room
 * for it: 1; 0 at the end of the file; -1 when the file ends within the
 * sample or cannot be read; -2 when a bool in it is neither true nor
 * false.
 */
int spool_read(FILE *f, const struct session *s, struct sample *smp);
/* @smp, of session @s, at the end of spool @f */
void spool_write(FILE *f, const struct session *s, const struct sample *smp);
/* the sample_fn of record's drain: @smp into the spool, d->arg */
void spool_sample(struct drain *d, const struct sample *smp);
bool print_spool(FILE *f, const char *host, uint64_t time_base,
		 const struct session *s, uint32_t metrics, bool raw,
		 bool partial, struct record *r, uint64_t *gaps);
void print_end(struct record *r);

#endif
