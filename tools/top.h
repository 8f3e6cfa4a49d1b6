/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One frame of "ksft-perfmon-nl top": per-CPU utilization bars, per-CPU
 * network counts, NIC rates and queue rates between two samples of a
 * session, as mpstat -P ALL shows the first.
 */
#ifndef KPM_TOP_H
#define KPM_TOP_H

#include <stdio.h>

#include "samples.h"

/*
 * Print the frame of @prev to @now (samples of @s) to @f; @ifnames names
 * the session's netdevs (NULL entries print as their ifindex).
 */
void top_frame(FILE *f, const struct session *s, const struct sample *prev,
	       const struct sample *now, const char *const *ifnames);

#endif
