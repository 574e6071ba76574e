#!/bin/sh
# A view loads only the large event tables it reads (report/cmd_report.c):
# a CPU view of a recording with every allocation (alloc_sites, exact) does
# not load its allocations and frees, and says how many it left out; the
# memory views, --sql and --db load them all; the span is the same either way.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

out=$TMPD/run.nsk
"$NUSKU" record -q -e cpu,alloc --alloc-sample 1 -o "$out" -- "$WORKLOADS/alloc_sites" 20 ||
	fail "record exited $?"
# the file's own record counts (nusku info reads records, no database)
"$NUSKU" info "$out" >"$TMPD/info" || fail "info exited $?"
n=$(awk '$1 == "alloc" { print $2 }' "$TMPD/info")
nf=$(awk '$1 == "free" { print $2 }' "$TMPD/info")
[ "$n" -gt 100 ] || fail "only $n allocation records"

"$NUSKU" report "$out" >"$TMPD/fn.txt" 2>&1 || fail "report exited $?"
grep -q "^# allocations: $n (not loaded for this view)$" "$TMPD/fn.txt" ||
	fail "function view: no 'allocations: $n (not loaded ...)': $(head -5 "$TMPD/fn.txt")"
grep -q "^# frees: $nf (not loaded for this view)$" "$TMPD/fn.txt" ||
	fail "function view: no 'frees: $nf (not loaded ...)'"
"$NUSKU" report "$out" --by alloc-site >"$TMPD/site.txt" 2>&1 || fail "report --by alloc-site exited $?"
grep -q "^# allocations: $n$" "$TMPD/site.txt" || fail "alloc-site view: no 'allocations: $n'"
[ "$(head -1 "$TMPD/fn.txt")" = "$(head -1 "$TMPD/site.txt")" ] ||
	fail "spans differ: $(head -1 "$TMPD/fn.txt") / $(head -1 "$TMPD/site.txt")"
echo "ok: function view leaves out $n allocations and $nf frees, alloc-site loads them"

"$NUSKU" report "$out" --format json >"$TMPD/fn.json" 2>/dev/null || fail "report --format json"
python3 - "$TMPD/fn.json" "$n" <<'PY' || fail "json events.alloc"
import json, sys
e = json.load(open(sys.argv[1]))["events"]["alloc"]
assert e["total"] == int(sys.argv[2]) and e["selected"] == 0 and e["loaded"] is False, e
PY
got=$("$NUSKU" report "$out" -q "SELECT count(*) FROM alloc" --format csv 2>/dev/null | tail -1)
[ "$got" = "$n" ] || fail "--sql sees $got allocations, the file holds $n"
echo "report_skip: ok"
