#!/bin/sh
# The flame graphs in a real browser: headless Chromium (Debian's chromium)
# opens export --format svg and --format html of cpu_hot, and diff --format
# html of cpu_split 30 -> 15, and
#   - its DOM after the scripts ran (--dump-dom) holds every frame of the
#     file, hot_a's among them, and its console shows no uncaught error
#     (the inline script ran in the SVG document and inside the HTML page);
#   - its screenshot has, at the right end of the widest hot_a frame (left
#     of it: the label), that frame's fill colour: the frame is drawn where
#     the file puts it;
#   - in the differential graph, moved (its share halved) is drawn blue and
#     steady_a (untouched) near neutral.
# No timing is asserted; each browser run is bounded (timeout) only so
# that a hung browser cannot hang the suite.  Skips (77) without Chromium.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 is needed"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium)"
for w in cpu_hot cpu_split; do
	[ -x "$WORKLOADS/$w" ] || skip "tests/workloads/$w is not built"
done
PNG="$TOP_SRCDIR/tests/tools/png_pixels.py"

# --run-all-compositor-stages-before-draw and a virtual time budget: the
# screenshot is of the page once painted and settled, not of a first paint
# (a clean run here once read the page's background where an HTML page's
# frame is; the budget is virtual time, nothing is waited for)
browser() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --force-device-scale-factor=1 \
		--run-all-compositor-stages-before-draw --virtual-time-budget=5000 \
		--user-data-dir="$TMPD/profile" --enable-logging=stderr --v=0 "$@"
}

# frame FILE NAME: "X,Y R G B" of the widest frame called NAME: a point
# 2 px left of its right end, half way down, and its fill
frame() {
	python3 - "$1" "$2" <<'PY'
import re, sys
best = None
for m in re.finditer(r'<g class="f"[^>]*><title>([^<]*)</title><rect x="([\d.]+)" '
                     r'y="([\d.]+)" width="([\d.]+)" height="(\d+)" fill="rgb\((\d+),(\d+),(\d+)\)"',
                     open(sys.argv[1], encoding='utf-8').read()):
    name = m.group(1)[:m.group(1).rfind(' (')]
    x, y, w, h = (float(m.group(i)) for i in range(2, 6))
    if name == sys.argv[2] and (best is None or w > best[2]):
        best = (x, y, w, h, m.group(6), m.group(7), m.group(8))
assert best, 'no frame ' + sys.argv[2]
x, y, w, h, r, g, b = best
print('%d,%d %s %s %s' % (x + w - 2, y + h / 2, r, g, b))
PY
}
# size FILE: "W,H" of the graph
size() {
	sed -n 's/.*<svg id="fg"[^>]* width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$1" | head -n 1
}
# near "R G B" "R G B": each channel within 3
near() {
	echo "$1 $2" | awk '{ for (i = 1; i <= 3; i++) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > 3) exit 1 } }'
}

# render FILE: dump-dom and screenshot checks of one graph; hot_a's colour
render() {
	f=$1
	browser --dump-dom "file://$f" >"$TMPD/dom" 2>"$TMPD/log" || fail "chromium --dump-dom $f exited $?"
	want=$(grep -c '<g class="f"' "$f")
	got=$(grep -o '<g class="f"' "$TMPD/dom" | wc -l)
	[ "$got" = "$want" ] || fail "$f: $got frames in the DOM, $want in the file"
	grep -q '<title>hot_a (' "$TMPD/dom" || fail "$f: no hot_a frame in the DOM"
	grep -q 'Uncaught' "$TMPD/log" && fail "$f: the script failed: $(grep Uncaught "$TMPD/log")"
	browser --screenshot="$TMPD/shot.png" --window-size="$(size "$f")" "file://$f" \
		>/dev/null 2>"$TMPD/log" || fail "chromium --screenshot $f exited $?"
	set -- $(frame "$f" hot_a)
	px=$(python3 "$PNG" "$TMPD/shot.png" "$1") || fail "$f: reading the screenshot"
	near "$px" "$2 $3 $4" || fail "$f: at $1 the screenshot has $px, hot_a is $2 $3 $4"
	echo "ok: $(basename "$f"): $got frames in the DOM, hot_a drawn at $1 in $px"
}

"$NUSKU" record -q -e cpu -o "$TMPD/cpu.nsk" -- "$WORKLOADS/cpu_hot" 2 >/dev/null ||
	fail "record exited $?"
"$NUSKU" export --format svg -o "$TMPD/cpu.svg" "$TMPD/cpu.nsk" 2>/dev/null || fail "export svg"
"$NUSKU" export --format html -o "$TMPD/cpu.html" "$TMPD/cpu.nsk" 2>/dev/null || fail "export html"
grep -q '^<!DOCTYPE html>' "$TMPD/cpu.html" || fail "not an HTML page"
sed 's/xmlns="[^"]*"//g' "$TMPD/cpu.html" | grep -Eq 'src=|href=|https?:|url\(' &&
	fail "the page fetches something"
# the page holds the svg's frames, byte for byte
grep '<g class="f"' "$TMPD/cpu.svg" >"$TMPD/a"
grep '<g class="f"' "$TMPD/cpu.html" >"$TMPD/b"
cmp -s "$TMPD/a" "$TMPD/b" || fail "the page's frames differ from the svg's"
render "$TMPD/cpu.svg"
render "$TMPD/cpu.html"

# --- the differential graph
for r in base:30 new:15; do
	"$NUSKU" record -q -e cpu -o "$TMPD/${r%:*}.nsk" -- "$WORKLOADS/cpu_split" "${r#*:}" 2 \
		>/dev/null || fail "record cpu_split ${r#*:} exited $?"
done
"$NUSKU" diff --format html "$TMPD/base.nsk" "$TMPD/new.nsk" >"$TMPD/diff.html" 2>/dev/null ||
	fail "diff --format html exited $?"
browser --screenshot="$TMPD/diff.png" --window-size="$(size "$TMPD/diff.html")" \
	"file://$TMPD/diff.html" >/dev/null 2>"$TMPD/log" || fail "chromium --screenshot diff exited $?"
grep -q 'Uncaught' "$TMPD/log" && fail "diff: the script failed: $(grep Uncaught "$TMPD/log")"
set -- $(frame "$TMPD/diff.html" moved)
set -- $(python3 "$PNG" "$TMPD/diff.png" "$1")
[ "$3" -gt $(($1 + 100)) ] && [ "$3" -gt $(($2 + 100)) ] || fail "moved is not drawn blue: $*"
echo "ok: diff: moved drawn blue ($*)"
set -- $(frame "$TMPD/diff.html" steady_a)
set -- $(python3 "$PNG" "$TMPD/diff.png" "$1")
[ "$1" -ge 170 ] && [ "$2" -ge 170 ] && [ "$3" -ge 170 ] || fail "steady_a is not near neutral: $*"
echo "ok: diff: steady_a near neutral ($*)"
echo "export_browser: ok"
