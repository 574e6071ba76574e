#!/bin/sh
# --give-way: the session's thread gives way to the program (record/spill.h): while
# the program runs it is the recorder's one SCHED_IDLE thread, the
# draining thread keeps its normal priority, and on a machine whose every
# CPU is busy at normal priority the recording still ends whole: the
# draining thread lends the session's thread its priority back when
# records wait, so what the program did is written, not dropped.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf

loops="$TMPD/loops"
cleanup() {
	for p in $(cat "$loops" 2> /dev/null); do
		kill -TERM "$p" 2> /dev/null
	done
	rm -rf "$TMPD"
}
trap cleanup EXIT

policy() { # policy /proc/PID/task/TID: 0 normal, 5 idle
	sed -n 's/^policy *: *//p' "$1/sched" 2> /dev/null
}

# 1. While the program runs: exactly one idle thread, the others normal.
"$NUSKU" record -q --give-way -e cpu -o "$TMPD/a.nsk" -- "$WORKLOADS/cpu_hot" 3 > /dev/null 2> "$TMPD/err" &
rec=$!
idle=0 n=0
while [ $idle = 0 ] && [ $n -lt 300 ] && kill -0 $rec 2> /dev/null; do
	sleep 0.1
	n=$((n + 1))
	idle=0 other=0
	for t in /proc/$rec/task/*; do
		case $(policy "$t") in
		5) idle=$((idle + 1)) ;;
		0) other=$((other + 1)) ;;
		esac
	done
done
wait $rec || fail "the recording failed: $(cat "$TMPD/err")"
[ $idle = 1 ] || fail "$idle idle threads in the recorder, not 1"
[ $other -ge 1 ] || fail "no thread of normal priority in the recorder (it must drain)"
echo "ok: the session's thread gave way ($idle idle, $other normal)"

# 2. Every CPU busy at normal priority, twice over: the recording is whole.
: > "$loops"
i=0
while [ $i -lt $((2 * $(nproc))) ]; do
	sh -c 'while :; do :; done' & echo $! >> "$loops"
	i=$((i + 1))
done
"$NUSKU" record -q --give-way -e cpu -o "$TMPD/b.nsk" -- "$WORKLOADS/cpu_hot" 3 > /dev/null 2> "$TMPD/err" ||
	fail "the recording under load failed: $(cat "$TMPD/err")"
for p in $(cat "$loops"); do kill -TERM "$p" 2> /dev/null; done
"$NUSKU" info "$TMPD/b.nsk" > "$TMPD/info" || fail "not a whole file: $(cat "$TMPD/info")"
grep -q '^ended: *cleanly' "$TMPD/info" || fail "no clean end: $(cat "$TMPD/info")"
grep -q 'record.memory' "$TMPD/info" && fail "records dropped for memory: $(cat "$TMPD/info")"
"$NUSKU" report -f csv "$TMPD/b.nsk" > "$TMPD/rep" 2>&1 || fail "report failed: $(cat "$TMPD/rep")"
grep -q 'hot_a' "$TMPD/rep" || fail "cpu_hot's hot function is not in the report: $(head -20 "$TMPD/rep")"
echo "ok: under load the file ends cleanly with the program's samples"

# Without --give-way every thread keeps the normal priority.
"$NUSKU" record -q -e cpu -o "$TMPD/c.nsk" -- "$WORKLOADS/cpu_hot" 2 > /dev/null 2> "$TMPD/err" &
rec=$!
sleep 1
for t in /proc/$rec/task/*; do
	[ "$(policy "$t")" != 5 ] || fail "an idle thread without --give-way"
done
wait $rec || fail "the recording failed: $(cat "$TMPD/err")"
echo "ok: without --give-way no thread is idle"
