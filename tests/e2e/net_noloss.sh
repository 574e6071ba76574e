#!/bin/sh
# Known answer: a loopback without loss has no retransmits, and --by
# retransmit says so (zero) while still listing the connections it saw.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/net_lib.sh"

need_bpf
netns_up 0

before=$(retrans_segs)
in_netns "$NUSKU" record -q -o "$TMPD/run.nsk" -e net -- \
	"$WORKLOADS/tcp_pingpong" -n 100 >"$TMPD/out" 2>"$TMPD/err" ||
	fail "record: $(cat "$TMPD/err" "$TMPD/out")"
kernel=$(($(retrans_segs) - before))
[ "$kernel" = 0 ] || fail "the kernel retransmitted $kernel segments on a clean loopback"
"$NUSKU" report "$TMPD/run.nsk" --by retransmit --format csv >"$TMPD/rows.csv" ||
	fail "report"
awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ rows++; total += $col["retransmits"]; if ($col["pid"] == 0) bad = 1 }
	END {
		printf "connections %d, retransmits %d\n", rows, total
		# listener, client and server sockets
		exit !(rows >= 3 && total == 0 && !bad)
	}' "$TMPD/rows.csv" || { cat "$TMPD/rows.csv" >&2; fail "expected 3 connections, 0 retransmits"; }
"$NUSKU" report "$TMPD/run.nsk" --by retransmit >"$TMPD/text" || fail "text report"
grep -q '127.0.0.1:' "$TMPD/text" || fail "text report lacks the connection"
echo "net_noloss: ok"
