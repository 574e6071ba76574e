#!/bin/sh
# Overhead of the syscall signal against the other ways to count syscalls,
# on a getpid loop (bench/sc_loop: syscall(SYS_getpid) N times, timed by
# the loop itself so no tool's start-up or report is counted), best of RUNS:
#
#   bare       the loop alone
#   floor      bench/sc_count: raw_tp sys_enter + sys_exit that only count
#              (the least any syscall tracer in BPF can cost)
#   floor+clk  bench/sc_count -t: the same, reading the clock at entry and
#              exit (the least any tracer that measures latency can cost)
#   nusku      nusku record -e syscall (counts, latency histograms, paths,
#              slow calls)
#   syscount   bcc's syscount -L -p PID (counts and latency per syscall)
#   perf       perf trace -s (per-syscall summary)
#   strace     strace -c (ptrace)
#
# Prints per call the wall-clock time and the loop thread's CPU time (what
# the in-kernel probes cost; a loaded machine inflates it much less than
# the wall clock, but it leaves out a tracer's own process: strace, perf),
# the slowdown against the bare loop, and the CPU cost each tool adds per
# call against the floors'.
#
#   bench/syscall.sh [BUILDDIR]        (default: the current directory)
#   bench/run syscall
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
[ -f "$B/Makefile" ] && make -C "$B" -s bench/sc_loop bench/sc_count >/dev/null 2>&1
[ -x "$NUSKU" ] && [ -x "$LOOP" ] && [ -x "$FLOOR" ] ||
	{ echo "syscall.sh: build first (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "syscall.sh: needs root" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# "wall cpu" ns per call of one run of CMD... (the loop's own lines).
one() {
	"$@" 2>/dev/null | awk '$1 == "ns_per_call" { w = $2 }
		$1 == "cpu_ns_per_call" { c = $2 } END { if (w != "") print w, c }'
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
	awk '$1 == "ns_per_call" { w = $2 } $1 == "cpu_ns_per_call" { c = $2 }
		END { if (w != "") print w, c }' "$T/loop.out"
}

# best CASE: the fastest of RUNS runs of a case, "wall cpu" ns per call
# (each the minimum on its own).
best() {
	b=
	for i in $(seq "$RUNS"); do
		case $1 in
		bare) d=$(one "$LOOP" "$CALLS") ;;
		floor) d=$(one "$FLOOR" -- "$LOOP" "$CALLS") ;;
		floor+clk) d=$(one "$FLOOR" -t -- "$LOOP" "$CALLS") ;;
		nusku) d=$(one "$NUSKU" record -q -e syscall -o "$T/run.nsk" -- "$LOOP" "$CALLS") ;;
		syscount) d=$(one_syscount) || d= ;;
		perf) d=$(one perf trace -s -o "$T/perf.out" -- "$LOOP" "$CALLS") ;;
		strace) d=$(one strace -f -c -o "$T/strace.out" "$LOOP" "$CALLS") ;;
		esac
		[ -n "$d" ] || { echo "syscall.sh: $1 failed" >&2; return 1; }
		b=$(echo "$d $b" | awk '{ w = $1; c = $2
			if (NF == 4) { if ($3 < w) w = $3; if ($4 < c) c = $4 }
			print w, c }')
	done
	echo "$b"
}

cases="bare floor floor+clk nusku"
[ -x "$SYSCOUNT" ] && cases="$cases syscount"
command -v perf >/dev/null && cases="$cases perf"
command -v strace >/dev/null && cases="$cases strace"

: > "$T/results"
for c in $cases; do
	if v=$(best "$c"); then
		echo "$c $v" >> "$T/results"
	else
		echo "$c - -" >> "$T/results"
	fi
done
echo "$CALLS getpid calls, best of $RUNS runs ($(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
awk '
	{ name[NR] = $1; wall[$1] = $2; cpu[$1] = $3 }
	END {
		bw = wall["bare"]; bc = cpu["bare"]
		f = cpu["floor"] - bc; fc = cpu["floor+clk"] - bc
		printf "%-10s %9s %9s %9s %10s %9s %11s\n", "tool", "wall ns", "slowdown",
			"cpu ns", "added cpu", "/ floor", "/ floor+clk"
		for (i = 1; i <= NR; i++) {
			n = name[i]
			if (wall[n] == "-") {
				printf "%-10s %9s   (could not run here)\n", n, "-"
				continue
			}
			add = cpu[n] - bc
			r1 = r2 = "-"
			if (n != "bare" && f > 0) r1 = sprintf("%.2fx", add / f)
			if (n != "bare" && fc > 0) r2 = sprintf("%.2fx", add / fc)
			printf "%-10s %9.1f %8.2fx %9.1f %10.1f %9s %11s\n", n, wall[n],
				wall[n] / bw, cpu[n], add, r1, r2
		}
	}' "$T/results"
