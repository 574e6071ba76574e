#!/bin/sh
# Overhead of the syscall signal against the other ways to count syscalls,
# on a getpid loop (bench/sc_loop: syscall(SYS_getpid) N times, timed by
# the loop itself so no tool's start-up or report is counted):
#
#   bare        the loop alone
#   floor       bench/sc_count: raw_tp sys_enter + sys_exit that only count
#               (the least any syscall tracer in BPF can cost)
#   floor+clk   bench/sc_count -t: the same, reading the clock at entry and
#               exit, the entry time per CPU (only right for this loop)
#   floor+task  bench/sc_count -T: the same with the entry time per thread
#               in task storage (the least a tracer whose latencies stay
#               right when calls block and threads move can cost)
#   floor+cache bench/sc_count -C: the entry time per thread in an array,
#               the thread's index cached per CPU (task storage only when
#               another thread ran on the CPU): how nusku keeps it
#   nusku       nusku record -e syscall (exact counts, errors and latency
#               histograms per thread and syscall, sampled code paths,
#               slow calls)
#   default     nusku record with the default signals
#   before      $NUSKU_BEFORE record -e syscall, when NUSKU_BEFORE names
#               another build of nusku (e.g. of main, to compare)
#   syscount    bcc's syscount -p PID (counts per syscall; libbpf-tools)
#   syscount-L  bcc's syscount -L -p PID (counts and latency per syscall)
#   perf-stat   perf stat -e raw_syscalls:sys_enter (a count, no BPF)
#
# Cases run in turn, RUNS rounds of every case, so that a machine busy with
# something else slows all of them alike; each case keeps its fastest run.
# Prints per call the loop thread's CPU time (what in-kernel probes cost; it
# leaves out a tracer's own process) and wall time, the CPU time each tool
# adds per call, and that as a ratio of the floors'.
#
#   bench/syscall.sh [BUILDDIR]        (default: the current directory)
#   bench/run syscall
#
# Environment: CALLS (default 1000000), RUNS (default 3), CASES (a subset),
# SYSCOUNT, NUSKU_BEFORE, SC_MIX (set: the loop makes getpid, 4 KiB reads
# of /dev/zero and 4 KiB writes to /dev/null in turn).  A tool that cannot run is reported as not run.  Another
# syscall tracer attached meanwhile (another recording on the machine) costs
# every case; the header line says how many raw_tp programs were loaded.
set -eu
B=${1:-.}
NUSKU=$B/nusku
LOOP=$B/bench/sc_loop
FLOOR=$B/bench/sc_count
CALLS=${CALLS:-1000000}
RUNS=${RUNS:-3}
# bcc's syscount: its CO-RE build (Debian: libbpf-tools) needs no kernel
# headers; the Python one (bpfcc-tools) compiles at run time and does.
if [ -z "${SYSCOUNT:-}" ]; then
	SYSCOUNT=/usr/sbin/syscount
	[ -x "$SYSCOUNT" ] || SYSCOUNT=/usr/sbin/syscount-bpfcc
fi
[ -f "$B/Makefile" ] && make -C "$B" -s bench/sc_loop bench/sc_count >/dev/null 2>&1
[ -x "$NUSKU" ] && [ -x "$LOOP" ] && [ -x "$FLOOR" ] ||
	{ echo "syscall.sh: build first (make)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "syscall.sh: needs root" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# The loop's own "wall cpu" ns per call, from its output on stdin.
loop_ns() {
	awk '$1 == "ns_per_call" { w = $2 } $1 == "cpu_ns_per_call" { c = $2 }
		END { if (w != "") print w, c }'
}

one() {
	"$@" 2>/dev/null | loop_ns
}

# syscount attaches to a pid: start the loop waiting for a file, start
# syscount on it, release the loop once syscount says it is tracing.
one_syscount() {
	rm -f "$T/go"
	SC_WAIT_FILE=$T/go "$LOOP" "$CALLS" > "$T/loop.out" &
	lp=$!
	# line-buffered: its "Tracing" line must reach the file at once
	stdbuf -oL "$SYSCOUNT" "$@" -p "$lp" > "$T/sc.out" 2>&1 &
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
	loop_ns < "$T/loop.out"
}

run_case() {
	case $1 in
	bare) one "$LOOP" "$CALLS" ;;
	floor) one "$FLOOR" -- "$LOOP" "$CALLS" ;;
	floor+clk) one "$FLOOR" -t -- "$LOOP" "$CALLS" ;;
	floor+task) one "$FLOOR" -T -- "$LOOP" "$CALLS" ;;
	floor+cache) one "$FLOOR" -C -- "$LOOP" "$CALLS" ;;
	nusku) one "$NUSKU" record -q -e syscall -o "$T/run.nsk" -- "$LOOP" "$CALLS" ;;
	default) one "$NUSKU" record -q -o "$T/run.nsk" -- "$LOOP" "$CALLS" ;;
	before) one "$NUSKU_BEFORE" record -q -e syscall -o "$T/run.nsk" -- "$LOOP" "$CALLS" ;;
	syscount) one_syscount ;;
	syscount-L) one_syscount -L ;;
	perf-stat) one perf stat -e raw_syscalls:sys_enter -o "$T/perf.out" -- "$LOOP" "$CALLS" ;;
	esac
}

cases=${CASES:-"bare floor floor+clk floor+task floor+cache nusku default"}
if [ -z "${CASES:-}" ]; then
	[ -n "${NUSKU_BEFORE:-}" ] && cases="$cases before"
	[ -x "$SYSCOUNT" ] && cases="$cases syscount syscount-L"
	command -v perf >/dev/null && cases="$cases perf-stat"
fi
others=$(bpftool prog list 2>/dev/null | grep -c raw_tracepoint || true)

: > "$T/results"
for r in $(seq "$RUNS"); do
	for c in $cases; do
		d=$(run_case "$c") || d=
		[ -n "$d" ] && echo "$c $d" >> "$T/results"
	done
done
what=getpid
[ -n "${SC_MIX:-}" ] && what=getpid/read/write
echo "$CALLS $what calls, fastest of $RUNS rounds of every case in turn" \
	"($(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)," \
	"$others raw_tp programs loaded before)"
awk -v cases="$cases" '
	{ if (!($1 in wall) || $2 < wall[$1]) wall[$1] = $2
	  if (!($1 in cpu) || $3 < cpu[$1]) cpu[$1] = $3 }
	END {
		bc = cpu["bare"]; f = cpu["floor"] - bc; ft = cpu["floor+task"] - bc
		printf "%-11s %8s %9s %10s %8s %13s\n", "tool", "cpu ns", "wall ns",
			"added ns", "/ floor", "/ floor+task"
		n = split(cases, c, " ")
		for (i = 1; i <= n; i++) {
			k = c[i]
			if (!(k in cpu)) { printf "%-11s   (could not run here)\n", k; continue }
			add = cpu[k] - bc
			r1 = r2 = "-"
			if (k != "bare" && f > 0) r1 = sprintf("%.2fx", add / f)
			if (k != "bare" && ft > 0) r2 = sprintf("%.2fx", add / ft)
			printf "%-11s %8.1f %9.1f %10.1f %8s %13s\n", k, cpu[k], wall[k],
				add, r1, r2
		}
	}' "$T/results"
