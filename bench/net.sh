#!/bin/sh
# Cost of the network signal under a small-message loopback storm:
# tcp_pingpong's round trips (64 bytes each way: 2 sends and 2 receives per
# round trip, each a hit of the owner-learning tracepoints), inside a
# network namespace of our own (loopback only), timed by the workload
# itself (a tracer's start and stop are not counted).  Cases run in turn
# for RUNS rounds so that load from elsewhere hits all alike; each figure
# is the median over the rounds:
#
#   bare                 no tracer
#   floor                bench/ss_count -n: tp_btf sock_send_length and
#                        sock_recv_length that only count the target's
#                        (a tgid compare): the least a tracer of these
#                        tracepoints can cost
#   nusku                nusku record -e net: owners learned on every
#                        send/receive, retransmits
#   before               $NUSKU_BEFORE record -e net, when set
#   bcc tcpretrans       not run: it traces retransmits only (no owner, no
#                        code path), so on a clean loopback it costs nothing
#
# Every case runs under bench/bpf_cost (the kernel's run-time statistics of
# the tracer's own programs): "bpf ns/event" is the run time of all of them
# over the runs of the send and receive programs.  "us/round trip" is the
# workload's own wall time (the machine is shared).
#
#   bench/net.sh [BUILDDIR]        (default: the current directory)
#
# Environment: MESSAGES (default 100000), RUNS (default 5), CASES,
# NUSKU_BEFORE, NET_RESULTS (a file to keep the raw results in).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/tcp_pingpong
FLOOR=$B/bench/ss_count
COST=$B/bench/bpf_cost
MESSAGES=${MESSAGES:-100000}
RUNS=${RUNS:-5}

# bench/net.sh BUILDDIR --case NAME OUTDIR NETNS: one run of one case (what
# bench/bpf_cost runs).
if [ "${2:-}" = --case ]; then
	T=$4
	NX="ip netns exec $5"
	case $3 in
	bare) exec $NX "$W" -n "$MESSAGES" ;;
	floor) exec $NX "$FLOOR" -n -- "$W" -n "$MESSAGES" ;;
	nusku) exec $NX "$NUSKU" record -q -e net -o "$T/nusku.nsk" -- "$W" -n "$MESSAGES" ;;
	before) exec $NX "$NUSKU_BEFORE" record -q -e net -o "$T/before.nsk" -- "$W" -n "$MESSAGES" ;;
	esac
	exit 2
fi

. "$(dirname "$0")/bpf_cost_lib.sh"
bench_ready net.sh "$NUSKU" "$W" "$FLOOR" "$COST"

NS="nsk-bench-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
export MESSAGES NUSKU_BEFORE="${NUSKU_BEFORE:-}"

cases=${CASES:-"bare floor nusku"}
[ -z "${CASES:-}" ] && [ -n "$NUSKU_BEFORE" ] && cases="$cases before"

# $T/results: "run CASE ROUND US" and "prog CASE ROUND NAME RUNS NS"
: > "$T/results"
for r in $(seq "$RUNS"); do
	for c in $cases; do
		"$COST" -- sh "$0" "$B" --case "$c" "$T" "$NS" > "$T/out" 2> "$T/err" || true
		awk -v c="$c" -v r="$r" '
			/^tcp_pingpong: / { for (i = 1; i < NF; i++) if ($(i + 1) == "us,") us = $i }
			$1 == "bpf_cost:" && $2 == "prog" { print "prog", c, r, $3, $5, $7 }
			END { if (us != "") print "run", c, r, us }' "$T/out" "$T/err" >> "$T/results"
		rm -f "$T/$c.nsk"
	done
done
bench_header "net bench: $MESSAGES loopback round trips of 64 B (2 sends, 2 receives each), median of $RUNS rounds" "${NET_RESULTS:-}"
awk -v cases="$cases" -v msgs="$MESSAGES" "$BPF_COST_AWK"'
	$1 == "run" { us[$2] = us[$2] " " $4 }
	$1 == "prog" {
		add_prog()
		if ($4 ~ /send|recv/) ev[$2 SUBSEP $3] += $5
	}
	END {
		n = split(cases, c, " ")
		for (i = 1; i <= n; i++)
			bpf[c[i]] = per_event(c[i], ev)
		printf "| %-8s | %12s | %8s | %14s | %9s |\n", "tool", "bpf ns/event", "/ floor",
			"us/round trip", "/ bare"
		printf "|----------|--------------|----------|----------------|-----------|\n"
		bu = median(us["bare"])
		for (i = 1; i <= n; i++) {
			k = c[i]
			if (us[k] == "") { printf "| %-8s | (could not run here) |\n", k; continue }
			b = bpf[k]; r1 = "-"
			if (b != "" && bpf["floor"] > 0) r1 = sprintf("%.2fx", b / bpf["floor"])
			printf "| %-8s | %12s | %8s | %14.2f | %8.3fx |\n", k,
				b == "" ? "-" : sprintf("%.1f", b), r1, median(us[k]) / msgs,
				median(us[k]) / bu
		}
		prog_rows(cases, msgs, "round trip")
	}' "$T/results"
