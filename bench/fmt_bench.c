// SPDX-License-Identifier: GPL-2.0
/*
 * The formatting benchmark, the tool's side: the samples of a
 * "ksft-perfmon-nl dump" file turned into KTAP metric lines by record's
 * own code (tools/lib/samples.c and ktap.c), N times. Prints the lines of one pass on
 * stdout and "lines=... seconds=... lines_per_s=..." on stderr, as
 * bench/kpm_format.py does for the Python way.
 *
 * usage: fmt_bench FILE [N]
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ktap.h"
#include "samples.h"

static uint64_t get_u64(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *const cpu_keys[T_NR] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
	"guest", "guest_nice",
};

static void load(const char *path, struct sample **out, size_t *nr,
		 uint32_t *cpus)
{
	struct sample *v = NULL;
	char line[1 << 20];
	size_t n = 0, i, k;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(1);
	}
	*cpus = 0;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL), *a;
		struct sample *s;

		if (!o) {
			fprintf(stderr, "%s: not a dump line\n", path);
			exit(1);
		}
		v = realloc(v, (n + 1) * sizeof(*v));
		s = &v[n++];
		memset(s, 0, sizeof(*s));
		s->seq = get_u64(o, "seq");
		s->time = get_u64(o, "time");
		s->dev_read = get_u64(o, "dev_read");
		a = json_object_get(o, "cpus");
		*cpus = json_array_size(a);
		s->cpu = calloc(*cpus ? *cpus : 1, sizeof(*s->cpu));
		if (!v || !s->cpu)
			exit(1);
		for (i = 0; i < *cpus; i++) {
			json_t *c = json_array_get(a, i);

			if (json_is_null(c))
				continue;
			s->cpu[i].present = true;
			s->cpu[i].online = json_is_true(json_object_get(c, "online"));
			for (k = 0; k < T_NR; k++)
				s->cpu[i].t[k] = get_u64(c, cpu_keys[k]);
		}
		a = json_object_get(o, "devs");
		s->ndevs = json_array_size(a);
		for (i = 0; i < s->ndevs && i < KSFT_PERFMON_DEVS_MAX; i++) {
			json_t *d = json_array_get(a, i);

			s->dev[i].present = true;
			s->dev[i].gone = json_is_true(json_object_get(d, "gone"));
			s->dev[i].ifindex = get_u64(d, "ifindex");
			/* its own time, as record has it */
			s->dev[i].time = s->dev[i].gone ? 0 :
					 json_object_get(d, "time") ?
					 get_u64(d, "time") : s->time;
			for (k = 0; k < KPM_DEV_NR_STATS; k++)
				s->dev[i].v[k] = get_u64(d, kpm_dev_stat_names[k]);
		}
		json_decref(o);
	}
	fclose(f);
	*out = v;
	*nr = n;
}

static size_t format(FILE *f, const struct sample *v, size_t n, uint32_t cpus)
{
	struct record r;
	size_t i, lines = 0;
	int m;
	bool nics = n && v[0].ndevs;

	/* the default set's, as kpm_format.py prints them */
	for (m = 0; m < M_FIRST_OPTIONAL; m++)
		if (m < M_NIC_RX_DROPPED || nics) {
			print_policy(f, m);
			lines++;
		}
	if (record_init(&r, 0, "local", n ? v[0].time : 0, cpus, f))
		exit(1);
	for (i = 0; i < n; i++) {
		record_add(&r, &v[i], nics);
		/* the netdevs' lines once a read of them */
		lines += 3 + (i > 0) +
			 (nics && (!i || !v[i].dev_read ||
				   v[i].dev_read != v[i - 1].dev_read) ? 3 : 0);
	}
	record_free(&r);
	return lines;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	size_t n, lines = 0, len;
	struct sample *v;
	uint32_t cpus;
	char *buf;
	int reps, i;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: fmt_bench FILE [N]\n");
		return 2;
	}
	reps = argc > 2 ? atoi(argv[2]) : 1;
	load(argv[1], &v, &n, &cpus);
	format(stdout, v, n, cpus);
	fflush(stdout);
	/*
	 * Into a FILE, as record writes to stdout, through a 1 MiB buffer
	 * flushed to /dev/null as it fills: not an open_memstream(), whose
	 * growth (realloc, copy, zeroing, page faults) the Python side, which
	 * keeps its lines in a list, does not pay either.
	 */
	f = fopen("/dev/null", "w");
	buf = malloc(len = 1 << 20);
	if (!f || !buf || setvbuf(f, buf, _IOFBF, len))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < reps; i++)
		lines += format(f, v, n, cpus);
	fflush(f);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fclose(f);
	free(buf);
	fprintf(stderr, "lines=%zu seconds=%.6f lines_per_s=%.1f\n", lines,
		(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
		lines / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
	return 0;
}
