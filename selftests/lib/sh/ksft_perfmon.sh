# SPDX-License-Identifier: GPL-2.0
#
# ksft_perfmon for bash selftests: what the CPUs and NICs of both endpoints
# did while the test ran, as KTAP metric lines, the same as the Python
# PerfMonitor prints.
#
#   source ksft_perfmon.sh
#   perfmon_start -l eth0 -r "ip netns exec peer sh -c" -R eth1
#   run_traffic
#   perfmon_metric throughput 32.6 \
#	'{"name":"throughput","regression":{...},"summarize":"distribution"}'
#   perfmon_stop          # prints the lines; then print "ok N case"
#
# perfmon_start [-i MS] [-m LIST] [-l IFNAME] [-r REMOTE_PREFIX [-R IFNAME]]
#	Starts ksft-perfmon-nl record here and, when REMOTE_PREFIX is given,
#	on the remote host through it: a command that runs its one argument
#	as a shell command line there ("ip netns exec NS sh -c", "ssh HOST"),
#	sampling IFNAME every MS ms (default 1000), and the optional
#	metrics of LIST too (record --metrics LIST). Returns once both
#	sample. Times are seconds since PERFMON_START_NS (CLOCK_MONOTONIC ns;
#	default: now). The remote's record runs with --control under
#	"ksft-perfmon-nl link -- REMOTE_PREFIX ...": one connection, on
#	which its clock is lined up with ours to within half a round trip
#	(PERFMON_REMOTE_TRIP_NS) and which perfmon_stop ends, which stops
#	it. The tool must be at the same path on the remote. A record
#	not sampling within PERFMON_READY_S s (default 30: a debug kernel
#	under load starts a remote's in seconds) fails it, after what it
#	started is stopped: on the remote, what the command's shell
#	started too (its process group, as sshd runs a command).
# perfmon_metric NAME VALUE [POLICY_JSON]
#	A test's own observation now, host "local"; POLICY_JSON (as
#	json.dumps(..., separators=(",", ":"), sort_keys=True) writes it)
#	the first time. VALUE is a JSON number: "0.5", not ".5" as bc
#	prints it.
# perfmon_stop
#	Stops both records and prints every policy line once, then the
#	observations of both hosts in time order. Non-zero when a record
#	failed ("# perfmon (remote): record exited 255: its connection was
#	lost" for ssh's); record's own diagnostics ("# ksft-perfmon: ...")
#	come first.
#
# The tool is $KSFT_PERFMON_NL, or this tree's tools/ksft-perfmon-nl.

: "${KSFT_PERFMON_NL:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." &&
			pwd)/tools/ksft-perfmon-nl}"

_perfmon_dir=
_perfmon_remote=
_perfmon_pids=()

# waits up to PERFMON_READY_S s for a line "ready PID" in READY, which may
# have other lines before it (a remote's shell or login may print some);
# prints PID
_perfmon_ready() {	# READY ERRORS RECORD_PID
	local end=$((SECONDS + ${PERFMON_READY_S:-30})) line said
	while [ "$SECONDS" -le "$end" ]; do
		# not there yet when the background job has not opened it
		while read -r line; do
			case "$line" in
			"ready "*) echo "${line#ready }"; return 0 ;;
			esac
		done 2>/dev/null < "$1"
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	said=$(grep -v -e '^ready ' -e '^pid ' -e '^clock ' "$2")
	if kill -0 "$3" 2>/dev/null; then
		said="not sampling after ${PERFMON_READY_S:-30} s${said:+: $said}"
	fi
	echo "perfmon: record did not start: $said" >&2
	return 1
}

perfmon_start() {
	local interval=1000 metrics= ifname= rifname= opt base rpid
	local tool OPTIND=1
	_perfmon_remote=
	while getopts "i:m:l:r:R:" opt; do
		case "$opt" in
		i) interval=$OPTARG ;;
		m) metrics=$OPTARG ;;
		l) ifname=$OPTARG ;;
		r) _perfmon_remote=$OPTARG ;;
		R) rifname=$OPTARG ;;
		*) echo "perfmon_start: [-i MS] [-m LIST] [-l IFNAME] [-r REMOTE_PREFIX [-R IFNAME]]" >&2
		   return 2 ;;
		esac
	done
	PERFMON_REMOTE_TRIP_NS=
	_perfmon_dir=$(mktemp -d) || return 1
	_perfmon_pids=()
	base=${PERFMON_START_NS:-$("$KSFT_PERFMON_NL" clock)}
	PERFMON_START_NS=$base
	: > "$_perfmon_dir/test.ktap"

	KSFT_READY_FD=3 "$KSFT_PERFMON_NL" record --interval "$interval" \
		--host local --time-base "$base" --duration 604800 \
		${metrics:+--metrics "$metrics"} ${ifname:+--ifname "$ifname"} \
		> "$_perfmon_dir/local.ktap" 2> "$_perfmon_dir/local.err" \
		3> "$_perfmon_dir/local.ready" &
	_perfmon_pids+=("$!")
	_perfmon_ready "$_perfmon_dir/local.ready" "$_perfmon_dir/local.err" \
		"$!" >/dev/null ||
		{ perfmon_stop >/dev/null; return 1; }
	[ -n "$_perfmon_remote" ] || return 0

	# The remote's record over one connection, link's: its clock lined
	# up and its time base given on it, and stopped by its end. Its
	# shell's pid first, record's once it execs: one that never says it
	# is ready is stopped there too, with what its shell started
	tool=$(printf '%q' "$KSFT_PERFMON_NL")
	"$KSFT_PERFMON_NL" link --time-base "$base" -- $_perfmon_remote \
		"echo pid \$\$ >&2; KSFT_READY_FD=2 exec $tool record --control \
		--interval $(printf '%q' "$interval") --host remote \
		${metrics:+--metrics $(printf '%q' "$metrics")} \
		${rifname:+--ifname $(printf '%q' "$rifname")}" \
		> "$_perfmon_dir/remote.ktap" 2> "$_perfmon_dir/remote.err" &
	_perfmon_pids+=("$!")
	rpid=$(_perfmon_ready "$_perfmon_dir/remote.err" \
		"$_perfmon_dir/remote.err" "$!") ||
		{ perfmon_stop >/dev/null; return 1; }
	echo "$rpid" > "$_perfmon_dir/remote.pid"
	PERFMON_REMOTE_TRIP_NS=$(sed -n 's/^clock -\{0,1\}[0-9]* \([0-9]*\)$/\1/p' \
		"$_perfmon_dir/remote.err")
}

