// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under a timer-driven sampler, for the perturbation benchmark
 * (bench/guest_bench.py): what a 1 ms beat costs the CPU it fires on
 * before anything is sampled. An hrtimer, hardirq as ksft_perfmon's was
 * before it read the CPUs in a soft one (mode 4 is that one, bare),
 * fires every @interval_us and, by @mode:
 *
 *   0  does nothing else;
 *   1  queues an empty work item on system_highpri_wq, as ksft_perfmon's
 *      timer queues its sampler;
 *   2  reads every possible CPU's kcpustat, idle and iowait time itself,
 *      in hardirq, with no work item;
 *   3  is not started;
 *   4  is a soft hrtimer, as ksft_perfmon's is now, that does nothing.
 *
 * In every mode, /sys/kernel/debug/kpm_floor/idle_ns has a line per
 * possible CPU: its id, and the time it has been idle and in iowait, in
 * ns, by the kernel's NOHZ accounting (get_cpu_idle_time_us(), to the
 * microsecond, the current idle period included), which counts as busy
 * every moment a CPU is out of its idle loop: interrupts, softirqs and
 * tasks alike. The CPU cost benchmark reads it, apart from the module
 * it measures.
 *
 * Benchmark only: it samples nothing anyone reads.
 */

#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/tick.h>
#include <linux/workqueue.h>

static unsigned int mode;
module_param(mode, uint, 0444);
MODULE_PARM_DESC(mode, "0: the timer alone, 1: and an empty work item, 2: and the CPUs read in the timer, 3: no timer, 4: a soft timer alone");
static unsigned int interval_us = 1000;
module_param(interval_us, uint, 0444);
MODULE_PARM_DESC(interval_us, "the timer's interval, in microseconds");

static struct dentry *floor_dir;
static struct hrtimer floor_timer;
static struct work_struct floor_work;
static u64 floor_sink;

static void floor_read_cpus(void)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu) {
		struct kernel_cpustat kcs;

		kcpustat_cpu_fetch(&kcs, cpu);
		sum += kcs.cpustat[CPUTIME_USER] + kcs.cpustat[CPUTIME_SYSTEM];
		sum += get_cpu_idle_time_us(cpu, NULL);
		sum += get_cpu_iowait_time_us(cpu, NULL);
	}
	WRITE_ONCE(floor_sink, sum);
}

static void floor_work_fn(struct work_struct *work)
{
}

static enum hrtimer_restart floor_timer_fn(struct hrtimer *timer)
{
	if (mode == 1)
		queue_work(system_highpri_wq, &floor_work);
	else if (mode == 2)
		floor_read_cpus();
	hrtimer_forward_now(timer, ns_to_ktime(interval_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static enum hrtimer_mode floor_timer_mode(void)
{
	return mode == 4 ? HRTIMER_MODE_REL_SOFT : HRTIMER_MODE_REL_HARD;
}

static int floor_idle_show(struct seq_file *m, void *v)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		seq_printf(m, "%u %llu %llu\n", cpu,
			   get_cpu_idle_time_us(cpu, NULL) * NSEC_PER_USEC,
			   get_cpu_iowait_time_us(cpu, NULL) * NSEC_PER_USEC);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(floor_idle);

static int __init floor_init(void)
{
	/* no shorter than ksft_perfmon's shortest interval */
	if (mode > 4 || interval_us < 100)
		return -EINVAL;
	floor_dir = debugfs_create_dir("kpm_floor", NULL);
	debugfs_create_file("idle_ns", 0444, floor_dir, NULL, &floor_idle_fops);
	INIT_WORK(&floor_work, floor_work_fn);
	if (mode == 3)
		return 0;
	hrtimer_init(&floor_timer, CLOCK_MONOTONIC, floor_timer_mode());
	floor_timer.function = floor_timer_fn;
	hrtimer_start(&floor_timer, ns_to_ktime(interval_us * NSEC_PER_USEC),
		      floor_timer_mode());
	return 0;
}

static void __exit floor_exit(void)
{
	debugfs_remove(floor_dir);
	if (mode == 3)
		return;
	hrtimer_cancel(&floor_timer);
	cancel_work_sync(&floor_work);
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_DESCRIPTION("The floor under a timer-driven sampler, a benchmark");
MODULE_LICENSE("GPL");
