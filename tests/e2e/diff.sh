#!/bin/sh
# nusku diff on recordings whose answer is known by construction.
#
# cpu_split PCT burns PCT% of its CPU in moved, 40% in steady_a, 20% in
# steady_b and 40-PCT% in filler.  30 -> 15: moved is faster (its share
# halves), filler slower, steady_a and steady_b untouched.  Two recordings
# at 30: no function that holds 5% or more of the samples changes.  Both
# comparisons at --alpha 0.001 (Holm over the rows): the real change is
# past p 1e-20 at ~2500 samples a recording, and a true share is flagged
# by chance at most 0.1% of the runs.
#
# The differential flame graph (--format svg, html) of 30 -> 15: moved blue,
# filler red, steady_a, steady_b and main near neutral.
#
# alloc_sites at scales 1 and 3, every allocation recorded: the bytes per
# site are exact in both columns; every scaled site keeps its share of the
# records (no significant change), deterministically.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
[ -x "$WORKLOADS/cpu_split" ] || skip "tests/workloads/cpu_split is not built"
[ -x "$WORKLOADS/alloc_sites" ] || skip "tests/workloads/alloc_sites is not built"

# --- the command line ----------------------------------------------------
"$NUSKU" diff >/dev/null 2>"$TMPD/err"; [ $? = 2 ] || fail "no files: not a usage error"
grep -q 'which two recordings' "$TMPD/err" || fail "no files: $(cat "$TMPD/err")"
"$NUSKU" diff a b c >/dev/null 2>&1; [ $? = 2 ] || fail "three files: not a usage error"
"$NUSKU" diff --by nope a b >/dev/null 2>"$TMPD/err"; [ $? = 2 ] || fail "--by nope: not 2"
grep -q "no view 'nope'" "$TMPD/err" || fail "--by nope: $(cat "$TMPD/err")"
"$NUSKU" diff --alpha 0 a b >/dev/null 2>&1; [ $? = 2 ] || fail "--alpha 0: not 2"
"$NUSKU" diff --format xml a b >/dev/null 2>&1; [ $? = 2 ] || fail "--format xml: not 2"
"$NUSKU" diff --help | grep -q 'differential flame graph' || fail "diff --help: no svg/html"
"$NUSKU" diff "$TMPD/none.nsk" "$TMPD/none.nsk" >/dev/null 2>"$TMPD/err"
[ $? = 1 ] || fail "a missing file: not 1"
[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "a missing file: not one line: $(cat "$TMPD/err")"
"$NUSKU" --help | grep -q '^  diff ' || fail "nusku --help does not list diff"
"$NUSKU" diff --help | grep -q 'alloc-site' || fail "diff --help lists no views"

# --- CPU: a known change, and none --------------------------------------
for r in base:30 new:15 same:30; do
	"$NUSKU" record -q -e cpu -o "$TMPD/${r%:*}.nsk" -- \
		"$WORKLOADS/cpu_split" "${r#*:}" 3 >/dev/null || fail "record ${r%:*} exited $?"
done

# col FILE FUNCTION COLUMN: a column of a function's row in diff's CSV
col() {
	awk -F, -v fn="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		$1 == fn && $2 == "cpu_split" { print $k[c]; exit }' "$1"
}
"$NUSKU" diff --alpha 0.001 --format csv "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/change.csv" ||
	fail "diff exited $?"
head -1 "$TMPD/change.csv" | grep -q '^function,module,base,new,delta,ratio,verdict,p,' ||
	fail "CSV header: $(head -1 "$TMPD/change.csv")"
assert_near "$(col "$TMPD/change.csv" moved base)" 30 4 "base share of moved"
assert_near "$(col "$TMPD/change.csv" moved new)" 15 4 "new share of moved"
for want in moved:faster filler:slower "steady_a:no significant change" \
	    "steady_b:no significant change"; do
	got=$(col "$TMPD/change.csv" "${want%%:*}" verdict)
	[ "$got" = "${want#*:}" ] || fail "${want%%:*}: '$got', expected '${want#*:}': $(cat "$TMPD/change.csv")"
	echo "ok: ${want%%:*} ${want#*:}"
done
assert_near "$(col "$TMPD/change.csv" moved ratio)" 0.5 0.15 "moved's ratio"

"$NUSKU" diff --alpha 0.001 --format csv "$TMPD/base.nsk" "$TMPD/same.nsk" >"$TMPD/same.csv" ||
	fail "diff (same) exited $?"
# every function of 5% or more in either: no significant change (rows of
# names with commas are quoted, "f(int, long)": C++ runtime functions, not
# the workload's; the simple split below skips them)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	/^"/ { next }
	($k["base"] >= 5 || $k["new"] >= 5) { n++; if ($k["verdict"] != "no significant change") bad = bad " " $1 }
	END { if (bad != "" || n < 4) { print "changed:" bad " (" n " rows of 5%+)"; exit 1 } }' \
	"$TMPD/same.csv" || fail "the same build differs: $(cat "$TMPD/same.csv")"
echo "ok: the same build: no significant change"

# the differential flame graph: the new recording's shape (its root is
# all of new's samples), moved blue (its share halved), filler red, the
# untouched functions near neutral; each title carries both shares and
# their delta; the html form holds the same frames
"$NUSKU" diff --format svg "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/diff.svg" 2>/dev/null ||
	fail "diff --format svg exited $?"
"$NUSKU" diff --format html "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/diff.html" 2>/dev/null ||
	fail "diff --format html exited $?"
if command -v python3 >/dev/null; then
	new_n=$("$NUSKU" report "$TMPD/new.nsk" --format csv --sql "SELECT count(*) FROM sample" | tail -n 1)
	python3 - "$TMPD/diff.svg" "$new_n" <<'PY' || fail "differential graph: $(head -c 600 "$TMPD/diff.svg")"
import re, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
fr = {}
for g in root.iter(NS + 'g'):
    if g.get('class') != 'f':
        continue
    t = g.find(NS + 'title').text
    m = re.match(r'^(.*) \((\d+) samples, ([0-9.]+)%; base ([0-9.]+)%, delta ([-+][0-9.]+)%\)$', t)
    assert m, 'title ' + t
    rgb = tuple(int(v) for v in re.findall(r'\d+', g.find(NS + 'rect').get('fill')))
    name, n, new, base, delta = m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))
    assert abs(new - base - delta) <= 0.011, t
    if name not in fr or n > fr[name][0]:
        fr[name] = (n, base, new, rgb)
