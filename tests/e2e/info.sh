#!/bin/sh
# nusku info on a synthetic recording (tests/unit/nsk_gen): whole, through a
# pipe, truncated, corrupt, missing, not a recording.  Needs no BPF.
. "$TOP_SRCDIR/tests/e2e/lib.sh"

GEN=$(dirname "$NUSKU")/tests/unit/nsk_gen
[ -x "$GEN" ] || fail "no $GEN (make check builds it)"
F=$TMPD/run.nsk
"$GEN" -n 20000 "$F" || fail "nsk_gen"

# Whole file: header, meta, clock, counts, loss by source, clean end.
"$NUSKU" info "$F" >"$TMPD/out" 2>"$TMPD/err" || fail "info exits $? on a good file"
[ -s "$TMPD/err" ] && fail "info wrote to stderr on a good file: $(cat "$TMPD/err")"
grep -q '^format: *1\.4' "$TMPD/out" || fail "format line"
grep -q '^recording: *6e736b67656e00010000000000001234$' "$TMPD/out" || fail "recording id"
grep -q 'host *gen-host' "$TMPD/out" || fail "meta host"
grep -q 'cmdline *./workload --spin' "$TMPD/out" || fail "meta cmdline"
grep -q '^clock:.*2025-11-29 16:29:37.000000000 UTC' "$TMPD/out" || fail "clock anchor"
grep -q '^span: *20\.000 s' "$TMPD/out" || fail "span"
grep -q '^ *sample *20000$' "$TMPD/out" || fail "sample count"
grep -q '^records: *20051$' "$TMPD/out" || fail "record total"
grep -q '^loss: *102 events' "$TMPD/out" || fail "loss total"
grep -q '^ *cpu.ringbuf *100$' "$TMPD/out" || fail "loss cpu.ringbuf"
grep -q '^ *cpu.stack *2$' "$TMPD/out" || fail "loss cpu.stack"
grep -q '^ended: *cleanly' "$TMPD/out" || fail "clean end"
grep -q 'truncated\|missing' "$TMPD/out" && fail "a whole file reported truncated or missing records"
echo "ok: whole file"

# The chunk table, JSON, and a pipe.
"$NUSKU" info --chunks "$F" | grep -q '^ *0 *56 records' || fail "--chunks lists chunk 0 at offset 56"
nchunks=$("$NUSKU" info --chunks "$F" | grep -c ' records \(zstd\|none\) ')
[ "$nchunks" -gt 5 ] || fail "only $nchunks chunks listed"
cat "$F" | "$NUSKU" info --format json - >"$TMPD/json" || fail "json from a pipe"
if command -v python3 >/dev/null; then
	python3 - "$TMPD/json" <<'PY' || fail "json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["records"]["by_type"]["sample"] == 20000, d["records"]
assert d["loss"]["total"] == 102
assert {s["source"]: s["count"] for s in d["loss"]["by_source"]} == {"cpu.ringbuf": 100, "cpu.stack": 2}
assert d["ended"] is True and d["truncated"] is None
assert d["meta"][0] == {"key": "host", "value": "gen-host"}
PY
fi
echo "ok: --chunks, json, pipe"

# The golden 1.0 file (nsk_gen -n 500 -c 2048, committed): every later
# nusku must read it the same.
"$NUSKU" info --format json "$TOP_SRCDIR/tests/golden/v1.0.nsk" >"$TMPD/golden" ||
	fail "golden 1.0 file does not read"
if command -v python3 >/dev/null; then
	python3 - "$TMPD/golden" <<'PY' || fail "golden 1.0 content"
import json, sys
d = json.load(open(sys.argv[1]))
want = {"meta": 3, "clock": 1, "string": 6, "process": 1, "thread": 2, "exit": 1,
        "mapping": 1, "frame": 4, "stack": 3, "sample": 500, "alloc": 1, "free": 1,
        "offcpu": 1, "syscall_stat": 1, "syscall_slow": 1, "conn": 1, "retransmit": 1,
        "loss": 1, "end": 1}
assert d["format"]["major"] == 1 and d["format"]["minor"] == 0
assert d["records"]["by_type"] == want, d["records"]["by_type"]
assert d["loss"]["by_source"] == [{"source_id": 2, "source": "cpu.stack", "count": 2}]
assert d["ended"] and d["end"]["records"] == 530 and not d["problems"], d
assert d["time"]["span_ns"] == 500 * 1000000 + 1
PY
fi
echo "ok: golden 1.0 file"

