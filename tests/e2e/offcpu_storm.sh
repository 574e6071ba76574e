#!/bin/sh
# The off-CPU signal's user stacks when they are not walked per interval
# (bpf/offcpu.bpf.c keeps the last two stacks of each thread, keyed by the
# registers and the call it blocked with, and walks again only for a new
# key), on tests/workloads/blocking, with answers known by construction:
#
#   alternate  alt_reader reads a pipe in reader_a, then another in reader_b,
#              N times each; the two functions are alike to the byte, so
#              they block with the same instruction, stack and frame
#              pointers, and only the file tells them apart.  Every read
#              blocks (the writer waits a millisecond first): reader_a and
#              reader_b have N pipe waits (process) each, none charged to
#              the other.
#   storm      --pingpong with --min-block 1us: two threads switching a
#              hundred thousand times a second, nearly every block kept;
#              the main thread's intervals are all in pingpong, the other's
#              all in pong (a stack reused from the wrong place would show
#              the other thread's function or none).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

N=300
out=$TMPD/alt.nsk
"$NUSKU" record -q -e offcpu -o "$out" -- "$WORKLOADS/blocking" --alternate $N \
	> "$TMPD/alt.answers" || fail "record --alternate exited $?"
grep -q "^alternate rounds=$N\$" "$TMPD/alt.answers" || fail "workload: $(cat "$TMPD/alt.answers")"
"$NUSKU" report "$out" --by blocking -c alt_reader -f json > "$TMPD/alt.json" ||
	fail "report --by blocking"
"$NUSKU" report "$out" --by blocking -c alt_reader | head -20
python3 - "$TMPD/alt.json" $N <<'PY' || fail "alternate: known answers"
import json, sys
# the pipe waits (process); a preemption inside either is runqueue
rows = [r for r in json.load(open(sys.argv[1]))["rows"]
        if r["depth"] == 1 and r["reason"] == "process"]
n = int(sys.argv[2])
count = {}
for r in rows:
    count[r["function"]] = count.get(r["function"], 0) + r["count"]
print("intervals by function:", count)
bad = 0
for f in ("reader_a", "reader_b"):
    got = count.get(f, 0)
    # each read blocks: n each; a few may be lost (counted as losses)
    ok = n * 0.98 <= got <= n
    print(("ok: " if ok else "FAIL: ") + "%s: %d intervals, expected %d" % (f, got, n))
    bad += not ok
other = sum(v for k, v in count.items() if k not in ("reader_a", "reader_b"))
ok = other <= n * 0.02
print(("ok: " if ok else "FAIL: ") + "%d intervals elsewhere" % other)
bad += not ok
sys.exit(1 if bad else 0)
PY

out=$TMPD/storm.nsk
"$NUSKU" record -q -e offcpu --min-block 1us -o "$out" -- taskset -c 0 \
	"$WORKLOADS/blocking" --pingpong 20000 > "$TMPD/storm.answers" ||
	fail "record --pingpong exited $?"
pid=$("$NUSKU" report "$out" -f csv --sql "SELECT pid FROM offcpu GROUP BY pid \
	ORDER BY count(*) DESC LIMIT 1" 2>/dev/null | tail -n 1)
[ -n "$pid" ] || fail "no off-CPU intervals"
for t in $("$NUSKU" report "$out" -f csv --sql "SELECT DISTINCT tid FROM offcpu \
	WHERE pid = $pid" 2>/dev/null | tail -n +2); do
	want=pong
	[ "$t" = "$pid" ] && want=pingpong
	"$NUSKU" report "$out" --by blocking --tid "$t" -f json > "$TMPD/t.json" 2>/dev/null ||
		fail "report --tid $t"
	python3 - "$TMPD/t.json" "$want" "$t" <<'PY' || fail "storm: thread $t's intervals"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["depth"] == 1]
want, tid = sys.argv[2], sys.argv[3]
total = sum(r["count"] for r in rows)
mine = sum(r["count"] for r in rows if r["function"] == want)
print("thread %s: %d of %d intervals in %s (%s)" % (tid, mine, total, want,
      sorted({r["function"] for r in rows}, key=str)))
# the thread's first moments (created, page faults) may block elsewhere
sys.exit(0 if total >= 1000 and mine >= 0.99 * total else 1)
PY
done
echo "offcpu_storm: ok"