assert fr['all'][0] == int(sys.argv[2]), 'root %d, new has %s samples' % (fr['all'][0], sys.argv[2])
r, g, b = fr['moved'][3]
assert b > r + 100 and b > g + 100, 'moved not blue: %s' % (fr['moved'],)
r, g, b = fr['filler'][3]
assert r > b + 100 and r > g + 100, 'filler not red: %s' % (fr['filler'],)
for f in ('steady_a', 'steady_b', 'main'):
    assert min(fr[f][3]) >= 150, '%s not near neutral: %s' % (f, fr[f])
print('ok: differential graph: moved %s %s, filler %s, steady_a %s' % (
    fr['moved'][1:3], fr['moved'][3], fr['filler'][3], fr['steady_a'][3]))
PY
	grep '<g class="f"' "$TMPD/diff.svg" >"$TMPD/a"
	grep '<g class="f"' "$TMPD/diff.html" >"$TMPD/b"
	cmp -s "$TMPD/a" "$TMPD/b" || fail "the html graph's frames differ from the svg's"
	grep -q '^<!DOCTYPE html>' "$TMPD/diff.html" || fail "diff --format html is not a page"
	grep -q '<text id="subtitle"[^<]*new: [^<]*new\.nsk[^<]* base: [^<]*base\.nsk' "$TMPD/diff.svg" ||
		fail "the subtitle does not name both recordings"
	echo "ok: diff --format html"
fi

# a view neither recording has: no rows, said so
"$NUSKU" diff --by alloc-site "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/none.txt" ||
	fail "diff --by alloc-site of CPU recordings exited $?"
