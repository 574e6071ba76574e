#!/bin/sh
# The fixed cost of a recording: what a user waits for beyond the program
# itself, side by side with perf record in one paired loop (each command
# in turn, RUNS rounds, medians of the wall time):
#
#   bare                the program alone
#   nusku               nusku record (every signal)
#   nusku -e cpu        CPU samples only
#   other               OTHER/nusku record (every signal), when OTHER is
#                       given: an older build, for a before/after
#   perf record -g      perf with frame-pointer call graphs
#
# for /bin/true and for a short node run (when node is installed).
#
#   bench/fixed.sh [BUILDDIR [OTHER]]   (default: the current directory)
#
# Environment: RUNS (default 7).
set -eu
B=${1:-.}
OTHER=${2:-}
RUNS=${RUNS:-7}
NUSKU=$B/nusku
[ -x "$NUSKU" ] || { echo "fixed.sh: build first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "fixed.sh: needs root" >&2; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# seconds a command takes, its output thrown away
wall() {
	s=$(date +%s%N)
	"$@" > /dev/null 2>&1 || true
	e=$(date +%s%N)
	echo "$(( (e - s) / 1000 ))"
}

run_set() { # LABEL PROGRAM...
	label=$1
	shift
	echo "$label bare $(wall "$@")" >> "$T/times"
	echo "$label nusku $(wall "$NUSKU" record -q -o "$T/a.nsk" -- "$@")" >> "$T/times"
	echo "$label nusku-e-cpu $(wall "$NUSKU" record -q -e cpu -o "$T/a.nsk" -- "$@")" >> "$T/times"
	[ -z "$OTHER" ] ||
		echo "$label other $(wall "$OTHER/nusku" record -q -o "$T/b.nsk" -- "$@")" >> "$T/times"
	command -v perf > /dev/null &&
		echo "$label perf-record-g $(wall perf record -q -g -o "$T/p.data" -- "$@")" >> "$T/times"
	return 0
}

: > "$T/times"
for i in $(seq "$RUNS"); do
	run_set true /bin/true
	if command -v node > /dev/null; then
		run_set node node -e 'for(let i=0;i<3e7;i++);'
	fi
done
echo "fixed cost: medians of $RUNS paired rounds (wall s); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | tool | median | min | max |"
echo "|---|---|---|---|---|"
sort -k1,1 -k2,2 -k3,3n "$T/times" | awk '
	function flush() {
		if (!n) return
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "| %s | %s | %.3f | %.3f | %.3f |\n", p, t, m / 1e6, v[1] / 1e6, v[n] / 1e6
		n = 0
	}
	{ if ($1 != p || $2 != t) { flush(); p = $1; t = $2 } v[++n] = $3 }
	END { flush() }'
