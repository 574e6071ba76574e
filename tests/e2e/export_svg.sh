#!/bin/sh
# nusku export --format svg: the flame graph parses as XML (python3's
# xml.etree), is self-contained (an inline script, nothing fetched), every
# frame is a <g> with a <title> "name (count unit, share%)" and a <rect>
# whose width is count / total of the 1200 px (to the 0.01 px the file
# rounds to) and which lies inside its caller's.  Known answers: cpu_hot's
# 60/30/10 in hot_a/hot_b/hot_c within 5 points, under the process frame;
# alloc_sites' bytes per site exact (--alloc-sample 1); blocking's lock
# and sleep time coloured by reason; syscall time graphed; a hostile
# recording's names escaped.  The inline script, run by node against a
# stand-in DOM (tests/tools/svg_script.js), zooms, resets and totals a
# search.  export --format folded is report --folded.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 is needed to parse the SVG"
for w in cpu_hot alloc_sites blocking; do
	[ -x "$WORKLOADS/$w" ] || skip "tests/workloads/$w is not built"
done

# frames SVG: checks the structure; prints "name count fill" per frame
frames() {
	python3 - "$1" <<'PY'
import re, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + 'svg', root.tag
W = float(root.get('data-w'))
text = open(sys.argv[1], encoding='utf-8').read()
assert '<script' in text and 'src=' not in text and 'href' not in text, 'not self-contained'
gs = [g for g in root.iter(NS + 'g') if g.get('class') == 'f']
assert gs, 'no frames'
fr = []
total = None
for g in gs:
    t = g.find(NS + 'title').text
    m = re.match(r'^(.*) \((\d+) (\S+), ([0-9.]+)%\)$', t, re.S)
    assert m, 'title ' + repr(t)
    r = g.find(NS + 'rect')
    x, y, w = float(r.get('x')), float(r.get('y')), float(r.get('width'))
    n = int(m.group(2))
    if total is None:
        assert m.group(1) == 'all', 'the first frame is not the root'
        total = n
        assert abs(w - W) < 0.01, 'root width %s' % w
    assert abs(w - W * n / total) <= 0.011, '%s: width %s for %d of %d' % (t, w, n, total)
    assert abs(float(m.group(4)) - 100.0 * n / total) <= 0.006, t
    fr.append((m.group(1), n, x, y, w, r.get('fill')))
# each frame inside one frame a row below it (its caller)
rows = {}
for f in fr:
    rows.setdefault(f[3], []).append(f)
for f in fr:
    if f[0] == 'all':
        continue
    below = rows.get(f[3] + 16, [])
    assert any(c[2] - 0.011 <= f[2] and f[2] + f[4] <= c[2] + c[4] + 0.011 for c in below), \
        'frame %s outside its caller' % f[0]
for f in fr:
    print('%s\t%d\t%s' % (f[0], f[1], f[5]))
PY
}
# share FRAMES NAME: percent of the total in frames called NAME
share() {
	awk -F'\t' -v n="$2" 'NR == 1 { t = $2 } $1 == n { s += $2 } END { printf "%.2f\n", 100 * s / t }' "$1"
}
count() {
	awk -F'\t' -v n="$2" '$1 == n { s += $2 } END { print s + 0 }' "$1"
}

# --- CPU
"$NUSKU" record -q -e cpu -o "$TMPD/cpu.nsk" -- "$WORKLOADS/cpu_hot" 2 >/dev/null ||
	fail "record exited $?"
"$NUSKU" export --format svg -o "$TMPD/cpu.svg" "$TMPD/cpu.nsk" || fail "export exited $?"
[ "$(stat -c %a "$TMPD/cpu.svg")" = 600 ] || fail "the svg is not 0600"
frames "$TMPD/cpu.svg" >"$TMPD/cpu.frames" || fail "the cpu flame graph is wrong"
assert_near "$(share "$TMPD/cpu.frames" hot_a)" 60 5 "svg hot_a share"
assert_near "$(share "$TMPD/cpu.frames" hot_b)" 30 5 "svg hot_b share"
assert_near "$(share "$TMPD/cpu.frames" hot_c)" 10 5 "svg hot_c share"
assert_near "$(share "$TMPD/cpu.frames" dispatch_c)" 10 5 "svg dispatch_c (inline) share"
assert_near "$(share "$TMPD/cpu.frames" cpu_hot)" 100 0.01 "svg process frame cpu_hot"
grep -q 'Matched: ' "$TMPD/cpu.svg" || fail "no search"
grep -q 'lost events: ' "$TMPD/cpu.svg" || fail "no loss summary in the subtitle"
echo "ok: cpu flame graph"
# the script, run by node against a stand-in DOM: a click zooms, reset
# undoes it, a search totals its matches (hot_a and hot_b, counted once)
if command -v node >/dev/null; then
	node "$TOP_SRCDIR/tests/tools/svg_script.js" "$TMPD/cpu.svg" worker '^hot_(a|b)$' \
		>"$TMPD/js" 2>&1 || fail "the script: $(cat "$TMPD/js")"
	grep -qx 'zoom OK' "$TMPD/js" || fail "click to zoom: $(cat "$TMPD/js")"
	grep -qx 'reset OK' "$TMPD/js" || fail "reset zoom: $(cat "$TMPD/js")"
	got=$(sed -n 's/^Matched: \([0-9.]*\)%$/\1/p' "$TMPD/js")
	want=$(awk -v a="$(share "$TMPD/cpu.frames" hot_a)" -v b="$(share "$TMPD/cpu.frames" hot_b)" \
		'BEGIN { print a + b }')
	assert_near "${got:-none}" "$want" 0.05 "search ^hot_(a|b)$ matched %"
