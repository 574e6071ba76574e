#!/bin/sh
# Overhead of the network signal on a loopback request/response workload
# without loss: tcp_pingpong's round trips (64 bytes each way: 2 sends and 2
# receives per round trip, each a hit of the owner-learning tracepoints),
# inside a network namespace of our own (loopback only), timed by the
# workload itself (a tracer's start and stop are not counted).  Runs
# alternate so load from elsewhere hits every case alike; median of RUNS:
#
#   bare                 no tracer
#   nusku -e net         owners learned on every send/receive, retransmits
#   bcc tcpretrans       /usr/sbin/tcpretrans-bpfcc, for scale: it traces
#                        retransmits only (no owner, no code path), so on a
#                        clean loopback it costs nothing at all
#
#   bench/net.sh [BUILDDIR]        (default: the current directory)
#
# Environment: MESSAGES (default 50000), RUNS (default 7), BCC_DELAY
# (seconds bcc gets to compile and attach, default 10; 0 skips bcc).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/tcp_pingpong
MESSAGES=${MESSAGES:-50000}
RUNS=${RUNS:-7}
BCC_DELAY=${BCC_DELAY:-10}
BCC=/usr/sbin/tcpretrans-bpfcc
[ -x "$NUSKU" ] && [ -x "$W" ] || { echo "net.sh: build first (make && make check TESTS=)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "net.sh: needs root" >&2; exit 77; }

NS="nsk-bench-$$"
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
BCC_PID=
cleanup() {
	if [ -n "$BCC_PID" ]; then kill "$BCC_PID" 2>/dev/null || true; fi
	ip netns del "$NS" 2>/dev/null || true
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

# median of the numbers on stdin
median() {
	sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

: > "$T/bare"; : > "$T/rec"
for i in $(seq "$RUNS"); do
	exchange "$W" -n "$MESSAGES" >> "$T/bare"
	exchange "$NUSKU" record -q -o "$T/run.nsk" -e net -- "$W" -n "$MESSAGES" >> "$T/rec"
done
bare=$(median < "$T/bare"); rec=$(median < "$T/rec")
bare_min=$(sort -n "$T/bare" | head -n 1); rec_min=$(sort -n "$T/rec" | head -n 1)
size=$(wc -c < "$T/run.nsk" | tr -d ' ')

bcc=; bcc_why=
if [ "$BCC_DELAY" -gt 0 ] && [ -x "$BCC" ]; then
	"$BCC" > "$T/bcc.out" 2>&1 &
	BCC_PID=$!
	sleep "$BCC_DELAY"
	if kill -0 "$BCC_PID" 2>/dev/null; then
		: > "$T/bcc"
		for i in $(seq "$RUNS"); do
			exchange "$W" -n "$MESSAGES" >> "$T/bcc"
		done
		bcc=$(median < "$T/bcc")
	else
		bcc_why=$(grep -v '^ \|^Traceback' "$T/bcc.out" | head -n 1)
	fi
elif [ "$BCC_DELAY" -gt 0 ]; then
	bcc_why="$BCC not installed"
fi

awk -v b="$bare" -v r="$rec" -v bm="$bare_min" -v rm="$rec_min" -v c="$bcc" \
    -v why="$bcc_why" -v n="$MESSAGES" -v s="$size" -v runs="$RUNS" 'BEGIN {
	printf "%d loopback round trips of 64 B, no loss; median (best) of %d runs:\n", n, runs
	printf "  %-16s %9.1f ms (%6.1f) %6.2f us/round trip\n", "bare", b / 1e3, bm / 1e3, b / n
	printf "  %-16s %9.1f ms (%6.1f) %6.2f us/round trip  x%.3f (best x%.3f)  %+.0f ns per send/recv  (%d B file)\n",
		"nusku -e net", r / 1e3, rm / 1e3, r / n, r / b, rm / bm, (r - b) * 1e3 / n / 4, s
	if (c != "")
		printf "  %-16s %9.1f ms          %6.2f us/round trip  x%.3f\n", "bcc tcpretrans", c / 1e3, c / n, c / b
	else if (why != "")
		printf "  %-16s cannot run here: %s\n", "bcc tcpretrans", why
}'
