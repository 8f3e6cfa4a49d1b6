// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=selftests/lib/clock_step.so: CLOCK_MONOTONIC stands still and
 * moves KPM_CLOCK_STEP_MS milliseconds forward at each read, from the
 * first read's time on. A program that reads the clock twice where it
 * means once sees time pass between the reads, every time, as a program
 * that is preempted or stopped (SIGSTOP) there does now and then.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static uint64_t now, step;
	int ret;

	if (!real) {
		const char *s = getenv("KPM_CLOCK_STEP_MS");

		real = (int (*)(clockid_t, struct timespec *))
		       dlsym(RTLD_NEXT, "clock_gettime");
		step = (s ? strtoull(s, NULL, 0) : 0) * 1000000ULL;
	}
	ret = real(clk, ts);
	if (ret || clk != CLOCK_MONOTONIC)
		return ret;
	if (!now)
		now = ts->tv_sec * 1000000000ULL + ts->tv_nsec;
	else
		now += step;
	ts->tv_sec = now / 1000000000ULL;
	ts->tv_nsec = now % 1000000000ULL;
	return 0;
}
