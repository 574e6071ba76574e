#!/bin/sh
# Record cpu_hot (60/30/10 CPU in hot_a/hot_b/hot_c by construction, hot_c
# reached through an always_inline helper) and check what `nusku report`
# says: each share within 5 percentage points, the inline frame as a row of
# its own, the same answer through a pipe, and a truncated copy of the
# recording reported with what was cut.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
[ -x "$WORKLOADS/cpu_hot" ] || skip "tests/workloads/cpu_hot is not built"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

out=$TMPD/run.nsk
"$NUSKU" record -q -e cpu -o "$out" -- "$WORKLOADS/cpu_hot" 2 || fail "record exited $?"
"$NUSKU" report --format json "$out" >"$TMPD/r.json" || fail "report exited $?"

# share FUNCTION KEY: the function's self_pct or total_pct
share() {
	python3 - "$TMPD/r.json" "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(x[sys.argv[3]] for x in r["rows"] if x["function"] == sys.argv[2]))
PY
}
assert_near "$(share hot_a self_pct)" 60 5 "hot_a self %"
assert_near "$(share hot_b self_pct)" 30 5 "hot_b self %"
assert_near "$(share hot_c self_pct)" 10 5 "hot_c self %"
assert_near "$(share worker total_pct)" 100 5 "worker total %"
# the inline helper: a function of its own, on every hot_c stack
assert_near "$(share dispatch_c total_pct)" 10 5 "dispatch_c (inline) total %"
n=$("$NUSKU" report --format csv --sql "SELECT count(*) FROM stack_frame sf
	JOIN func f ON f.id = sf.func_id WHERE f.name = 'dispatch_c' AND sf.inlined = 1" \
	"$out" 2>/dev/null | tail -1)
[ "${n:-0}" -gt 0 ] || fail "dispatch_c is not marked inlined in stack_frame"
"$NUSKU" report --folded "$out" 2>/dev/null | grep -q 'worker;dispatch_c;hot_c [0-9]*$' ||
	fail "no folded path worker;dispatch_c;hot_c"
python3 - "$TMPD/r.json" <<'PY' || fail "json summary"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is True, "a clean recording reads as complete"
assert r["events"]["sample"]["total"] >= 200, r["events"]
assert r["time_span"]["seconds"] > 1.5, r["time_span"]
assert "lost_total" in r and "unresolved_frames" in r
PY
echo "ok: shares, inline frame, summary"

# through a pipe: record to stdout, report from stdin
"$NUSKU" record -q -e cpu -o - -- "$WORKLOADS/cpu_hot" 1 2>/dev/null |
	"$NUSKU" report --format json - >"$TMPD/r.json" || fail "pipe report failed"
assert_near "$(share hot_a self_pct)" 60 5 "hot_a self % through a pipe"

# a recording cut short (as by a crash): reported, with what was cut.  The
# cut falls inside the last chunk of records, so the chunks before it (the
# writer flushes every 250 ms) must still be reported.
cut=$("$NUSKU" info --chunks "$out" | awk '$3 == "records" { n++; off = $2; len = $5 }
	END { if (n >= 2) print off + int(len / 2) }')
[ -n "$cut" ] || fail "fewer than two chunks of records in a 2 s recording"
head -c "$cut" "$out" >"$TMPD/cut.nsk"
"$NUSKU" report "$TMPD/cut.nsk" >"$TMPD/cut.txt" 2>&1 || fail "report of a truncated file exited $?"
grep -q "WARNING: recording truncated: the last [0-9]* bytes" "$TMPD/cut.txt" ||
	fail "truncation not said: $(head -8 "$TMPD/cut.txt")"
grep -q "WARNING: no end record" "$TMPD/cut.txt" || fail "missing end not said"
grep -q "hot_a" "$TMPD/cut.txt" || fail "nothing reported from the truncated file"
echo "ok: truncated recording: $(grep 'recording truncated' "$TMPD/cut.txt")"
echo "cpu_report: ok"
