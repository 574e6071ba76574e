#!/bin/sh
# How old the newest event on nusku live's picture is: tests/live/live_gen
# streams samples stamped with CLOCK_MONOTONIC (its writer flushes every
# 100 ms) into `nusku live -` printing a snapshot every 0.1 s.  Each
# snapshot says how long live has run (+T) and how much recording time it
# holds; live starts when the stream's header arrives, so T minus the span
# is the age of the newest event shown: flush wait + transport + load +
# redraw period.  Prints the median and the worst age.
#
#   bench/live_latency.sh [BUILDDIR] [SECONDS]
set -eu
B=${1:-.}
S=${2:-5}
GEN=$B/tests/live/live_gen
[ -x "$B/nusku" ] && [ -x "$GEN" ] || { echo "live_latency.sh: build first (make check TESTS=)" >&2; exit 2; }
"$GEN" - "$S" | "$B/nusku" live --snapshot --interval 0.1 --view cpu - |
	sed -n 's/^== nusku live +\([0-9.]*\)s: .*  \([0-9.]*\)s recorded .*\[live\].*/\1 \2/p' |
	awk '{ print $1 - $2 }' | sort -n |
	awk '{ a[NR] = $1 } END {
		if (!NR) { print "no live snapshots"; exit 1 }
		printf "live latency over %d snapshots: median %.0f ms, worst %.0f ms\n",
			NR, 1000 * a[int((NR + 1) / 2)], 1000 * a[NR] }'
