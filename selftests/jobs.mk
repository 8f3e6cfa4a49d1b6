# SPDX-License-Identifier: GPL-2.0
#
# The jobs of make test: what each waits for, which run one at a time,
# at what nice. selftests/run.sh runs it as
#
#	make -f selftests/jobs.mk -j2 -k --output-sync=target KERNELS="..."
#
# A job is the target build/test/JOB.done. Its recipe, "run.sh job JOB",
# writes the job's results, times and kernel reports beside it and
# always succeeds: a failed test is a result, not a failed target, so
# the jobs after it still run. -j2 as the host has two cores; each job's
# output comes whole when it ends, and stays in build/test/JOB.log; a
# line says when it starts, on fd 9 where run.sh opens it.
#
# make -f selftests/jobs.mk list   prints the jobs in the order of the
#                                  summary

KERNELS ?= $(shell scripts/kernel.sh list)
T := build/test

# the kernels built here, not installed from packages (the debug
# kernel): their setup is the long one
BUILT := $(filter %-debug,$(KERNELS))
PACKAGED := $(filter-out $(BUILT),$(KERNELS))

# Two lanes of jobs, each job after the one before it in its lane, so
# that two run at once. (make -j2 alone would not keep to an order: it
# takes the next ready target after the one it last waited on, not the
# first, and .WAIT came in make 4.4.)
#
# Lane A sets up the kernels from packages (each kernel's setup: the
# module and the test modules built, sparse), then has the wide jobs:
# guests of more than one vCPU that keep them busy. Under TCG, QEMU runs a thread per vCPU; with more of them than
# the host has cores, a vCPU that waits on another (a spinlock, an IPI,
# an RCU grace period) burns CPU while the other is not running, so two
# such guests side by side cost up to twice the CPU they cost one after
# the other. The debug kernel's come last: the others go on while it
# builds. Then the drivers guests, which lane B's length leaves room for.
#
#   main     the netlink tests, two hosts, the helpers (4 vCPUs)
#   stress   rmmod under load (2 vCPUs)
#   cpus     the netlink tests with 64 CPUs, on Debian's 6.12 alone
#   bench    the benchmarks, short (2 vCPUs)
#   drivers  e1000e and a bond, sampled at 1 ms (1 vCPU)
LANE_A := $(foreach k,$(PACKAGED),$(k)/setup) \
	$(foreach k,$(PACKAGED),$(k)/main $(k)/stress) \
	$(if $(filter 6.12,$(KERNELS)),6.12/cpus) bench \
	$(foreach k,$(BUILT),$(k)/main $(k)/stress) \
	$(foreach k,$(KERNELS),$(k)/drivers)

# Lane B sets up the kernels built here first (the debug kernel's build,
# when it is not cached, from the start, beside lane A), then has the
# host-side checks and the guests of one vCPU or mostly idle ones.
#
#   fuzz     nl_fuzz, kprobes, load-time sessions, the YNL CLI (1 vCPU)
#   minute   record at 1 kHz for a minute (4 vCPUs, busy less than half
#            the time)
#   clock    each block of a sample on its own clock (3 vCPUs, one busy)
LANE_B := $(foreach k,$(BUILT),$(k)/setup) host \
	$(foreach g,fuzz minute clock,$(foreach k,$(BUILT) $(PACKAGED),$(k)/$(g)))

# Lane B runs at nice 19: it uses the CPU a wide guest leaves idle and
# delays it little (make's children share its session, so autogroup
# does not even them out). But at nice 0: the debug kernel's setup, which
# lane A waits for, and the timed guests: at 19, beside a busy wide
# guest, the minute's record could starve and lose samples, and the
# clock guest's busy CPU read short.
NICE_0 := $(LANE_A) $(foreach k,$(BUILT),$(k)/setup) \
	$(foreach k,$(KERNELS),$(k)/minute $(k)/clock)
nice = $(if $(filter $(1),$(NICE_0)),0,19)

JOBS := $(LANE_A) $(LANE_B)

.PHONY: all list
all: $(JOBS:%=$(T)/%.done)

list:
	@echo $(JOBS)

# a guest, KERNEL/GUEST, waits for its kernel's setup
$(foreach j,$(filter-out %/setup,$(JOBS)),$(if $(findstring /,$(j)),$(eval \
	$(T)/$(j).done: $(T)/$(firstword $(subst /, ,$(j)))/setup.done)))

# a job waits for the one before it in its lane
chain = $(if $(word 2,$(1)),$(eval $(T)/$(word 2,$(1)).done: | \
	$(T)/$(word 1,$(1)).done)$(call chain,$(wordlist 2,$(words $(1)),$(1))))
$(call chain,$(LANE_A))
$(call chain,$(LANE_B))

# The environment of make test, less make's own: the kernel's build and
# the suite's make steps run with their own -j, not as make's -j2 clients.
$(T)/%.done:
	@echo "== $*: started" 2> /dev/null >&9 || true
	@mkdir -p $(dir $@)
	@env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL nice -n $(call nice,$*) \
		selftests/run.sh job $* 2>&1 | tee $(T)/$*.log
	@touch $@
