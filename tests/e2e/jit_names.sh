#!/bin/sh
# Node with --perf-basic-prof writes /tmp/perf-PID.map as V8 compiles; the
# recorder reads it for the anonymous code.  tests/workloads/jit_fib.js
# spends nearly all its time in fib (asserted: >= 40% of the samples in
# frames named for fib).  The map file is deleted before the report: the
# names must be in the recording itself.  Then again in pid and mount
# namespaces of its own, as in a container.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
NODE=$(command -v node || command -v nodejs) || skip "node is not installed (Debian's nodejs)"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

# jit_share FILE: fib's share of the samples of a recording, asserted
jit_share() {
	"$NUSKU" report --format json -w 0 "$1" >"$TMPD/n.json" || fail "report exited $?"
	python3 - "$TMPD/n.json" "$2" <<'PY' || fail "JIT names ($2)"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
fib = [r for r in rows if "fib" in r["function"]]
share = sum(r["self_pct"] for r in fib)
assert share >= 40, "fib: %.1f%% of samples, wanted >= 40 (top: %s)" % (
    share, [(r["function"], r["self_pct"]) for r in rows[:5]])
print("ok: %s: %s %.1f%% of samples" % (sys.argv[2], fib[0]["function"], share))
PY
}

js=$TOP_SRCDIR/tests/workloads/jit_fib.js
# node writes its V8 log (isolate-*-v8.log) where it runs: here, not in the
# build tree (make distcheck fails on files left there)
cd "$TMPD" || fail "cannot enter $TMPD"
"$NUSKU" record -q -e cpu -o "$TMPD/n.nsk" -- "$NODE" --perf-basic-prof "$js" 1 \
	>"$TMPD/out" || fail "record exited $?"
# node leaves its map behind: take ours away before reporting
for pid in $("$NUSKU" report --format csv --sql "SELECT DISTINCT pid FROM process" \
	"$TMPD/n.nsk" 2>/dev/null | tail -n +2); do
	rm -f "/tmp/perf-$pid.map"
done
jit_share "$TMPD/n.nsk" "same namespaces"

# In new pid and mount namespaces, with a /tmp of their own: node is pid
# 3 there and writes /tmp/perf-3.map where only its namespace sees it.  The
# namespace, and its /tmp with it, ends with node: the recorder holds that
# /tmp from node's exec on, so samples symbolized later still find the map.
unshare -m -p -f --mount-proc true 2>/dev/null || {
	echo "SKIP part: unshare cannot make pid and mount namespaces here"; exit 0; }
# the script is read before the private /tmp hides it (a source tree
# under /tmp would be hidden too)
"$NUSKU" record -q -e cpu -o "$TMPD/ns.nsk" -- unshare -m -p -f --mount-proc \
	sh -c 'src=$(cat "$1") && mount -t tmpfs tmpfs /tmp &&
		printf "%s\n" "$src" >/tmp/jit.js && "$0" --perf-basic-prof /tmp/jit.js 1' \
	"$NODE" "$js" >"$TMPD/out" || fail "record in namespaces exited $?"
jit_share "$TMPD/ns.nsk" "own pid and mount namespaces"
