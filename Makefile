# SPDX-License-Identifier: GPL-2.0
#
# make run     set up, boot a kernel, sample a workload on two endpoints
# make test    the whole suite, in QEMU
# make         build the module against $(KDIR) and the tools
# make tools-sanitized  the tools with ASan, and with UBSan, in build/
# make check   checkpatch --strict, sparse, generated files match the spec
# make docs    HTML and man pages into build/docs (Sphinx; warnings fail)
# make install the tools, man pages, YNL spec, bash completion
#              (PREFIX=/usr/local, DESTDIR)
# make bench   the benchmarks in 6.12 guests of 1 to 64 vCPUs: tables,
#              build/bench/*.csv and *.svg (BENCH_CPUS="1 2 4" for fewer)
#
# KERNELS=...   for make test: a subset of the matrix (scripts/kernel.sh list)

KVER ?= $(shell scripts/kernel.sh version)
KDIR ?= /usr/src/linux-headers-$(KVER)

# CFLAGS as given, for tools/ and selftests/ to add their own warnings to
CFLAGS ?= -O2 -g
WARN_CFLAGS = -Wall -Wextra -Werror -std=gnu11
TOOL_CFLAGS = $(CFLAGS) $(WARN_CFLAGS) -Iuapi -Itools/lib \
	      $(shell pkg-config --cflags libnl-genl-3.0)
TOOL_LIBS = $(shell pkg-config --libs libnl-genl-3.0) -lm

TOOLS = tools/ksft-perfmon-nl tools/ksft-perfmon-report

.PHONY: all module tools tools-sanitized selftests deps run test check \
	check-generated checkpatch sparse regen clean fuzz docs install bench

PREFIX ?= /usr/local
DESTDIR ?=

all: module tools

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

tools:
	$(MAKE) -C tools

# the code the tools share with the C selftests and the benchmarks
LIBKPM = tools/lib/libkpm.a
LIBKPM_DEPS = $(LIBKPM) $(wildcard tools/lib/*.h) uapi/linux/ksft_perfmon.h

# tools/Makefile knows their dependencies; one make of it at a time
$(TOOLS) $(LIBKPM): tools

# the tools with AddressSanitizer (and LeakSanitizer) into build/asan,
# with UBSan into build/ubsan, every report fatal: make test runs the
# host tests of report and replay on both. Two builds, as UBSan built
# with ASan reports to stderr whatever its log_path, where a test that
# expects a message there may not look.
tools-sanitized:
	$(MAKE) -C tools O=$(CURDIR)/build/asan \
		EXTRA_CFLAGS="-fsanitize=address -fno-omit-frame-pointer"
	$(MAKE) -C tools O=$(CURDIR)/build/ubsan \
		EXTRA_CFLAGS="-fsanitize=undefined -fno-sanitize-recover=all"

# the C tests and helpers of selftests/, which link libkpm.a
selftests: tools
	$(MAKE) -C selftests KSFT_DIR=$(KSFT_DIR)

KSFT_DIR ?= $(shell scripts/kernel.sh selftests)

BENCH = bench/fmt_bench bench/u2_sampler bench/spin

bench/fmt_bench: bench/fmt_bench.c $(LIBKPM_DEPS)
	$(CC) $(TOOL_CFLAGS) $(shell pkg-config --cflags jansson) -o $@ $< \
		$(LIBKPM) $(TOOL_LIBS) $(shell pkg-config --libs jansson)

bench/u2_sampler: bench/u2_sampler.c
	$(CC) $(CFLAGS) $(WARN_CFLAGS) -o $@ $< -lm

bench/spin: bench/spin.c
	$(CC) $(CFLAGS) $(WARN_CFLAGS) -o $@ $<

# libFuzzer on the tool's parsing and JSON writing, for FUZZ_TIME seconds;
# the corpus it grows stays in build/fuzz-corpus
FUZZ_TIME ?= 60
FUZZ_SEED ?= 1
fuzz: tools
	$(MAKE) -C selftests fuzz
	mkdir -p build/fuzz-corpus
	selftests/host/fuzz_samples -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_TIME) \
		-artifact_prefix=build/fuzz- \
		-print_final_stats=1 build/fuzz-corpus

deps:
	scripts/deps.sh

run: deps
	$(MAKE) all
	scripts/run.sh

test: deps
	selftests/run.sh

regen:
	scripts/regen.sh

docs:
	scripts/docs.sh

BENCH_CPUS ?= 1 2 4 8 16 32 64
bench: deps
	scripts/bench.sh --cpus "$(BENCH_CPUS)"

# as the kernel's tools/net/ynl installs its specs: share/ynl/specs
install: tools docs
	install -D -m 0755 tools/ksft-perfmon-nl $(DESTDIR)$(PREFIX)/sbin/ksft-perfmon-nl
	install -D -m 0755 tools/ksft-perfmon-report \
		$(DESTDIR)$(PREFIX)/bin/ksft-perfmon-report
	install -D -m 0644 build/docs/man/ksft-perfmon-nl.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ksft-perfmon-nl.8
	install -D -m 0644 build/docs/man/ksft-perfmon-report.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/ksft-perfmon-report.1
	install -D -m 0644 Documentation/netlink/specs/ksft_perfmon.yaml \
		$(DESTDIR)$(PREFIX)/share/ynl/specs/ksft_perfmon.yaml
	install -D -m 0644 tools/bash-completion/ksft-perfmon-nl \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ksft-perfmon-nl

check: check-generated checkpatch sparse

checkpatch:
	scripts/checkpatch.sh

# sparse over every file (C=2) against 6.12 and 7.3 (which builds the debug
# kernel if it is not cached); any warning fails
SPARSE_KERNELS ?= 6.12 7.3-debug
sparse:
	@for k in $(SPARSE_KERNELS); do \
		env=$$(scripts/kernel.sh env $$k) && eval "$$env" && \
		echo "sparse: $$k" && \
		scripts/kbuild.sh --sparse "$$kdir" "$$k" || exit 1; \
	done

check-generated:
	scripts/regen.sh --check

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C selftests clean
	rm -rf $(BENCH) build
