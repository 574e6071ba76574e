#!/bin/sh
# Cost of the off-CPU signal under a context-switch storm: two threads pass
# a byte back and forth over two pipes (tests/workloads/blocking --pingpong:
# 2 context switches and about 1 wakeup per round trip, a few us each),
# pinned to one CPU so that every block is a context switch.  Cases, run in
# turn for RUNS rounds so that load from elsewhere hits all alike; each
# figure is the median over the rounds:
#
#   bare                      no tracer
#   floor                     bench/ss_count: tp_btf sched_switch and
#                             sched_waking that only count the target's
#   floor+time                bench/ss_count -t: and time each interval
#                             (task storage, one clock read a switch): the
#                             least an off-CPU tracer can cost
#   nusku                     nusku record -e offcpu (default --min-block
#                             10 us: most blocks are shorter; on a loaded
#                             machine more are kept, and each kept one
#                             costs its stacks and its record)
#   nusku-1s                  the same with --min-block 1s: nothing kept,
#                             the per-event cost of the programs alone
#   before                    $NUSKU_BEFORE record -e offcpu, when set (an
#                             older build, to compare)
#   offcputime                libbpf-tools' offcputime -p PID -m 10 (bcc's
#                             CO-RE build; the Python one needs kprobes)
#
# Every case runs under bench/bpf_cost, which reads the kernel's run-time
# statistics of the tracer's own BPF programs (BPF_ENABLE_STATS, held for
# the run).  "bpf ns/switch" is the run time of all of them over the run
# count of its sched_switch program (every run also pays the statistics'
# own two clock reads, alike for every tool); the per-program ns per run
# follow the table.  "+cpu ns/switch" is the CPU time the workload's
# threads spent on the round trips beyond bare, per context switch (probes
# run in the switching threads; a tracer's own process is not in it).
# "kswitch/s" is the storm's throughput (wall clock: the machine is shared).
#
#   bench/offcpu.sh [BUILDDIR]        (default: the current directory)
#
# Environment: ROUNDS (round trips, default 300000), RUNS (default 5), CASES
# (a subset), NUSKU_BEFORE, BCC_DELAY (seconds the workload waits for
# offcputime to attach, default 2), OFFCPU_RESULTS (a file to keep the raw
# results in).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/blocking
FLOOR=$B/bench/ss_count
COST=$B/bench/bpf_cost
ROUNDS=${ROUNDS:-300000}
RUNS=${RUNS:-5}
BCC_DELAY=${BCC_DELAY:-2}
BCC=/usr/sbin/offcputime
# The load is pinned to one CPU: a pipe ping-pong across two CPUs is many
# times slower than on one and which one the scheduler picks changes from
# run to run; on one CPU every block is a context switch.
PIN="taskset -c 0"

# bench/offcpu.sh BUILDDIR --case NAME OUTDIR: one run of one case (what
# bench/bpf_cost runs).
if [ "${2:-}" = --case ]; then
	T=$4
	case $3 in
	bare) exec $PIN "$W" --pingpong "$ROUNDS" ;;
	floor) exec "$FLOOR" -- $PIN "$W" --pingpong "$ROUNDS" ;;
	floor+time) exec "$FLOOR" -t -- $PIN "$W" --pingpong "$ROUNDS" ;;
	nusku) exec "$NUSKU" record -q -e offcpu -o "$T/nusku.nsk" -- $PIN "$W" --pingpong "$ROUNDS" ;;
	nusku-1s) exec "$NUSKU" record -q -e offcpu --min-block 1s -o "$T/nusku-1s.nsk" -- $PIN "$W" --pingpong "$ROUNDS" ;;
	before) exec "$NUSKU_BEFORE" record -q -e offcpu -o "$T/before.nsk" -- $PIN "$W" --pingpong "$ROUNDS" ;;
	offcputime)
		# it attaches to a running pid: the workload waits BCC_DELAY s
		# before its round trips (not timed); stopped after them
		$PIN "$W" --pingpong "$ROUNDS" "$BCC_DELAY" &
		wp=$!
		"$BCC" -p "$wp" -m 10 > "$T/bcc.out" 2>&1 &
		bp=$!
		wait "$wp"
		kill -INT "$bp" 2>/dev/null || true
		wait "$bp" 2>/dev/null || true
		exit 0 ;;
	esac
	exit 2
