/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels ksft_perfmon supports.
 * Each shim names the change it covers; delete it with the oldest kernel
 * that needs it.
 */
#ifndef _KSFT_PERFMON_COMPAT_H
#define _KSFT_PERFMON_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/version.h>

/*
 * hrtimer_setup() replaced hrtimer_init() plus an assignment of ->function
 * in 6.13 ("hrtimers: Introduce hrtimer_setup() to replace hrtimer_init()");
 * hrtimer_init() was removed in 6.17.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void
kpm_hrtimer_setup(struct hrtimer *timer,
		  enum hrtimer_restart (*function)(struct hrtimer *),
		  clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#else
#define kpm_hrtimer_setup hrtimer_setup
#endif

#endif /* _KSFT_PERFMON_COMPAT_H */
