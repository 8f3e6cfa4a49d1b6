/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's 32-bit counters, extended to 64 bits. Apart from kpm.h, so
 * that selftests/host/extend_test.c builds the same code in userspace.
 */
#ifndef _KSFT_PERFMON_EXTEND_H
#define _KSFT_PERFMON_EXTEND_H

#include <linux/types.h>

/**
 * kpm_extend32() - a 32-bit counter's reading, extended to 64 bits
 * @prev: the counter's extended value at its previous reading
 * @now: its 32-bit value now
 *
 * Right as long as the counter advanced by less than 2^32 since @prev was
 * read: the difference of the low halves, modulo 2^32, is how far it went.
 *
 * Return: @prev advanced by that difference.
 */
static inline u64 kpm_extend32(u64 prev, u32 now)
{
	return prev + (u32)(now - (u32)prev);
}

#endif /* _KSFT_PERFMON_EXTEND_H */
