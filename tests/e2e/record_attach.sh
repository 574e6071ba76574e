#!/bin/sh
# Attach to a running cpu_hot with -p: the same shares as launched; and a
# recording without --duration ends when the process exits, status 0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

"$WORKLOADS/cpu_hot" 60 > /dev/null &
pid=$!
trap 'kill $pid 2> /dev/null; rm -rf "$TMPD"' EXIT
out=$TMPD/run.nsk
"$NUSKU" record -q -e cpu -d 3 -o "$out" -p "$pid" || fail "record -p exited $?"
kill -0 $pid || fail "the attached process did not survive the recording"
dump "$out" "$TMPD/dump"

grep -q "^process $pid [0-9]* 1 cpu_hot" "$TMPD/dump" || fail "no PROCESS (attached) record"
threads=$(grep -c "^thread $pid " "$TMPD/dump")
[ "$threads" -ge 2 ] || fail "$threads THREAD records at attach, expected 2"
n=$(grep -c '^sample' "$TMPD/dump")
[ "$n" -ge 100 ] || fail "only $n samples"
echo "ok: $n samples"
assert_near "$(self_share "$TMPD/dump" hot_a)" 60 5 "hot_a self share"
assert_near "$(self_share "$TMPD/dump" hot_b)" 30 5 "hot_b self share"
assert_near "$(self_share "$TMPD/dump" hot_c)" 10 5 "hot_c self share"
assert_near "$(total_share "$TMPD/dump" 'dispatch_c@inline')" 10 5 "dispatch_c (inline) total share"

# no --duration: the recording ends with the process
"$NUSKU" record -q -e cpu -o "$out" -p "$pid" &
rec=$!
sleep 1
kill $pid
wait $rec || fail "record -p of a process that exits: status $?"
dump "$out" "$TMPD/dump"
grep -q "^exit $pid $pid " "$TMPD/dump" || fail "no EXIT record for the attached process"
echo "record_attach: ok"