else
	echo "note: node absent: the script's zoom and search not run"
fi
# folded: the same stacks as report's
"$NUSKU" export --format folded "$TMPD/cpu.nsk" >"$TMPD/e.folded" 2>/dev/null || fail "export --format folded"
"$NUSKU" report --folded "$TMPD/cpu.nsk" >"$TMPD/r.folded" 2>/dev/null || fail "report --folded"
cmp -s "$TMPD/e.folded" "$TMPD/r.folded" || fail "export --format folded differs from report --folded"
grep -q '^cpu_hot;' "$TMPD/e.folded" || fail "folded without the process as the root"
echo "ok: folded"

# --- allocations: bytes per site exact
S=20
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/alloc.nsk" -- "$WORKLOADS/alloc_sites" $S ||
	fail "record -e alloc exited $?"
"$NUSKU" export --format svg --by alloc -o "$TMPD/alloc.svg" "$TMPD/alloc.nsk" || fail "export --by alloc"
frames "$TMPD/alloc.svg" >"$TMPD/alloc.frames" || fail "the alloc flame graph is wrong"
for want in "site_small $((64000 * S + 8000 * S))" "site_calloc $((300000 * S))" \
	"site_aligned $((102400 * S))" "site_leak $((10000 * S))"; do
	set -- $want
	[ "$(count "$TMPD/alloc.frames" "$1")" = "$2" ] ||
		fail "svg $1: $(count "$TMPD/alloc.frames" "$1") bytes, expected $2"
done
"$NUSKU" export --format svg --by live -o "$TMPD/live.svg" "$TMPD/alloc.nsk" || fail "export --by live"
frames "$TMPD/live.svg" >"$TMPD/live.frames" || fail "the live flame graph is wrong"
[ "$(count "$TMPD/live.frames" site_leak)" = $((10000 * S)) ] || fail "svg live site_leak"
[ "$(count "$TMPD/live.frames" site_small)" = 0 ] || fail "svg live: site_small freed all"
echo "ok: allocation flame graphs"

# --- off-CPU, coloured by reason; syscall time
"$NUSKU" record -q -e offcpu,syscall -o "$TMPD/off.nsk" -- "$WORKLOADS/blocking" "$TMPD" >/dev/null ||
	fail "record -e offcpu exited $?"
"$NUSKU" export --format svg --by offcpu -o "$TMPD/off.svg" "$TMPD/off.nsk" || fail "export --by offcpu"
frames "$TMPD/off.svg" >"$TMPD/off.frames" || fail "the off-CPU flame graph is wrong"
# fill NAME: the colour of the widest frame called NAME, as "r g b"
fill() {
	awk -F'\t' -v n="$2" '$1 == n && $2 > best { best = $2; f = $3 } END { print f }' "$1" |
		tr -c '0-9\n' ' '
}
set -- $(fill "$TMPD/off.frames" lock_victim)
[ $# = 3 ] && [ "$1" -gt 180 ] && [ "$2" -lt 100 ] && [ "$3" -lt 100 ] ||
	fail "lock_victim is not coloured as lock (red): $*"
set -- $(fill "$TMPD/off.frames" sleeper)
[ $# = 3 ] && [ "$1" = "$2" ] && [ "$2" = "$3" ] || fail "sleeper is not coloured as sleep (grey): $*"
echo "ok: off-CPU flame graph by reason"
"$NUSKU" export --format svg --by syscall -o "$TMPD/sc.svg" "$TMPD/off.nsk" || fail "export --by syscall"
frames "$TMPD/sc.svg" >"$TMPD/sc.frames" || fail "the syscall flame graph is wrong"
awk -F'\t' 'NR == 1 { exit !($2 > 0) }' "$TMPD/sc.frames" || fail "no syscall time"
echo "ok: syscall flame graph"

# --- names made to hurt: escaped, and still XML
if [ -x "$WORKLOADS/../report/mknsk" ]; then
	"$WORKLOADS/../report/mknsk" hostile "$TMPD/h.nsk" || fail "mknsk hostile"
	"$NUSKU" export --format svg -o "$TMPD/h.svg" "$TMPD/h.nsk" 2>/dev/null || fail "export of a hostile recording"
	frames "$TMPD/h.svg" >/dev/null || fail "a hostile recording's flame graph is not XML"
	grep -q "$(printf '\033')" "$TMPD/h.svg" && fail "an escape byte in the svg"
	echo "ok: hostile names"
fi
echo "export_svg: ok"
