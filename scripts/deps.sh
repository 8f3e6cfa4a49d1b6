#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing need, from Debian's archive: the 6.12
# kernels (generic and PREEMPT_RT: image, headers; the source), what
# building the 7.3 debug kernel takes, QEMU, busybox, libnl, jansson,
# iperf3, sparse, the Python modules of the kernel's YNL generator,
# clang's libFuzzer, Sphinx and man for the docs, DKMS, tmux, ethtool and
# ping (the driver tests read e1000e's stats with ethtool and send over
# the NICs with ping), the locale sources that json_repr_test.py
# compiles de_DE from, Prometheus (the OpenMetrics export is tested in
# its promtool and its server, which the test starts itself), OpenSSH's
# server (the remote over ssh: an sshd that the tests start in a netns),
# valgrind (report_test.py counts the report's instructions with it),
# chromium (it opens the report's page, headless) and rt-tests (make
# bench's cyclictest on PREEMPT_RT). Installs only what is
# missing, so a second run costs a few dpkg queries. (The 7.3 source
# comes from trixie-backports: scripts/debug-kernel.sh fetches it.)

set -euo pipefail

pkgs=(linux-image-6.12-amd64 linux-headers-6.12-amd64 linux-source-6.12
      linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
      bc bison flex libelf-dev libssl-dev sparse
      qemu-system-x86 busybox-static libnl-genl-3-dev libnl-3-dev
      libjansson-dev
      pkg-config iperf3 python3 python3-yaml python3-jsonschema
      iproute2 kmod cpio xz-utils gcc make clang libclang-rt-14-dev
      python3-sphinx man-db dkms tmux ethtool iputils-ping locales
      prometheus openssh-server openssh-client valgrind chromium rt-tests)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages, and not root: ${missing[*]}" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
# where systemd runs, Debian starts the services it installs (Prometheus
# on :9090 and sshd on :22, on every address): the tests run the
# programs, never the services; one installed before is left as it was
if [ -d /run/systemd/system ]; then
	for p in prometheus:prometheus.service openssh-server:ssh.socket \
		 openssh-server:ssh.service; do
		if [[ " ${missing[*]} " == *" ${p%%:*} "* ]]; then
			systemctl disable --now "${p#*:}" > /dev/null 2>&1 || true
		fi
	done
fi
