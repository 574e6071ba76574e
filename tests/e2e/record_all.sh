#!/bin/sh
# record -a (issue 16 item 4): every process but the recorder.  cpu_hot
# (60/30/10 in hot_a/hot_b/hot_c by construction) runs before the
# recording begins, cpu_split 30 (40/30/20/10 in steady_a/moved/steady_b/
# filler) starts after it began: both are named, each with its own shares
# inside its pid (within 8 points), both in --by process with their top
# function, and the recorder's own pid has no sample, no off-CPU interval
# and no process record; 30 programs that live a millisecond are named.
# -a refuses a program, -p and alloc in one line.
# --continuous DIR -a: 2 s segments, each readable, both processes in
# report DIR.  As a background session it is listed with target "all
# processes".  No timing is asserted: the waits below only wait.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
command -v python3 >/dev/null || skip "python3 reads the JSON here"

# ---- refusals: one line, exit 2, before any privilege is needed ---------------
refused() {
	"$NUSKU" record "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	[ $rc = 2 ] || fail "record $*: exit $rc, want 2: $(cat "$TMPD/err")"
	[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "record $*: not one line: $(cat "$TMPD/err")"
	grep -q "^nusku: record: .*$1" "$TMPD/err" || fail "record $*: $(cat "$TMPD/err")"
	echo "ok: record $* refused: $(cat "$TMPD/err")"
}
refused -a -p 1
refused -a -- true
refused -a -e cpu,alloc -d 1
"$NUSKU" record --help | grep -q -- '-a, --all' || fail "--help does not name -a"

need_bpf
[ -x "$WORKLOADS/cpu_hot" ] && [ -x "$WORKLOADS/cpu_split" ] &&
	[ -x "$WORKLOADS/short_lived" ] || fail "cpu_hot, cpu_split or short_lived not built"

export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
orphans=""
cleanup() {
	"$NUSKU" stop --timeout 20 allbg >/dev/null 2>&1
	for p in $orphans; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT

# wait_pid PID: until it has exited (a wait, not a measurement)
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 3000 ] || fail "pid $1 still runs after 300 s"
		sleep 0.1
	done
}

# check_pids JSON PID_A PID_B RECORDER MIN: the --by process JSON holds both
# with their names, and at MIN samples or more their top functions (hot_a
# 60% against 30%, steady_a 40% against 30%: at 500 samples steady_a leads
# by 50, 2.7 standard deviations; the continuous case at 49 Hz has too few
# to tell), and the recorder is absent
check_pids() {
	python3 - "$@" <<'PY' || fail "--by process: $(head -c 2000 "$1")"
import json, sys
r = json.load(open(sys.argv[1]))
rows = {x["pid"]: x for x in r["rows"]}
for pid, comm, top in ((int(sys.argv[2]), "cpu_hot", "hot_a"),
                       (int(sys.argv[3]), "cpu_split", "steady_a")):
    assert pid in rows, "pid %d (%s) absent" % (pid, comm)
    assert rows[pid]["comm"] == comm, rows[pid]
    assert rows[pid]["samples"] < int(sys.argv[5]) or \
        rows[pid]["top_function"] == top, rows[pid]
assert int(sys.argv[4]) not in rows, "the recorder %s has samples" % sys.argv[4]
PY
}

# share FILE PID FUNCTION: FUNCTION's self % among PID's samples
share() {
	"$NUSKU" report --format json --pid "$2" "$1" >"$TMPD/f.json" 2>"$TMPD/f.err" ||
		fail "report --pid $2: $(cat "$TMPD/f.err")"
	python3 - "$TMPD/f.json" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(x["self_pct"] for x in r["rows"] if x["function"] == sys.argv[2]))
PY
}

sql() {
	"$NUSKU" report --format csv --sql "$2" "$1" 2>/dev/null | tail -1
}

# caught_up FILE|DIR A B: until what the recorder wrote holds a sample of A
# (still running) taken after B exited: the CPU samples go through one
# ring in order, so every sample of B is written by then.  A recorder
# behind a storm (an ASan build, someone's chromium to symbolize) would
# otherwise still hold them at the stop signal, and what it has not
# written 300 ms later is counted as lost (record.stop).  A wait, at most
# 300 s, not a measurement.
caught_up() {
	i=0
	until [ "$(sql "$1" "SELECT (SELECT max(time) FROM sample WHERE pid = $2) >
		(SELECT min(time) FROM exit WHERE pid = $3)")" = 1 ]; do
		i=$((i + 1))
		[ $i -le 600 ] || fail "$1: no sample of $2 after $3 exited, in 300 s"
		sleep 0.5
	done
}