fi

. "$(dirname "$0")/bpf_cost_lib.sh"
bench_ready offcpu.sh "$NUSKU" "$W" "$FLOOR" "$COST"

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export ROUNDS BCC_DELAY NUSKU_BEFORE="${NUSKU_BEFORE:-}"

cases=${CASES:-"bare floor floor+time nusku nusku-1s"}
if [ -z "${CASES:-}" ]; then
	[ -n "$NUSKU_BEFORE" ] && cases="$cases before"
	[ -x "$BCC" ] && cases="$cases offcputime"
fi

# $T/results: "run CASE ROUND CPU_NS WALL_NS" per case and round, and
# "prog CASE ROUND NAME RUNS NS" per program of its tracer.
: > "$T/results"
for r in $(seq "$RUNS"); do
	for c in $cases; do
		"$COST" -- sh "$0" "$B" --case "$c" "$T" > "$T/out" 2> "$T/err" || true
		awk -v c="$c" -v r="$r" '
			/^pingpong / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
			$1 == "bpf_cost:" && $2 == "prog" { print "prog", c, r, $3, $5, $7 }
			END { if (v["cpu_ns"] != "") print "run", c, r, v["cpu_ns"], v["ns"] }' \
			"$T/out" "$T/err" >> "$T/results"
		# intervals a recording kept
		f=$T/$c.nsk
		if [ -f "$f" ]; then
			n=$("$NUSKU" report "$f" -f csv --sql "SELECT count(*) FROM offcpu" 2>/dev/null | tail -n 1)
			echo "kept $c $r ${n:-0}" >> "$T/results"
			rm -f "$f"
		fi
	done
done
bench_header "offcpu bench: $ROUNDS round trips (2 switches each) on one CPU, median of $RUNS rounds" "${OFFCPU_RESULTS:-}"
awk -v cases="$cases" -v rounds="$ROUNDS" "$BPF_COST_AWK"'
	$1 == "run" { cpu[$2] = cpu[$2] " " $4; wall[$2] = wall[$2] " " $5 }
	$1 == "kept" { kept[$2] = kept[$2] " " $4 }
	$1 == "prog" {
		add_prog()
		if ($4 ~ /swit/ && !(($2 SUBSEP $3) in sw)) sw[$2 SUBSEP $3] = $5
	}
	END {
		n = split(cases, c, " ")
		for (i = 1; i <= n; i++)
			bpf[c[i]] = per_event(c[i], sw)
		bc = median(cpu["bare"])
		printf "| %-12s | %13s | %11s | %12s | %14s | %9s | %8s |\n", "tool", "bpf ns/switch",
			"/ floor+time", "/ floor", "+cpu ns/switch", "kswitch/s", "kept"
		printf "|--------------|---------------|-------------|--------------|----------------|-----------|----------|\n"
		for (i = 1; i <= n; i++) {
			k = c[i]
			if (cpu[k] == "") { printf "| %-12s | (could not run here) |\n", k; continue }
			b = bpf[k]; r1 = r2 = "-"
			if (b != "" && bpf["floor+time"] > 0 && k != "bare") r1 = sprintf("%.2fx", b / bpf["floor+time"])
			if (b != "" && bpf["floor"] > 0 && k != "bare") r2 = sprintf("%.2fx", b / bpf["floor"])
			printf "| %-12s | %13s | %11s | %12s | %14s | %9.0f | %8s |\n", k,
				b == "" ? "-" : sprintf("%.1f", b), r1, r2,
				k == "bare" ? "-" : sprintf("%.0f", (median(cpu[k]) - bc) / (2 * rounds)),
				2 * rounds / median(wall[k]) * 1e6,
				kept[k] == "" ? "-" : median(kept[k])
		}
		prog_rows(cases, rounds, "round trip")
	}' "$T/results"
