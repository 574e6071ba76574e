#!/bin/sh
# How old the newest event on nusku live's picture is: tests/live/live_gen
# streams samples stamped with CLOCK_MONOTONIC (its writer flushes every
# FLUSH_MS, default 250 like the recorder's) into `nusku live -` printing a
# snapshot every 0.1 s; each snapshot says the age of the newest event it
# shows ("age S", live's CLOCK_MONOTONIC minus the event's): the flush wait
# + transport + load + the redraw period.  Prints the median and the worst.
#
#   bench/live_latency.sh [BUILDDIR] [SECONDS]
set -eu
B=${1:-.}
S=${2:-5}
GEN=$B/tests/live/live_gen
[ -x "$B/nusku" ] && [ -x "$GEN" ] || { echo "live_latency.sh: build first (make check TESTS=)" >&2; exit 2; }
LIVE_GEN_FLUSH_MS=${FLUSH_MS:-250} "$GEN" - "$S" | "$B/nusku" live --snapshot --interval 0.1 --view cpu - |
	sed -n 's/^== nusku live +[0-9.]*s age \([0-9.]*\)s: .*/\1/p' | sort -n |
	awk '{ a[NR] = $1 } END {
		if (!NR) { print "no live snapshots"; exit 1 }
		printf "live latency (writer flush %s ms) over %d snapshots: median %.0f ms, worst %.0f ms\n",
			fl, NR, 1000 * a[int((NR + 1) / 2)], 1000 * a[NR] }' fl="${FLUSH_MS:-250}"