# ---- one recording of every process ------------------------------------------
"$WORKLOADS/cpu_hot" 600 >/dev/null &
A=$!
orphans="$A"
"$NUSKU" record -a -q -o "$TMPD/all.nsk" 2>"$TMPD/rec.err" &
R=$!
orphans="$orphans $R"
wait_for_meta "$TMPD/all.nsk" events
# 30 programs gone a millisecond after their exec (short_lived.c), first:
# what the recorder has not written 300 ms after the stop signal is
# counted as lost (record.stop), and behind a storm of other processes'
# records that could be their samples, if they came last
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
	"$WORKLOADS/short_lived" || fail "short_lived exited $?"
done
"$WORKLOADS/cpu_split" 30 2 >/dev/null &
B=$!
wait $B || fail "cpu_split exited $?"
caught_up "$TMPD/all.nsk" $A $B
kill -INT $R
wait $R || fail "record -a exited $?: $(cat "$TMPD/rec.err")"
kill $A
wait $A 2>/dev/null
orphans=""
dump "$TMPD/all.nsk" "$TMPD/all.dump"
grep -q '^meta target.mode all$' "$TMPD/all.dump" || fail "no META target.mode all"
grep -q '^meta events cpu,offcpu$' "$TMPD/all.dump" ||
	fail "default events: $(grep '^meta events' "$TMPD/all.dump")"
"$NUSKU" report --by process --format json "$TMPD/all.nsk" >"$TMPD/p.json" ||
	fail "report --by process exited $?"
check_pids "$TMPD/p.json" $A $B $R 500
for t in sample offcpu process thread; do
	n=$(sql "$TMPD/all.nsk" "SELECT count(*) FROM $t WHERE pid = $R")
	[ "$n" = 0 ] || fail "the recorder (pid $R) has $n rows in $t"
done
assert_near "$(share "$TMPD/all.nsk" $A hot_a)" 60 8 "cpu_hot (started before) hot_a self %"
assert_near "$(share "$TMPD/all.nsk" $A hot_b)" 30 8 "cpu_hot hot_b self %"
assert_near "$(share "$TMPD/all.nsk" $A hot_c)" 10 8 "cpu_hot hot_c self %"
assert_near "$(share "$TMPD/all.nsk" $B steady_a)" 40 8 "cpu_split (started after) steady_a self %"
assert_near "$(share "$TMPD/all.nsk" $B moved)" 30 8 "cpu_split moved self %"
assert_near "$(share "$TMPD/all.nsk" $B steady_b)" 20 8 "cpu_split steady_b self %"
assert_near "$(share "$TMPD/all.nsk" $B filler)" 10 8 "cpu_split filler self %"
# the process started after the recording began came in by its fork
how=$(sql "$TMPD/all.nsk" "SELECT group_concat(DISTINCT how) FROM process WHERE pid = $B")
case "$how" in *forked*|*execed*) ;; *) fail "cpu_split announced as '$how'" ;; esac
"$NUSKU" report "$TMPD/all.nsk" 2>&1 | grep -q '^# every process (record -a): ' ||
	fail "the report does not say it is of every process"
# short_lived burns 1 ms of CPU in burn each run, 30 ms in all: about 30
# samples (10 at least) named burn, unless the recorder lost CPU samples
# or mapping records (a loaded machine is all recorded: another program's
# storm fills the rings, and what is lost is counted; once here 4,425
# events with 5,061 frames unnamed); none of its samples has a frame left
# unnamed, unless mapping or process records were lost
loss=$(sql "$TMPD/all.nsk" "SELECT group_concat(source || ':' || n, ' ') FROM
	(SELECT source, sum(count) AS n FROM loss GROUP BY source)")
echo "losses: ${loss:-none}"
set -- $("$NUSKU" report --comm short_lived --format csv --sql "SELECT
	count(*), total(f.name = 'burn'), total(EXISTS (SELECT 1 FROM stack_func sf
	JOIN func u ON u.id = sf.func_id WHERE sf.stack_id = s.stack_id AND
	u.unresolved = 1)) FROM f_sample s JOIN stack k ON k.id = s.stack_id
	JOIN func f ON f.id = k.leaf_func_id" "$TMPD/all.nsk" | tail -1 | tr , ' ')
burn=${2%.0} unnamed=${3%.0}
case " $loss" in
*\ cpu.*|*\ record.*|*\ proc.*)
	echo "ok: short_lived x 30: $burn samples in burn (CPU samples or mapping records were lost: not counted)" ;;
*)
	[ "${burn:-0}" -ge 10 ] || fail "short_lived: ${burn:-0} samples in burn, want about 30"
	echo "ok: short_lived x 30: $burn samples in burn" ;;
