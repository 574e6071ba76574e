#!/bin/sh
# Overhead of the network signal on a loopback request/response workload
# without loss: tcp_pingpong's round trips (64 bytes each way: 2 sends and 2
# receives per round trip, each a hit of the owner-learning tracepoints),
# inside a network namespace of our own (loopback only), timed by the
# workload itself (a tracer's start and stop are not counted).  Runs
# alternate so load from elsewhere hits every case alike; best of RUNS:
#
#   bare                 no tracer
#   nusku -e net         owners learned on every send/receive, retransmits
#   bcc tcpretrans       /usr/sbin/tcpretrans-bpfcc, for scale: it traces
#                        retransmits only (no owner, no code path), so on a
#                        clean loopback it costs nothing at all
#
#   bench/net.sh [BUILDDIR]        (default: the current directory)
#
# Environment: MESSAGES (default 50000), RUNS (default 5), BCC_DELAY
# (seconds bcc gets to compile and attach, default 10; 0 skips bcc).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/tcp_pingpong
MESSAGES=${MESSAGES:-50000}
RUNS=${RUNS:-5}
BCC_DELAY=${BCC_DELAY:-10}
BCC=/usr/sbin/tcpretrans-bpfcc
[ -x "$NUSKU" ] && [ -x "$W" ] || { echo "net.sh: build first (make && make check TESTS=)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "net.sh: needs root" >&2; exit 77; }

NS="nsk-bench-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
BCC_PID=
cleanup() {
	[ -n "$BCC_PID" ] && kill "$BCC_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up

# One exchange, in us, as the workload times it.
exchange() {
	d=$(ip netns exec "$NS" "$@" 2>/dev/null | sed -n 's/.* in \([0-9]*\) us.*/\1/p')
	[ -n "$d" ] || { echo "net.sh: $* failed" >&2; exit 1; }
	echo "$d"
}

min() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }

bare=; rec=
for i in $(seq "$RUNS"); do
	bare=$(min "$bare" "$(exchange "$W" -n "$MESSAGES")")
	rec=$(min "$rec" "$(exchange "$NUSKU" record -q -o "$T/run.nsk" -e net -- "$W" -n "$MESSAGES")")
done
size=$(wc -c < "$T/run.nsk" | tr -d ' ')

bcc=
if [ "$BCC_DELAY" -gt 0 ] && [ -x "$BCC" ]; then
	"$BCC" > "$T/bcc.out" 2>&1 &
	BCC_PID=$!
	sleep "$BCC_DELAY"
	if kill -0 "$BCC_PID" 2>/dev/null; then
		for i in $(seq "$RUNS"); do
			bcc=$(min "$bcc" "$(exchange "$W" -n "$MESSAGES")")
		done
	fi
fi

awk -v b="$bare" -v r="$rec" -v c="$bcc" -v n="$MESSAGES" -v s="$size" 'BEGIN {
	printf "%d loopback round trips of 64 B, no loss, best of runs:\n", n
	printf "  %-16s %9.1f ms %7.2f us/round trip\n", "bare", b / 1e3, b / n
	printf "  %-16s %9.1f ms %7.2f us/round trip  x%.3f  +%.0f ns per send/recv  (%d B file)\n",
		"nusku -e net", r / 1e3, r / n, r / b, (r - b) * 1e3 / n / 4, s
	if (c != "")
		printf "  %-16s %9.1f ms %7.2f us/round trip  x%.3f\n", "bcc tcpretrans", c / 1e3, c / n, c / b
}'
