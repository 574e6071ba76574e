#!/bin/sh
# Record cpu_hot launched: 60/30/10 CPU by construction, the always_inline
# helper as an inline frame, both threads, mode 0600, complete file.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

out=$TMPD/run.nsk
"$NUSKU" record -q -o "$out" -- "$WORKLOADS/cpu_hot" 3 > /dev/null || fail "record exited $?"
dump "$out" "$TMPD/dump"

[ "$(stat -c %a "$out")" = 600 ] || fail "mode $(stat -c %a "$out"), expected 600"
n=$(grep -c '^sample' "$TMPD/dump")
[ "$n" -ge 100 ] || fail "only $n samples"
echo "ok: $n samples"

assert_near "$(self_share "$TMPD/dump" hot_a)" 60 5 "hot_a self share"
assert_near "$(self_share "$TMPD/dump" hot_b)" 30 5 "hot_b self share"
assert_near "$(self_share "$TMPD/dump" hot_c)" 10 5 "hot_c self share"
# hot_c is reached only through dispatch_c, inlined into worker
assert_near "$(total_share "$TMPD/dump" 'dispatch_c@inline')" 10 5 "dispatch_c (inline) total share"
grep -q '^sample.*hot_c;dispatch_c@inline;worker' "$TMPD/dump" ||
	fail "no stack hot_c <- dispatch_c (inline) <- worker"
assert_near "$(total_share "$TMPD/dump" worker)" 100 5 "worker total share"

# two threads sampled, both named, both exited with 0
pid=$(awk '$1 == "meta" && $2 == "target.pid" { print $3 }' "$TMPD/dump")
tids=$(awk -v p="$pid" '$1 == "sample" && $2 == p { print $3 }' "$TMPD/dump" | sort -u | wc -l)
[ "$tids" = 2 ] || fail "$tids threads sampled, expected 2"
grep -q "^process $pid .* 4 cpu_hot" "$TMPD/dump" || fail "no PROCESS (exec) record for $pid"
grep -q "^exit $pid $pid 0" "$TMPD/dump" || fail "no EXIT record for $pid"
for k in host kernel nusku.version nusku.cmdline target.cmdline events cpu.freq_hz; do
	grep -q "^meta $k " "$TMPD/dump" || fail "no META $k"
done

# a stripped copy: no names, but module!0xSTART frames (from .eh_frame);
# without the cache, whose answers kept for the original (the same
# build-id, record/stacks/symcache.h) would name it
strip -o "$TMPD/cpu_hot_stripped" "$WORKLOADS/cpu_hot" || fail "strip"
NUSKU_CACHE_DIR=off "$NUSKU" record -q -e cpu -o "$TMPD/s.nsk" -- "$TMPD/cpu_hot_stripped" 1 > /dev/null ||
	fail "record of a stripped binary exited $?"
rm -f "$TMPD/cpu_hot_stripped"
dump "$TMPD/s.nsk" "$TMPD/sdump"
grep -q '^sample [0-9 ]*cpu_hot_stripped!0x[0-9a-f]*;' "$TMPD/sdump" ||
	fail "stripped binary: no module!0xSTART frames"
! grep -q '^sample.*hot_a' "$TMPD/sdump" || fail "stripped binary: a name from nowhere"
! grep -q '^loss symbols\.' "$TMPD/sdump" || fail "stripped binary: frames counted as lost events"
grep -q '^meta symbols.unresolved [0-9]' "$TMPD/sdump" || fail "stripped binary: no count of unresolved frames"
echo "ok: stripped binary shown as module!0xSTART"
echo "record_cpu: ok"