esac
case " $loss" in
*\ proc.*) echo "ok: mapping records were lost: unnamed frames not counted" ;;
*)
	[ "${unnamed:-1}" = 0 ] || fail "short_lived: $unnamed of $1 samples with an unnamed frame"
	echo "ok: short_lived: none of its $1 samples has an unnamed frame" ;;
esac
echo "ok: record -a: cpu_hot $A and cpu_split $B named, recorder $R absent"

# ---- --continuous DIR -a -------------------------------------------------------
"$WORKLOADS/cpu_hot" 600 >/dev/null &
A=$!
orphans="$A"
D="$TMPD/cont"
"$NUSKU" record -a -q --continuous "$D" --segment 2s 2>"$TMPD/cont.err" &
R=$!
orphans="$orphans $R"
i=0
until seg=$(ls "$D" 2>/dev/null | grep '^nusku-' | head -1) && [ -n "$seg" ]; do
	i=$((i + 1))
	[ $i -le 1800 ] || fail "no segment in $D after 180 s: $(cat "$TMPD/cont.err")"
	sleep 0.1
done
wait_for_meta "$D/$seg" events
"$WORKLOADS/cpu_split" 30 2 >/dev/null &
B=$!
wait $B || fail "cpu_split exited $?"
caught_up "$D" $A $B
# at least two segments closed, so the processes span segments
i=0
until [ "$(ls "$D" | grep -v open | grep -c '^nusku-')" -ge 2 ]; do
	i=$((i + 1))
	[ $i -le 600 ] || fail "no two closed segments in 60 s: $(ls "$D")"
	sleep 0.1
done
kill -INT $R
wait $R || fail "record --continuous -a exited $?: $(cat "$TMPD/cont.err")"
kill $A
wait $A 2>/dev/null
orphans=""
n=0
for f in "$D"/nusku-*; do
	"$NUSKU" info "$f" >/dev/null 2>&1 || fail "segment $f does not read"
	n=$((n + 1))
done
[ $n -ge 3 ] || fail "only $n segments: $(ls "$D")"
dump "$(ls "$D"/nusku-* | head -1)" "$TMPD/seg.dump"
grep -q '^meta events cpu$' "$TMPD/seg.dump" ||
	fail "continuous -a events: $(grep '^meta events' "$TMPD/seg.dump")"
grep -q '^meta cpu.freq_hz 49$' "$TMPD/seg.dump" || fail "continuous -a is not at 49 Hz"
"$NUSKU" report --by process --format json "$D" >"$TMPD/cp.json" ||
	fail "report DIR --by process exited $?"
check_pids "$TMPD/cp.json" $A $B $R 1000000
echo "ok: --continuous -a: $n segments, both processes in report DIR"

# ---- nusku live -a: a snapshot of the whole machine ----------------------------
"$NUSKU" live -a -e cpu -d 2 --snapshot -n 1 >"$TMPD/live.txt" 2>"$TMPD/live.err" ||
	fail "live -a exited $?: $(cat "$TMPD/live.err")"
grep -q 'record -a' "$TMPD/live.txt" || fail "live -a: $(head -5 "$TMPD/live.txt")"
echo "ok: live -a shows a snapshot of record -a"

# ---- a background session of every process -------------------------------------
cd "$TMPD" || fail "cd $TMPD"
"$NUSKU" record --background --name allbg -a -e cpu >"$TMPD/bg.out" 2>"$TMPD/bg.err" ||
	fail "record --background -a: $(cat "$TMPD/bg.err")"
"$NUSKU" sessions --format json >"$TMPD/s.json" || fail "sessions --format json"
python3 - "$TMPD/s.json" <<'PY' || fail "sessions: $(cat "$TMPD/s.json")"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["name"] == "allbg"]
assert rows and rows[0]["target"] == "all processes", rows
assert rows[0]["state"] == "running", rows
assert rows[0]["all"] is True, rows
PY
# every process is recorded by it: ps says so on this shell's row too
"$NUSKU" ps --format json >"$TMPD/ps.json" || fail "ps --format json"
python3 - "$TMPD/ps.json" $$ <<'PY' || fail "ps: this shell's row does not name allbg"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["pid"] == int(sys.argv[2])]
assert rows and "allbg" in rows[0]["sessions"], rows
PY
"$NUSKU" stop --timeout 60 allbg >/dev/null || fail "stop allbg"
"$NUSKU" info "$TMPD/allbg.nsk" >"$TMPD/info.txt" || fail "info allbg.nsk"
grep -q 'target.mode all' "$TMPD/info.txt" || fail "info does not show the mode: $(cat "$TMPD/info.txt")"
echo "ok: background -a listed as all processes, stopped, info reads it"