# Truncated at an arbitrary byte: the complete chunks, a note, exit 0.
size=$(wc -c <"$F")
cut=$((size * 3 / 5 + 17))
head -c $cut "$F" >"$TMPD/cut.nsk"
"$NUSKU" info "$TMPD/cut.nsk" >"$TMPD/out" 2>"$TMPD/err" || fail "truncated file exits $?"
grep -q "^truncated: *last [0-9]* bytes at offset [0-9]* do not form a whole chunk" "$TMPD/out" ||
	fail "no truncation note: $(cat "$TMPD/out")"
grep -q '^ended: *no END' "$TMPD/out" || fail "truncated file must not look ended"
n=$(sed -n 's/^ *sample *\([0-9]*\)$/\1/p' "$TMPD/out")
[ "$n" -gt 5000 ] && [ "$n" -lt 20000 ] || fail "truncated file: $n samples"
# The note's numbers add up to the cut.
set -- $(sed -n 's/^truncated: *last \([0-9]*\) bytes at offset \([0-9]*\).*/\1 \2/p' "$TMPD/out")
[ $(($1 + $2)) = $cut ] || fail "truncated $1 at $2 does not end at $cut"
echo "ok: truncated at $cut: $n samples, last $1 bytes dropped"

# A writer killed mid-way (no END, no index) reads as cut, exit 0.
"$GEN" -n 3000 --no-end "$TMPD/killed.nsk" || fail "nsk_gen --no-end"
"$NUSKU" info "$TMPD/killed.nsk" >"$TMPD/out" || fail "no-END file exits $?"
grep -q '^ended: *no END' "$TMPD/out" || fail "no-END file"

# Corrupt: one flipped byte inside a chunk's payload.  Everything else is
# printed, one line on stderr names the chunk's offset, exit 1.
cp "$F" "$TMPD/bad.nsk"
off=$("$NUSKU" info --chunks "$F" | awk '$3 == "records" && $1 == 7 { print $2 }')
[ -n "$off" ] || fail "no chunk 7"
printf '\377' | dd of="$TMPD/bad.nsk" bs=1 seek=$((off + 64 + 100)) conv=notrunc 2>/dev/null
"$NUSKU" info "$TMPD/bad.nsk" >"$TMPD/out" 2>"$TMPD/err"
st=$?
[ $st = 1 ] || fail "corrupt file exits $st, expected 1"
[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "corrupt file: stderr is not one line: $(cat "$TMPD/err")"
grep -q "offset $off" "$TMPD/err" || fail "error does not name offset $off: $(cat "$TMPD/err")"
grep -q '^ended: *cleanly' "$TMPD/out" || fail "the chunks after the corrupt one were not read"
grep -q '^missing: *[1-9][0-9]* of the records written before END were not read' "$TMPD/out" ||
	fail "the records of the corrupt chunk are not counted as missing"
echo "ok: corrupt chunk at $off: $(cat "$TMPD/err")"

# Missing file, not a recording, usage.
"$NUSKU" info "$TMPD/missing.nsk" 2>"$TMPD/err"; st=$?
[ $st = 1 ] || fail "missing file exits $st"
[ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'No such file' "$TMPD/err" || fail "missing: $(cat "$TMPD/err")"
echo "just some text, long enough to look like it could be a header" >"$TMPD/text"
"$NUSKU" info "$TMPD/text" 2>"$TMPD/err"; st=$?
[ $st = 1 ] || fail "text file exits $st"
[ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'not a .nsk file' "$TMPD/err" || fail "text: $(cat "$TMPD/err")"
: >"$TMPD/empty"
"$NUSKU" info "$TMPD/empty" 2>/dev/null; [ $? = 1 ] || fail "empty file"
"$NUSKU" info 2>/dev/null; [ $? = 2 ] || fail "no argument must exit 2"
"$NUSKU" info --format xml "$F" 2>/dev/null; [ $? = 2 ] || fail "bad --format must exit 2"
"$NUSKU" info --help | grep -q 'usage: nusku info' || fail "--help"
echo "info: ok"
