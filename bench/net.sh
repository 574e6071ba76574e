#!/bin/sh
# Overhead of the network signal on a loopback request/response workload
# without loss: tcp_pingpong's round trips timed bare and under
# `nusku record -e net` (the workload times its own exchange), inside a network namespace of our own (loopback
# only), alternating, best of RUNS each.  Prints one line per case and the ratio.
#
#   bench/net.sh [BUILDDIR]        (default: the current directory)
#
# Environment: MESSAGES (default 50000), RUNS (default 5).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/tcp_pingpong
MESSAGES=${MESSAGES:-50000}
RUNS=${RUNS:-5}
[ -x "$NUSKU" ] && [ -x "$W" ] || { echo "net.sh: build first (make && make check TESTS=)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "net.sh: needs root" >&2; exit 77; }

NS="nsk-bench-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$T"' EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up

# One exchange, in us, as the workload times it (the recorder's own start
# and stop are not the signal's cost).
exchange() {
	d=$(ip netns exec "$NS" "$@" 2>/dev/null | sed -n 's/.* in \([0-9]*\) us.*/\1/p')
	[ -n "$d" ] || { echo "net.sh: $* failed" >&2; exit 1; }
	echo "$d"
}

# Bare and recorded runs alternate, so load from elsewhere on the machine
# hits both alike; the fastest of each is kept.
bare=; rec=
for i in $(seq "$RUNS"); do
	d=$(exchange "$W" -n "$MESSAGES")
	if [ -z "$bare" ] || [ "$d" -lt "$bare" ]; then bare=$d; fi
	d=$(exchange "$NUSKU" record -q -o "$T/run.nsk" -e net -- "$W" -n "$MESSAGES")
	if [ -z "$rec" ] || [ "$d" -lt "$rec" ]; then rec=$d; fi
done
awk -v b="$bare" -v r="$rec" -v n="$MESSAGES" 'BEGIN {
	printf "net: %d round trips, bare %.1f ms (%.2f us each), recorded -e net %.1f ms (%.2f us each), ratio %.3f\n",
		n, b / 1e3, b / n, r / 1e3, r / n, r / b }'
