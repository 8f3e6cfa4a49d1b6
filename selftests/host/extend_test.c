// SPDX-License-Identifier: GPL-2.0
/*
 * kpm_extend32(), the module's own code, against a 64-bit counter whose
 * low half it is given: what a live kernel cannot be made to show in a
 * test's time, a softnet or softirq count crossing 2^32.
 */

#include <stdint.h>

typedef uint32_t u32;
typedef uint64_t u64;

#include "../../kmod/extend.h"
#include "kselftest_harness.h"

#define TWO32	(1ULL << 32)

static u64 rng = 88172645463325252ULL;

static u64 xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* the session's first reading extends from the zeroed scratch sample */
TEST(first_reading_is_the_counter)
{
	ASSERT_EQ(0, kpm_extend32(0, 0));
	ASSERT_EQ(12345, kpm_extend32(0, 12345));
	ASSERT_EQ(TWO32 - 1, kpm_extend32(0, UINT32_MAX));
}

/* one at a time over 2^32, as a busy counter crosses it */
TEST(crosses_2_32_by_ones)
{
	u64 truth = TWO32 - 5, ext = truth;
	int i;

	for (i = 0; i < 10; i++) {
		truth++;
		ext = kpm_extend32(ext, (u32)truth);
		ASSERT_EQ(truth, ext);
	}
	ASSERT_EQ(TWO32 + 5, ext);
}

/* steps from 0 to 2^32 - 1 at random, a million of them: some 2^31 wraps */
TEST(random_steps_below_2_32)
{
	u64 truth = 0, ext = 0;
	int i;

	for (i = 0; i < 1000000; i++) {
		truth += xorshift() % TWO32;
		ext = kpm_extend32(ext, (u32)truth);
		ASSERT_EQ(truth, ext);
	}
	ASSERT_GT(truth >> 32, 100000);
}

/* the edges: no step, and the largest it can tell */
TEST(zero_and_largest_steps)
{
	u64 ext = 7 * TWO32 + 3;

	ASSERT_EQ(ext, kpm_extend32(ext, 3));
	ASSERT_EQ(ext + TWO32 - 1, kpm_extend32(ext, 2));
}

/* its limit, as the spec states it: a step of 2^32 is not seen */
TEST(a_step_of_2_32_is_lost)
{
	u64 ext = 5 * TWO32 + 9;

	ASSERT_EQ(ext, kpm_extend32(ext, (u32)(ext + TWO32)));
	ASSERT_EQ(ext + 1, kpm_extend32(ext, (u32)(ext + TWO32 + 1)));
}

TEST_HARNESS_MAIN
