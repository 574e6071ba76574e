#!/bin/sh
# nusku live on streams with known content (tests/live/live_gen: CPU
# samples 60/30/10 in gen_hot_a/b/c, 7 events lost), no BPF needed:
# a file followed while it grows, a pipe, a writer that dies mid-chunk, and
# the one-line errors for bad input.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
retry_once "a slow reader can take its last snapshot before the dead writer tail is judged"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"

GEN=$(dirname "$NUSKU")/tests/live/live_gen
[ -x "$GEN" ] || fail "live_gen not built"

# A file that grows while it is read, its writer killed mid-chunk.
"$GEN" "$TMPD/grow.nsk" 2 --die 2>/dev/null &
gen=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -e "$TMPD/grow.nsk" ] && break; sleep 0.1; done
"$NUSKU" live --snapshot --interval 0.5 "$TMPD/grow.nsk" >"$TMPD/grow.out" 2>"$TMPD/grow.err"
st=$?
wait $gen
[ $st = 0 ] || fail "following a growing file exits $st: $(cat "$TMPD/grow.err")"
n=$(grep -c '^== nusku live' "$TMPD/grow.out")
[ "$n" -ge 2 ] || fail "expected several snapshots while the file grew, got $n"
grep '^== nusku live' "$TMPD/grow.out" | head -1 | grep -q '\[live\]' ||
	fail "first snapshot should be live: $(head -1 "$TMPD/grow.out")"
last=$(grep '^== nusku live' "$TMPD/grow.out" | tail -1)
echo "$last" | grep -q 'ended early' || fail "the end of a dead writer is not said: $last"
echo "$last" | grep -q 'lost 7' || fail "lost events not shown: $last"
grep -q '^   lost: cpu.ringbuf 7$' "$TMPD/grow.out" || fail "lost events by source not shown"
grep -q 'truncated' "$TMPD/grow.out" || fail "the dropped tail is not explained"
top=$(live_top_function "$TMPD/grow.out")
[ "$top" = gen_hot_a ] || fail "top function of the kept chunks is '$top', expected gen_hot_a"
# The first snapshot already knows it (60% of samples from the start).
awk '/^== nusku live/ && n++ { exit } { print }' "$TMPD/grow.out" >"$TMPD/first"
[ "$(live_top_function "$TMPD/first")" = gen_hot_a ] || fail "first snapshot: top function is not gen_hot_a"
echo "ok: followed file, writer died mid-chunk: $last"

# A pipe, the writer dying mid-chunk.
"$GEN" - 1.2 --die 2>/dev/null | "$NUSKU" live --snapshot --interval 0.4 - >"$TMPD/pipe.out" 2>&1 ||
	fail "live on a pipe failed: $(cat "$TMPD/pipe.out")"
last=$(grep '^== nusku live' "$TMPD/pipe.out" | tail -1)
echo "$last" | grep -q 'ended early' || fail "pipe: end not said: $last"
grep -q 'truncated' "$TMPD/pipe.out" || fail "pipe: dropped tail not explained"
[ "$(live_top_function "$TMPD/pipe.out")" = gen_hot_a ] || fail "pipe: top function is not gen_hot_a"
echo "ok: pipe, writer died mid-chunk: $last"

# A pipe that ends cleanly, and --count.
"$GEN" - 1 2>/dev/null | "$NUSKU" live --snapshot --interval 0.3 - >"$TMPD/clean.out" 2>&1 ||
	fail "live on a clean pipe failed"
grep '^== nusku live' "$TMPD/clean.out" | tail -1 | grep -q '\[ended\]' ||
	fail "clean end not said: $(tail -3 "$TMPD/clean.out")"
"$GEN" - 3 2>/dev/null | "$NUSKU" live --snapshot --interval 0.3 --count 2 - >"$TMPD/count.out" 2>&1
n=$(grep -c '^== nusku live' "$TMPD/count.out")
[ "$n" = 2 ] || fail "--count 2 printed $n snapshots"
echo "ok: clean end and --count"

# Bad input: one line on stderr, non-zero exit.
"$NUSKU" live --snapshot "$TMPD/none.nsk" 2>"$TMPD/e1"; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/e1")" = 1 ] || fail "missing file: exit $st, $(cat "$TMPD/e1")"
echo "not a recording at all, just some text here" >"$TMPD/bad.nsk"
"$NUSKU" live --snapshot "$TMPD/bad.nsk" 2>"$TMPD/e2"; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/e2")" = 1 ] || fail "not a .nsk: exit $st, $(cat "$TMPD/e2")"
grep -q 'not a .nsk' "$TMPD/e2" || fail "not a .nsk: $(cat "$TMPD/e2")"
"$NUSKU" live 2>/dev/null; [ $? = 2 ] || fail "no arguments must be a usage error"
"$NUSKU" live --interval x f 2>/dev/null; [ $? = 2 ] || fail "bad --interval must be a usage error"
cp "$TMPD/grow.nsk" "$TMPD/same.nsk"
"$NUSKU" live --snapshot -o "$TMPD/same.nsk" "$TMPD/same.nsk" 2>"$TMPD/e3"; st=$?
[ $st = 1 ] && grep -q 'is the recording being read' "$TMPD/e3" || fail "-o onto the input: exit $st, $(cat "$TMPD/e3")"
cmp -s "$TMPD/grow.nsk" "$TMPD/same.nsk" || fail "-o onto the input damaged it"
echo "ok: errors"
echo "live_stream: ok"
