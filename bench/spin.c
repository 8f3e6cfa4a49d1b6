// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU-bound workload of the perturbation benchmark: a fixed amount of
 * arithmetic, timed. Prints "ns=N": the wall time it took, which grows by
 * whatever else ran on its CPU meanwhile.
 *
 * usage: spin ITERATIONS
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000;
	volatile uint64_t x = 88172645463325252ULL;
	struct timespec a, b;
	uint64_t i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		uint64_t v = x;

		/* xorshift64: no memory traffic to speak of */
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		x = v;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns=%llu\n", (unsigned long long)((b.tv_sec - a.tv_sec) *
		1000000000ULL + b.tv_nsec - a.tv_nsec));
	return 0;
}
