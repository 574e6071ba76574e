#!/bin/sh
# nusku report from the command line, on synthetic recordings with known
# answers (tests/report/synth.c): exit statuses and one-line errors, JSON
# parsed by python3, --db read back with SQLite, stdin, --folded, and a
# truncated file reported with a warning.  Needs no root.
. "$TOP_SRCDIR/tests/e2e/lib.sh"

MKNSK=$(dirname "$NUSKU")/tests/report/mknsk
[ -x "$MKNSK" ] || fail "no $MKNSK (make check builds it)"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"
K=$TMPD/known.nsk
"$MKNSK" known "$K" || fail "mknsk known"

# --- bad input: one line on stderr, exit 1; usage errors exit 2
one_line_error() { # STATUS WHAT CMD...
	want=$1 what=$2
	shift 2
	"$@" >"$TMPD/out" 2>"$TMPD/err"
	st=$?
	[ $st = "$want" ] || fail "$what: exit $st, expected $want"
	[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "$what: not one line: $(cat "$TMPD/err")"
	[ -s "$TMPD/out" ] && fail "$what: printed on stdout"
	echo "ok: $what: $(cat "$TMPD/err")"
}
one_line_error 1 "missing file" "$NUSKU" report "$TMPD/nothing.nsk"
one_line_error 1 "not a .nsk file" "$NUSKU" report /etc/hostname
cp "$K" "$TMPD/newer.nsk"
printf '\002' | dd of="$TMPD/newer.nsk" bs=1 seek=8 conv=notrunc 2>/dev/null
one_line_error 1 "newer format major" "$NUSKU" report "$TMPD/newer.nsk"
grep -q "format 2" "$TMPD/err" || fail "newer major: message does not say which format"
one_line_error 2 "unknown view" "$NUSKU" report --by nosuch "$K"
grep -q "function" "$TMPD/err" && grep -q "stack" "$TMPD/err" || fail "unknown view: views not listed"
one_line_error 2 "bad --pid" "$NUSKU" report --pid 1x "$K"
one_line_error 2 "bad --format" "$NUSKU" report --format xml "$K"
"$NUSKU" report --help | grep -q -- "--folded" || fail "--help"

# --- JSON: keys, values, losses, span; stdin gives the same rows
"$NUSKU" report --format json "$K" >"$TMPD/k.json" || fail "json report"
"$NUSKU" report --format json - <"$K" >"$TMPD/stdin.json" || fail "json from stdin"
python3 - "$TMPD/k.json" "$TMPD/stdin.json" <<'PY' || fail "json content"
import json, sys
r = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
rows = {x["function"]: x for x in r["rows"]}
for k in ("function", "module", "self_samples", "total_samples", "self_pct", "total_pct"):
    assert k in r["rows"][0], k
a = rows["hot_a"]
assert (a["self_samples"], a["total_samples"], a["self_pct"], a["total_pct"]) == (43, 53, 43, 53), a
assert rows["recurse"]["total_samples"] == 10, "recursion counted once per sample"
assert rows["helper"]["self_samples"] == 10 and rows["hot_c"]["total_samples"] == 10, "inline frame"
assert rows["main"]["total_pct"] == 98
assert r["lost"] == {"cpu.ringbuf": 7, "cpu.stack": 3} and r["lost_total"] == 10
assert r["unresolved_frames"] == 2 and r["unknown_stacks"] == 1
assert r["time_span"]["seconds"] == 1 and r["complete"] is True
assert s["rows"] == r["rows"], "stdin differs"
print("ok: json")
PY

# --- filters and --sql from the command line
n=$("$NUSKU" report --format csv --sql "SELECT count(*) AS n FROM f_sample" \
	--comm worker --since 0.5 "$K" 2>/dev/null | tail -1)
[ "$n" = 25 ] || fail "--comm worker --since 0.5: $n samples, expected 25"
n=$("$NUSKU" report --format csv --pid 100 --tid 100 --until 0.395 \
	--sql "SELECT count(*) FROM f_sample" "$K" 2>/dev/null | tail -1)
[ "$n" = 40 ] || fail "--pid 100 --tid 100 --until 0.395: $n, expected 40"

# --- --db: a database any SQLite client reads
"$NUSKU" report --db "$TMPD/k.sqlite" "$K" 2>/dev/null || fail "--db"
python3 - "$TMPD/k.sqlite" <<'PY' || fail "--db content"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("SELECT count(*) FROM sample").fetchone()[0] == 100
assert c.execute("SELECT value FROM recording WHERE key = 'unknown_frames'").fetchone()[0] == 1
q = """SELECT sum(leaf) FROM sample s JOIN stack_func sf ON sf.stack_id = s.stack_id
       JOIN func f ON f.id = sf.func_id WHERE f.name = 'hot_a'"""
assert c.execute(q).fetchone()[0] == 43
print("ok: --db")
PY

# --- folded: flamegraph.pl's input, root first, the process as the root
"$NUSKU" report --folded "$K" >"$TMPD/folded" 2>/dev/null || fail "--folded"
grep -qx 'cpu_hot;__libc_start_main;main;hot_c;helper 10' "$TMPD/folded" || fail "folded inline path"
grep -qx 'other;__libc_start_main;main;hot_a 3' "$TMPD/folded" ||
	fail "folded: another process's samples merged into cpu_hot's"
awk '{ s += $NF } END { exit s != 100 }' "$TMPD/folded" || fail "folded counts do not sum to 100"

# --- call chains in a narrow table: whole frames from the leaf, as many as
# fit, then " ..."; --width 0: every chain whole (the CSV's)
"$NUSKU" report --by stack -w 50 "$K" >"$TMPD/narrow.txt" 2>/dev/null || fail "report -w 50"
"$NUSKU" report --by stack -w 0 "$K" >"$TMPD/wide.txt" 2>/dev/null || fail "report -w 0"
"$NUSKU" report --by stack -f csv "$K" >"$TMPD/chains.csv" 2>/dev/null || fail "report csv"
python3 - "$TMPD/narrow.txt" "$TMPD/wide.txt" "$TMPD/chains.csv" <<'PY' || fail "chains cut"
import csv, re, sys
chains = [r['chain'] for r in csv.DictReader(open(sys.argv[3]))]
def cells(path):
    rows = [l.rstrip('\n') for l in open(path) if not l.startswith('#') and l.strip()]
    return [re.split(r'%  ', l, 1)[1] for l in rows[1:]]
narrow, wide = cells(sys.argv[1]), cells(sys.argv[2])
assert wide == chains, (wide, chains)
cut = 0
for c, full in zip(narrow, chains):
    assert len(c) <= 50, c
    if c == full:
        continue
    cut += 1
    assert c.endswith(' ...'), c
    frames = c[:-4].split(' <- ')
    assert frames == full.split(' <- ')[:len(frames)], (c, full)
assert cut, 'no chain was cut at 50 columns'
print('ok: %d chains cut at whole frames, all whole at --width 0' % cut)
PY

# --- a truncated recording: reported, with what was cut
"$MKNSK" known "$TMPD/cut.nsk" noend || fail "mknsk noend"
size=$(wc -c <"$TMPD/cut.nsk")
head -c $((size - 9)) "$TMPD/cut.nsk" >"$TMPD/cut2.nsk"
"$NUSKU" report "$TMPD/cut2.nsk" >"$TMPD/cut.txt" 2>&1 || fail "report of a truncated file failed"
grep -q "WARNING: recording truncated: the last [0-9]* bytes" "$TMPD/cut.txt" || fail "truncation not said"
grep -q "WARNING: no end record" "$TMPD/cut.txt" || fail "missing END not said"
"$NUSKU" report --format json "$TMPD/cut2.nsk" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["complete"] is False and r["truncated_bytes"] > 0, r
' || fail "json of a truncated file"
echo "report_cli: ok"