perfmon_metric() {	# NAME VALUE [POLICY_JSON]
	[ -n "$_perfmon_dir" ] || { echo "perfmon_metric: not started" >&2; return 1; }
	[ -z "${3:-}" ] ||
		echo "# ktap-metric-policy-json: $3" >> "$_perfmon_dir/test.ktap"
	"$KSFT_PERFMON_NL" metric --time-base "$PERFMON_START_NS" -- "$1" "$2" \
		>> "$_perfmon_dir/test.ktap"
}

# waits up to SECS s for PID, a job of this shell; kills it after that (an
# ssh whose host is gone, with no FIN, would wait for hours); its status
_perfmon_wait() {	# PID SECS
	local end=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null && [ "$SECONDS" -le "$end" ]; do
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1"
}

# the remote shell's pid, once it said it (given up to SECS s more)
_perfmon_spid() {	# ERRORS SECS
	local end=$((SECONDS + $2)) spid
	while :; do
		spid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$1" 2>/dev/null | head -n1)
		[ -n "$spid" ] || [ "$SECONDS" -gt "$end" ] ||
			{ sleep 0.2; continue; }
		# never 0 or 1: "kill -1" is everyone
		[ "${spid:-0}" -gt 1 ] && echo "$spid"
		return
	done
}

perfmon_stop() {
	local d=$_perfmon_dir rc=0 i st spid host=local
	[ -n "$d" ] || { echo "perfmon_stop: not started" >&2; return 1; }
	[ -n "${_perfmon_pids[0]:-}" ] &&
		kill -TERM "${_perfmon_pids[0]}" 2>/dev/null
	if [ -s "$d/remote.pid" ]; then
		# link ends the connection's input, which stops the record
		kill -TERM "${_perfmon_pids[1]}" 2>/dev/null
	elif [ -n "${_perfmon_pids[1]:-}" ]; then
		# a remote record that never said it was ready: what its
		# shell started there (its process group: sshd makes a session
		# of each command), unless its command here ended already;
		# then that command, or the wait below would wait for it for
		# as long as it records
		if kill -0 "${_perfmon_pids[1]}" 2>/dev/null; then
			spid=$(_perfmon_spid "$d/remote.err" 10)
			[ -n "$spid" ] && timeout 30 $_perfmon_remote \
				"kill -TERM -$spid 2>/dev/null || kill -TERM $spid" \
				2>/dev/null
		fi
		kill -TERM "${_perfmon_pids[1]}" 2>/dev/null
	fi
	for i in "${_perfmon_pids[@]}"; do
		_perfmon_wait "$i" 60
		st=$?
		# 3: samples were lost, which record's output says; 255 is
		# ssh's own, for a connection lost or never made, and 137 a
		# command here that did not end
		if [ "$st" -ne 0 ] && [ "$st" -ne 3 ]; then
			rc=1
			echo "# perfmon ($host): record exited $st$([ "$host" = remote ] &&
				{ [ "$st" -eq 255 ] || [ "$st" -eq 137 ]; } &&
				echo ': its connection was lost')"
		fi
		host=remote
	done
	for i in local remote; do
		[ -s "$d/$i.err" ] &&
			grep -v -e '^ready ' -e '^pid ' -e '^clock ' "$d/$i.err" |
			sed "s/^/# perfmon ($i): /"
	done
	cat "$d"/*.ktap 2>/dev/null | grep '^# ksft-perfmon: '
	# policies once, in order; then observations by time, stable
	cat "$d/local.ktap" "$d/remote.ktap" "$d/test.ktap" 2>/dev/null |
		awk '/^# ktap-metric-policy-json: / && !seen[$0]++'
	cat "$d/local.ktap" "$d/remote.ktap" "$d/test.ktap" 2>/dev/null |
		awk '/^# ktap-metric-json: / {
			match($0, /"time":-?[0-9.e+-]+/)
			printf "%s\t%d\t%s\n", substr($0, RSTART + 7, RLENGTH - 7), NR, $0
		}' | sort -t "$(printf '\t')" -k1,1g -k2,2n | cut -f3-
	rm -rf "$d"
	_perfmon_dir= _perfmon_pids=()
	return "$rc"
}