grep -q '^# no rows: neither recording' "$TMPD/none.txt" || fail "no rows: $(cat "$TMPD/none.txt")"

# text: 80 columns, the verdicts; JSON: the keys
"$NUSKU" diff -w 80 "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/change.txt" || fail "diff (text)"
awk 'length > 80 { exit 1 }' "$TMPD/change.txt" || fail "text wider than 80: $(cat "$TMPD/change.txt")"
grep -q '^moved  *cpu_split .* faster ' "$TMPD/change.txt" || fail "text: $(cat "$TMPD/change.txt")"
"$NUSKU" diff -f json "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/change.json" || fail "diff (json)"
if command -v python3 >/dev/null; then
	python3 - "$TMPD/change.json" <<'PY' || fail "JSON: $(head -c 600 "$TMPD/change.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["view"] == "function" and d["alpha"] == 0.01, d
row = [r for r in d["rows"] if r["function"] == "moved"][0]
for k in ("function", "module", "base", "new", "delta", "ratio", "verdict", "p"):
    assert k in row, k
assert row["verdict"] == "faster" and row["p"] < 1e-6, row
PY
	echo "ok: JSON rows"
fi

# --- allocation sites: exact bytes ------------------------------------------
for s in 1 3; do
	"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/a$s.nsk" -- \
		"$WORKLOADS/alloc_sites" $s >/dev/null || fail "record alloc_sites $s exited $?"
done
"$NUSKU" diff --by alloc-site -f csv "$TMPD/a1.nsk" "$TMPD/a3.nsk" >"$TMPD/alloc.csv" ||
	fail "diff --by alloc-site exited $?"
head -1 "$TMPD/alloc.csv" | grep -q '^site,module,base,new,delta,ratio,verdict,p,' ||
	fail "alloc CSV header: $(head -1 "$TMPD/alloc.csv")"
# site base new (scale 1 and 3; see alloc_sites.c)
for want in "site_small 72000 216000" "site_calloc 300000 900000" \
	    "site_aligned 102400 307200" "site_leak 10000 30000" \
	    "site_thread 256000 768000" "site_grow 16368 16368" \
	    "site_mmap 3145728 3145728"; do
	set -- $want
	got=$(awk -F, -v s="$1" '$1 == s { print $3, $4 }' "$TMPD/alloc.csv")
	[ "$got" = "$2 $3" ] || fail "$1: '$got', expected '$2 $3': $(cat "$TMPD/alloc.csv")"
	echo "ok: $1 $got"
done
# the scaled sites keep their shares
awk -F, '$1 ~ /^site_(small|calloc|aligned|leak|thread)$/ && $7 != "no significant change" {
	exit 1 }' "$TMPD/alloc.csv" || fail "a scaled site changed: $(cat "$TMPD/alloc.csv")"
echo "ok: scaled sites: no significant change"
# --- syscalls: exact counts of calls on both sides ----------------------------
# syscalls N makes exactly N getpid; durations are the machine's, so only
# the counts and the columns are asserted, not a verdict.
if [ -x "$WORKLOADS/syscalls" ]; then
	for n in 1000 3000; do
		"$NUSKU" record -q -e syscall -o "$TMPD/s$n.nsk" -- "$WORKLOADS/syscalls" $n \
			>/dev/null || fail "record syscalls $n exited $?"
	done
	"$NUSKU" diff --by syscall -f csv "$TMPD/s1000.nsk" "$TMPD/s3000.nsk" >"$TMPD/sc.csv" ||
		fail "diff --by syscall exited $?"
	head -1 "$TMPD/sc.csv" | grep -q '^syscall,base,new,delta,ratio,verdict,p,p_raw,base_calls,new_calls,' ||
		fail "syscall CSV header: $(head -1 "$TMPD/sc.csv")"
	got=$(awk -F, '$1 == "getpid" { print $9, $10 }' "$TMPD/sc.csv")
	[ "$got" = "1000 3000" ] || fail "getpid calls: '$got': $(cat "$TMPD/sc.csv")"
	echo "ok: syscall getpid calls 1000 3000"
fi
exit 0
