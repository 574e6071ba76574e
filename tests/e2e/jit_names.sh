#!/bin/sh
# Node with --perf-basic-prof writes /tmp/perf-PID.map as V8 compiles; the
# recorder reads it for the anonymous code.  tests/workloads/jit_fib.js
# spends nearly all its time in fib (asserted: >= 40% of the samples in
# frames named for fib).  The map file is deleted before the report: the
# names must be in the recording itself.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
NODE=$(command -v node || command -v nodejs) || skip "node is not installed (Debian's nodejs)"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

# the file is the node process's own, in its /tmp: keep ours clean of it
"$NUSKU" record -q -e cpu -o "$TMPD/n.nsk" -- \
	"$NODE" --perf-basic-prof "$TOP_SRCDIR/tests/workloads/jit_fib.js" 1 \
	>"$TMPD/out" || fail "record exited $?"
for pid in $("$NUSKU" report --format csv --sql "SELECT DISTINCT pid FROM thread" \
	"$TMPD/n.nsk" 2>/dev/null | tail -n +2); do
	rm -f "/tmp/perf-$pid.map"
done
"$NUSKU" report --format json -w 0 "$TMPD/n.nsk" >"$TMPD/n.json" || fail "report exited $?"
python3 - "$TMPD/n.json" <<'PY' || fail "JIT names"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
fib = [r for r in rows if "fib" in r["function"]]
share = sum(r["self_pct"] for r in fib)
assert share >= 40, "fib: %.1f%% of samples, wanted >= 40 (top: %s)" % (
    share, [(r["function"], r["self_pct"]) for r in rows[:5]])
print("ok: %s %.1f%% of samples" % (fib[0]["function"], share))
PY
