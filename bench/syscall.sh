#!/bin/sh
# Overhead of the syscall signal against the other ways to count syscalls,
# on a getpid loop (bench/sc_loop: syscall(SYS_getpid) N times, timed by
# the loop itself so no tool's start-up or report is counted), best of RUNS:
#
#   bare       the loop alone
#   floor      bench/sc_count: raw_tp sys_enter + sys_exit that only count
#              (the least any syscall tracer in BPF can cost)
#   nusku      nusku record -e syscall (counts, latency histograms, paths,
#              slow calls)
#   syscount   bcc's syscount -L -p PID (counts and latency per syscall)
#   perf       perf trace -s (per-syscall summary)
#   strace     strace -c (ptrace)
#
# Prints ns per call, the slowdown against the bare loop, the cost each
# tool adds per call, and that cost against the floor's.
#
#   bench/syscall.sh [BUILDDIR]        (default: the current directory)
#
# Environment: CALLS (default 1000000), RUNS (default 3).  bcc's syscount
# compiles its BPF program at run time and needs the running kernel's
# headers; where they are missing it is reported as not run.
set -eu
B=${1:-.}
NUSKU=$B/nusku
LOOP=$B/bench/sc_loop
FLOOR=$B/bench/sc_count
CALLS=${CALLS:-1000000}
RUNS=${RUNS:-3}
SYSCOUNT=${SYSCOUNT:-/usr/sbin/syscount-bpfcc}
[ -x "$NUSKU" ] && [ -x "$LOOP" ] && [ -x "$FLOOR" ] ||
	{ echo "syscall.sh: build first (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "syscall.sh: needs root" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# ns per call of one run of CMD... (the loop's own line).
one() {
	"$@" 2>/dev/null | sed -n 's/^ns_per_call //p'
}

# syscount attaches to a pid: start the loop waiting for a file, start
# syscount on it, release the loop once syscount says it is tracing.
one_syscount() {
	rm -f "$T/go"
	SC_WAIT_FILE=$T/go "$LOOP" "$CALLS" > "$T/loop.out" &
	lp=$!
	"$SYSCOUNT" -L -p "$lp" > "$T/sc.out" 2>&1 &
	sp=$!
	i=0
	while ! grep -q Tracing "$T/sc.out" 2>/dev/null; do
		i=$((i + 1))
		# bcc compiles its program at run time and needs the running
		# kernel's headers: without them syscount exits at once.
		if [ $i -ge 600 ] || ! kill -0 $sp 2>/dev/null; then
			kill $sp $lp 2>/dev/null
			wait $lp 2>/dev/null
			tail -1 "$T/sc.out" >&2
			return 1
		fi
		sleep 0.1
	done
	touch "$T/go"
	wait $lp
	kill -INT $sp 2>/dev/null || true
	wait $sp 2>/dev/null || true
	sed -n 's/^ns_per_call //p' "$T/loop.out"
}

# best CASE: the fastest of RUNS runs of a case, in ns per call.
best() {
	b=
	for i in $(seq "$RUNS"); do
		case $1 in
		bare) d=$(one "$LOOP" "$CALLS") ;;
		floor) d=$(one "$FLOOR" -- "$LOOP" "$CALLS") ;;
		nusku) d=$(one "$NUSKU" record -q -e syscall -o "$T/run.nsk" -- "$LOOP" "$CALLS") ;;
		syscount) d=$(one_syscount) || d= ;;
		perf) d=$(one perf trace -s -o "$T/perf.out" -- "$LOOP" "$CALLS") ;;
		strace) d=$(one strace -f -c -o "$T/strace.out" "$LOOP" "$CALLS") ;;
		esac
		[ -n "$d" ] || { echo "syscall.sh: $1 failed" >&2; return 1; }
		b=$(awk -v a="$d" -v b="$b" 'BEGIN { print (b == "" || a < b) ? a : b }')
	done
	echo "$b"
}

cases="bare floor nusku"
[ -x "$SYSCOUNT" ] && cases="$cases syscount"
command -v perf >/dev/null && cases="$cases perf"
command -v strace >/dev/null && cases="$cases strace"

: > "$T/results"
for c in $cases; do
	if v=$(best "$c"); then
		echo "$c $v" >> "$T/results"
	else
		echo "$c -" >> "$T/results"
	fi
done
echo "syscall: $CALLS getpid calls, best of $RUNS runs ($(uname -r), $(nproc) CPUs)"
awk '
	{ name[NR] = $1; ns[$1] = $2 }
	END {
		bare = ns["bare"]; floor = ns["floor"] - bare
		printf "%-9s %10s %9s %12s %14s\n", "tool", "ns/call", "slowdown",
			"added ns", "added / floor"
		for (i = 1; i <= NR; i++) {
			n = name[i]
			if (ns[n] == "-") {
				printf "%-9s %10s   (could not run here)\n", n, "-"
				continue
			}
			add = ns[n] - bare
			rel = "-"
			if (n != "bare" && floor > 0)
				rel = sprintf("%.2fx", add / floor)
			printf "%-9s %10.1f %8.2fx %12.1f %13s\n", n, ns[n],
				ns[n] / bare, add, rel
		}
	}' "$T/results"
