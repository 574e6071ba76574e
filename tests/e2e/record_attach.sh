#!/bin/sh
# Attach to a running cpu_hot with -p: the same shares; the recording ends
# when the process exits, and the status is 0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

"$WORKLOADS/cpu_hot" 3 &
pid=$!
sleep 0.3
out=$TMPD/run.nsk
"$NUSKU" record -q -o "$out" -p "$pid" || fail "record -p exited $?"
wait $pid
dump "$out" "$TMPD/dump"

grep -q "^process $pid [0-9]* 1 cpu_hot" "$TMPD/dump" || fail "no PROCESS (attached) record"
threads=$(grep -c "^thread $pid " "$TMPD/dump")
[ "$threads" -ge 2 ] || fail "$threads THREAD records at attach, expected 2"
n=$(grep -c '^sample' "$TMPD/dump")
[ "$n" -ge 200 ] || fail "only $n samples"
assert_near "$(self_share "$TMPD/dump" hot_a)" 60 5 "hot_a self share"
assert_near "$(self_share "$TMPD/dump" hot_b)" 30 5 "hot_b self share"
assert_near "$(self_share "$TMPD/dump" hot_c)" 10 5 "hot_c self share"
assert_near "$(total_share "$TMPD/dump" 'dispatch_c@inline')" 10 5 "dispatch_c (inline) total share"
echo "record_attach: ok"
