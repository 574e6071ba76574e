#!/bin/sh
# nusku live recording as it shows: `live -- cpu_hot` and `live -p PID` on
# tests/workloads/cpu_hot (hot_a 60%, hot_b 30%, hot_c 10% of the CPU by
# construction) name hot_a as the top function within the first seconds,
# and -o keeps a recording that reads back whole.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
need_bpf
[ -x "$WORKLOADS/cpu_hot" ] || skip "tests/workloads/cpu_hot is not built"
"$NUSKU" record --help 2>&1 | grep -q 'not implemented' && skip "nusku record is not implemented yet"

"$NUSKU" live --snapshot --interval 1 --count 3 --view cpu -o "$TMPD/kept.nsk" \
	-- "$WORKLOADS/cpu_hot" 4 >"$TMPD/out" 2>"$TMPD/err" ||
	fail "live -- cpu_hot failed: $(cat "$TMPD/err")"
n=$(grep -c '^== nusku live' "$TMPD/out")
[ "$n" = 3 ] || fail "expected 3 snapshots, got $n"
top=$(live_top_function "$TMPD/out")
[ "$top" = hot_a ] || fail "top function in the first 3 s is '$top', expected hot_a: $(cat "$TMPD/out")"
echo "ok: live -- cpu_hot: top function $top after 3 s"
"$NUSKU" live --snapshot "$TMPD/kept.nsk" >"$TMPD/kept.out" 2>&1 ||
	fail "the kept recording does not read: $(cat "$TMPD/kept.out")"
grep '^== nusku live' "$TMPD/kept.out" | tail -1 | grep -q '\[ended\]' ||
	fail "the kept recording has no clean end: $(grep '^==' "$TMPD/kept.out" | tail -1)"
echo "ok: -o kept a whole recording"

"$WORKLOADS/cpu_hot" 5 >/dev/null &
w=$!
"$NUSKU" live --snapshot --interval 1 --count 3 --view cpu -e cpu -p $w >"$TMPD/pid" 2>"$TMPD/err" ||
	{ kill $w; fail "live -p failed: $(cat "$TMPD/err")"; }
kill $w 2>/dev/null; wait $w 2>/dev/null
top=$(live_top_function "$TMPD/pid")
[ "$top" = hot_a ] || fail "live -p: top function '$top', expected hot_a: $(cat "$TMPD/pid")"
echo "ok: live -p: top function $top"
echo "live_record: ok"
