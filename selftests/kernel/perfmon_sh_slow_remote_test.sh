#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The shell helper (selftests/lib/sh/ksft_perfmon.sh) with a remote whose
# record does not start within PERFMON_READY_S (5 s here): perfmon_start
# must fail with the helper's message, stop the remote's command rather
# than wait for it, and leave no record running. Prints KTAP; needs the
# module loaded and root.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/sh/ksft_perfmon.sh
source "$top/selftests/lib/sh/ksft_perfmon.sh"
slow=$(mktemp)
trap 'rm -f "$slow" "$slow.done"' EXIT
# a remote command that answers "clock" at once, and for record waits
# 40 s and gives up, as a host that never got the module might
cat > "$slow" <<'SH'
#!/bin/sh
case "$1" in
*" record "*) sleep 40; touch "$0.done"; exit 1 ;;
esac
exec sh -c "$1"
SH
chmod +x "$slow"

failed=0
echo "TAP version 13"
echo "1..2"
t0=$SECONDS
err=$(PERFMON_READY_S=5 perfmon_start -i 100 -r "$slow" 2>&1 >/dev/null)
rc=$?
took=$((SECONDS - t0))
left=$(pgrep -f "$KSFT_PERFMON_NL record" | tr '\n' ' ')
echo "# perfmon_start returned $rc after $took s: $err"
# stopped, not waited for until it ended
if [ "$rc" -ne 0 ] && [ ! -e "$slow.done" ] &&
   [ "${err#perfmon: record did not start: }" != "$err" ]; then
	echo "ok 1 slow_remote_start_fails"
else
	echo "not ok 1 slow_remote_start_fails"
	failed=1
fi
if [ -z "$left" ]; then
	echo "ok 2 slow_remote_nothing_left_recording"
else
	echo "# still recording: $left"
	echo "not ok 2 slow_remote_nothing_left_recording"
	failed=1
fi
# the remote command's sleep, which the TERM of its shell left behind
pkill -x -f "sleep 40"
exit "$failed"
