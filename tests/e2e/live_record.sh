#!/bin/sh
# nusku live recording as it shows: `live -- cpu_hot` and `live -p PID` on
# tests/workloads/cpu_hot (hot_a 60%, hot_b 30%, hot_c 10% of the CPU by
# construction) name hot_a as the top function in the first snapshot that
# has samples and in the last, and -o keeps a recording that reads back
# whole.  Snapshots run until the recording ends with its target, so a slow
# start (a sanitizer build) does not cut the test short.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
need_bpf
[ -x "$WORKLOADS/cpu_hot" ] || skip "tests/workloads/cpu_hot is not built"
"$NUSKU" record --help 2>&1 | grep -q 'not implemented' && skip "nusku record is not implemented yet"

"$NUSKU" live --snapshot --interval 1 --view cpu -e cpu -o "$TMPD/kept.nsk" \
	-- "$WORKLOADS/cpu_hot" 3 >"$TMPD/out" 2>"$TMPD/err" ||
	fail "live -- cpu_hot failed: $(cat "$TMPD/err")"
first=$(live_first_top_function "$TMPD/out")
[ "$first" = hot_a ] || fail "first snapshot with samples shows '$first' on top, expected hot_a: $(cat "$TMPD/out")"
top=$(live_top_function "$TMPD/out")
[ "$top" = hot_a ] || fail "last snapshot shows '$top' on top, expected hot_a"
live_last_status "$TMPD/out" | grep -q '\[ended\]' || fail "the recording's end is not said: $(live_last_status "$TMPD/out")"
echo "ok: live -- cpu_hot: hot_a on top from the first snapshot with samples"
"$NUSKU" live --snapshot "$TMPD/kept.nsk" >"$TMPD/kept.out" 2>&1 ||
	fail "the kept recording does not read: $(cat "$TMPD/kept.out")"
live_last_status "$TMPD/kept.out" | grep -q '\[ended\]' ||
	fail "the kept recording has no clean end: $(live_last_status "$TMPD/kept.out")"
[ "$(live_top_function "$TMPD/kept.out")" = hot_a ] || fail "the kept recording does not show hot_a on top"
echo "ok: -o kept a whole recording"

# live stopping its recorder early (--count): the program dies of the
# recorder's SIGTERM and record says so (143); that is no failure of live
"$NUSKU" live --snapshot --interval 1 --count 2 --view cpu -e cpu \
	-- "$WORKLOADS/cpu_hot" 20 >"$TMPD/early" 2>"$TMPD/err" ||
	fail "live --count 2 -- cpu_hot 20 exited $?: $(cat "$TMPD/err")"
echo "ok: live stopped its recorder early, exit 0"

"$WORKLOADS/cpu_hot" 4 >/dev/null &
w=$!
"$NUSKU" live --snapshot --interval 1 --view cpu -e cpu -p $w >"$TMPD/pid" 2>"$TMPD/err" ||
	{ kill $w 2>/dev/null; fail "live -p failed: $(cat "$TMPD/err")"; }
wait $w 2>/dev/null
first=$(live_first_top_function "$TMPD/pid")
[ "$first" = hot_a ] || fail "live -p: first top function '$first', expected hot_a: $(cat "$TMPD/pid")"
echo "ok: live -p: hot_a on top"
echo "live_record: ok"
