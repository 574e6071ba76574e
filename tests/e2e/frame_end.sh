#!/bin/sh
# The sampler ends the main thread's frame-pointer chain where the kernel's
# walk stops without a fault (preload/frame_end.c), and leaves the rest of
# the program as it was.
#
# tests/workloads/frame_end walks its own saved frame pointers from main
# and from a thread.  Alone, main's chain ends in glibc's leftover (not
# ~0) after 2 frames.  Under the library: one frame more (ours, between
# main and libc), ending in ~0, its return address in libc as before;
# the thread's chain is untouched (ends in 0 after 2 frames).  Then a
# recording of an FP-built program under the sampler: its allocation and
# CPU stacks still end in main's caller, with no frame of the library.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
LIB=$(dirname "$NUSKU")/preload/libnusku_alloc.so
W=$WORKLOADS/frame_end
[ -x "$W" ] || fail "no $W"
[ -f "$LIB" ] || fail "no $LIB"

field() { sed -n "s/^$1 .*$2=\([^ ]*\).*/\1/p" "$3"; }

"$W" >"$TMPD/alone" || fail "frame_end alone exited $?"
[ "$(field main frames "$TMPD/alone")" = 2 ] || fail "alone: $(cat "$TMPD/alone")"
[ "$(field main end "$TMPD/alone")" != 0xffffffffffffffff ] || fail "alone ends in ~0: $(cat "$TMPD/alone")"
[ "$(field main caller "$TMPD/alone")" = libc.so.6 ] || fail "alone: main's caller: $(cat "$TMPD/alone")"

LD_PRELOAD=$LIB NUSKU_ALLOC_SAMPLE=524288 "$W" >"$TMPD/lib" || fail "frame_end under the library exited $?"
[ "$(field main frames "$TMPD/lib")" = 3 ] || fail "under the library, main: $(cat "$TMPD/lib")"
[ "$(field main end "$TMPD/lib")" = 0xffffffffffffffff ] ||
	fail "under the library, main's chain does not end in ~0: $(cat "$TMPD/lib")"
[ "$(field main caller "$TMPD/lib")" = libc.so.6 ] || fail "under the library, the last caller: $(cat "$TMPD/lib")"
[ "$(field main under "$TMPD/lib")" = libnusku_alloc.so ] || fail "under the library, main's caller: $(cat "$TMPD/lib")"
grep -q '^thread frames=2 ' "$TMPD/lib" || fail "the thread's chain changed: $(cat "$TMPD/lib")"
[ "$(grep '^thread' "$TMPD/lib" | sed 's/ under=.*//')" = "$(grep '^thread' "$TMPD/alone" | sed 's/ under=.*//')" ] ||
	fail "the thread's chain changed: $(cat "$TMPD/alone" "$TMPD/lib")"
echo "ok: main's chain ends in ~0 under the library, the thread's as before"

# ---- recorded: the stacks read as before ----------------------------------
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf
"$NUSKU" record -q -e cpu,alloc --alloc-sample 1 -F 4999 -o "$TMPD/c.nsk" -- \
	"$WORKLOADS/alloc_churn" 300000 >/dev/null || fail "record alloc_churn exited $?"
"$NUSKU" report "$TMPD/c.nsk" --by alloc-site --format csv >"$TMPD/sites.csv" 2>/dev/null ||
	fail "report --by alloc-site exited $?"
grep -q 'churn_alloc <- main' "$TMPD/sites.csv" || fail "no churn_alloc <- main site: $(head -5 "$TMPD/sites.csv")"
"$NUSKU" report "$TMPD/c.nsk" --sql "SELECT count(*) FROM stack_frame s JOIN func f ON f.id = s.func_id WHERE f.module LIKE '%libnusku_alloc%'" \
	--format csv >"$TMPD/own.csv" 2>/dev/null || fail "report --sql exited $?"
[ "$(tail -n 1 "$TMPD/own.csv")" = 0 ] || fail "frames of the library in the recording: $(cat "$TMPD/own.csv")"
echo "frame_end: ok"
