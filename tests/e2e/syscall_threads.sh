#!/bin/sh
# The syscall signal's per-thread state (bpf/syscall.bpf.c): eight threads
# make 1000 getppid calls each, sleeping now and then so they interleave
# and move between CPUs, then a ninth makes 300 and execs (a non-leader
# exec: the new image runs with the leader's tid) into a program making
# 500 getpgid calls.  Known by construction: each of the eight has exactly
# 1000 getppid, the ninth 300, and the 500 getpgid are the leader tid's.
# Three ways: the defaults (every thread's state in the array, found
# through the per-CPU cache), with room in the array for 3 threads only
# (the others' state in task storage: NUSKU_SYSCALL_THREADS), and all on
# one CPU with room for 5 (threads taking turns on a CPU: the cache
# misses, the index from task storage).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 runs the threads"
# the interpreter itself, not a wrapper script (pyenv's shim is bash)
PY=$(python3 -c 'import sys; print(sys.executable)')
[ -x "$PY" ] || skip "no python3 interpreter found"

cat >"$TMPD/threads.py" <<'PY'
import os, sys, threading, time
b = threading.Barrier(8)
def work():
    b.wait()
    for i in range(1000):
        os.getppid()
        if i % 50 == 0:
            time.sleep(0.0002)
ts = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
def execer():
    for i in range(300):
        os.getppid()
    os.execv(sys.executable, [sys.executable, "-c",
             "import os\nfor i in range(500): os.getpgid(0)"])
t = threading.Thread(target=execer)
t.start()
t.join()
PY

# check WHAT: the known answers of the recording $TMPD/run.nsk
check() {
	"$NUSKU" report "$TMPD/run.nsk" --by syscall-thread -f csv \
		>"$TMPD/rows.csv" 2>"$TMPD/err" || fail "$1: report: $(cat "$TMPD/err")"
	python3 - "$TMPD/rows.csv" "$1" <<'PY' || fail "$1: known answers"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
workers = sorted(int(r["count"]) for r in rows
                 if r["syscall"] == "getppid" and r["tid"] != r["pid"])
pgid = [(r["tid"] == r["pid"], int(r["count"])) for r in rows
        if r["syscall"] == "getpgid"]
print("%s: getppid of the threads %s, getpgid %s" % (sys.argv[2], workers, pgid))
assert workers == [300] + [1000] * 8, workers
assert pgid == [(True, 500)], pgid
PY
	"$NUSKU" report "$TMPD/run.nsk" --by syscall 2>/dev/null |
		grep -q '^# lost events: none' || fail "$1: lost events"
	echo "ok: $1"
}

"$NUSKU" record -q -e syscall -o "$TMPD/run.nsk" -- "$PY" "$TMPD/threads.py" ||
	fail "record exited $?"
check "the defaults"
NUSKU_SYSCALL_THREADS=3 "$NUSKU" record -q -e syscall -o "$TMPD/run.nsk" -- \
	"$PY" "$TMPD/threads.py" || fail "record exited $?"
check "room for 3 threads in the array"
if command -v taskset >/dev/null; then
	NUSKU_SYSCALL_THREADS=5 "$NUSKU" record -q -e syscall -o "$TMPD/run.nsk" -- \
		taskset -c 0 "$PY" "$TMPD/threads.py" || fail "record exited $?"
	check "one CPU, room for 5"
fi
echo "syscall_threads: ok"
