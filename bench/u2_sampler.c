// SPDX-License-Identifier: GPL-2.0
/*
 * U2 of the benchmarks, the best userspace can do: /proc/stat and three
 * sysfs counters kept open, pread() and parsed each interval on an
 * absolute CLOCK_MONOTONIC schedule. Prints what it cost and how late
 * each wake-up was, as key=value pairs:
 *
 *   late=NS:NS:... samples=N cpu_ns=NS late_p50_ns=NS late_p99_ns=NS
 *   late_max_ns=NS
 *
 * usage: u2_sampler INTERVAL_MS COUNT [IFNAME [EVERY]]
 *
 * With EVERY, the netdev's counters are read every EVERY intervals only.
 */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS	1024
#define NR_FIELDS	10

static uint64_t cpu_time[MAX_CPUS][NR_FIELDS];
static uint64_t counters[3];

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + t->tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the "cpuN ..." lines of /proc/stat into cpu_time; CPUs seen */
static int parse_stat(char *p)
{
	int n = 0;

	while ((p = strstr(p, "\ncpu"))) {
		char *end;
		unsigned long cpu;
		int f;

		p += 4;
		if (*p < '0' || *p > '9')
			continue;	/* "cpu ", the sum of all */
		cpu = strtoul(p, &end, 10);
		if (end == p || cpu >= MAX_CPUS)
			break;
		p = end;
		for (f = 0; f < NR_FIELDS; f++)
			cpu_time[cpu][f] = strtoull(p, &p, 10);
		n++;
	}
	return n;
}

static uint64_t read_u64(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

int main(int argc, char **argv)
{
	static const char *const names[3] = {
		"rx_dropped", "rx_missed_errors", "tx_dropped",
	};
	static char buf[1 << 20];
	uint64_t interval, start, *late, cpu_ns;
	long every;
	int stat_fd, fds[3] = { -1, -1, -1 };
	long count, i;
	struct rusage ru;
	struct timespec t;
	char path[256];
	ssize_t n;
	int k;

	if (argc < 3) {
		fprintf(stderr, "usage: u2_sampler INTERVAL_MS COUNT [IFNAME [EVERY]]\n");
		return 2;
	}
	interval = (uint64_t)(atof(argv[1]) * 1e6);
	count = atol(argv[2]);
	every = argc > 4 ? atol(argv[4]) : 1;
	late = calloc(count, sizeof(*late));
	stat_fd = open("/proc/stat", O_RDONLY);
	if (!late || stat_fd < 0 || interval == 0 || count <= 0 || every <= 0) {
		perror("u2_sampler");
		return 1;
	}
	for (k = 0; argc > 3 && k < 3; k++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
			 argv[3], names[k]);
		fds[k] = open(path, O_RDONLY);
		if (fds[k] < 0) {
			perror(path);
			return 1;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t);
	start = ns_of(&t) + interval;
	for (i = 0; i < count; i++) {
		uint64_t due = start + i * interval;
		struct timespec d = {
			.tv_sec = due / 1000000000ULL,
			.tv_nsec = due % 1000000000ULL,
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL))
			;
		clock_gettime(CLOCK_MONOTONIC, &t);
		late[i] = ns_of(&t) - due;
		/* a leading newline, so that every line is "\ncpu..." */
		n = pread(stat_fd, buf + 1, sizeof(buf) - 2, 0);
		if (n <= 0)
			return 1;
		buf[0] = '\n';
		buf[n + 1] = '\0';
		if (parse_stat(buf) <= 0)
			return 1;
		for (k = 0; k < 3 && !(i % every); k++)
			if (fds[k] >= 0)
				counters[k] = read_u64(fds[k]);
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
		 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	printf("late=");
	for (i = 0; i < count; i++)
		printf("%s%llu", i ? ":" : "", (unsigned long long)late[i]);
	qsort(late, count, sizeof(*late), cmp_u64);
	printf(" samples=%ld cpu_ns=%llu late_p50_ns=%llu late_p99_ns=%llu late_max_ns=%llu\n",
	       count, (unsigned long long)cpu_ns,
	       (unsigned long long)late[count / 2],
	       (unsigned long long)late[(count * 99) / 100 < count ?
				       (count * 99) / 100 : count - 1],
	       (unsigned long long)late[count - 1]);
	return 0;
}
