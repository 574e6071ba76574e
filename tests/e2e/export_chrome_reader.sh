#!/bin/sh
# nusku export --format chrome read by a real, maintained reader: the web
# app of speedscope (SPEEDSCOPE_VERSION below, its npm package's
# dist/release, installed by setup.sh) in headless Chromium, which imports
# the Trace Event Format as one profile per (pid, tid) track.  The file is
# handed to it as speedscope's own CLI does (#localProfilePath= a script
# holding it in base64; file URLs, nothing served), in the Sandwich view,
# whose DOM is a table of every frame with its total and self time;
# tests/tools/cdp_page.py drives the browser (DevTools protocol over a
# pipe), waits until that table is drawn, and logs the console.
# Against the recording of tests/workloads/blocking (as export_chrome.sh):
#   import     no "Something went wrong" (an import that threw), no alert
#              (an unrecognised or empty file), none of its console
#              warnings about slices that do not nest ("Tried to end",
#              "still open at end of profile")
#   names      one profile per thread with on-CPU or off-CPU events (the
#              selector's "1/N"), each named "PROCESS (pid P), THREAD (tid
#              T)": the sleeper's and both runqueue_spin's as "blocking
#              (pid P), ..." by construction
#   sleeper    (--tid of it) its table has the sleep slices, one row each
#              (speedscope keys a frame by name and args), as many as the
#              file has (5 less those the recorder lost), and their total
#              is the workload's own measure -15%..+15%
#   cpu        (--tid of a runqueue_spin) every function of its on-CPU
#              slices is a row, runqueue_spin among them with a total > 0
# No timing is asserted; each browser run is bounded (timeout) only so
# that a hung browser cannot hang the suite.  Skips (77) without Chromium
# or the reader (setup.sh installs it when the npm registry answers).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
SPEEDSCOPE_VERSION=1.25.0
command -v python3 >/dev/null || skip "python3 is needed"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium)"
SS=${NSK_SPEEDSCOPE:-$TOP_SRCDIR/tests/readers/node_modules/speedscope}/dist/release
[ "$(head -n 1 "$SS/release.txt" 2>/dev/null)" = "speedscope@$SPEEDSCOPE_VERSION" ] ||
	skip "speedscope $SPEEDSCOPE_VERSION is not in $SS (./setup.sh installs it with npm)"
[ -x "$WORKLOADS/blocking" ] || skip "tests/workloads/blocking is not built"

sql() {
	"$NUSKU" report "$1" --format csv --sql "$2" | tail -n 1
}

CDP="$TOP_SRCDIR/tests/tools/cdp_page.py"
# done: the Sandwich table has drawn a row, or speedscope said it failed
# (a dialog ends the wait too)
DONE="[...document.querySelectorAll('tr')].some(r => !r.title && r.cells.length == 3 &&
 r.cells[0].textContent.includes('%')) || document.body.innerText.includes('Something went wrong')"

# read NAME: speedscope opens $TMPD/NAME.json; its DOM, parsed, in
# $TMPD/NAME.dom.txt: "profile WEIGHT_US NAME" for each entry of the
# profile selector, "index K/N", "row TOTAL_US SELF_US NAME" for each row
# of the Sandwich table, "error ..." for what went wrong
read_json() {
	python3 - "$TMPD/$1.json" "$TMPD/$1.js" <<'PY' || fail "$1: cannot wrap the json"
import base64, json, sys
b = base64.b64encode(open(sys.argv[1], 'rb').read()).decode()
open(sys.argv[2], 'w').write('speedscope.loadFileFromBase64(%s, %s)\n' % (
    json.dumps(sys.argv[1].rsplit('/', 1)[-1]), json.dumps(b)))
PY
	# in a tall window (cdp_page.py): the table draws only the rows in sight
	timeout 120 python3 "$CDP" "$CHROMIUM" \
		"file://$SS/index.html#localProfilePath=$TMPD/$1.js&view=sandwich" "$DONE" 90 \
		>"$TMPD/$1.dom" 2>"$TMPD/$1.log" ||
		fail "$1: chromium: $(grep -v CONSOLE "$TMPD/$1.log" | tail -n 3)"
	grep -E '^(CONSOLE.*(Tried to end|still open at end|Failed to load)|ALERT|Uncaught)' \
		"$TMPD/$1.log" >"$TMPD/$1.warn"
	[ -s "$TMPD/$1.warn" ] && fail "$1: speedscope: $(head -c 600 "$TMPD/$1.warn")"
	grep -q '^CONSOLE.*Importing as Trace Event Format' "$TMPD/$1.log" ||
		fail "$1: speedscope did not import it as the Trace Event Format"
	python3 - "$TMPD/$1.dom" >"$TMPD/$1.dom.txt" <<'PY' || fail "$1: parsing the DOM"
import re, sys
from html.parser import HTMLParser
UNITS = {'ns': 1e-3, 'µs': 1, 'ms': 1e3, 's': 1e6, 'min': 60e6, 'hr': 3600e6}
def us(text):
    m = re.match(r'\s*([\d.]+)\s*(ns|µs|ms|s|min|hr)\b', text)
    assert m, 'not a time: %r' % text
    return float(m.group(1)) * UNITS[m.group(2)]
class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.tr, self.td = [], None, None
        self.text = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'tr':
            self.tr = {'title': a.get('title'), 'cells': []}
        elif tag == 'td' and self.tr is not None:
            self.td = []
    def handle_endtag(self, tag):
        if tag == 'td' and self.td is not None:
            self.tr['cells'].append(''.join(self.td))
            self.td = None
        elif tag == 'tr' and self.tr is not None:
            self.rows.append(self.tr)
            self.tr = None
    def handle_data(self, data):
        self.text.append(data)
        if self.td is not None:
            self.td.append(data)
d = Dom()
d.feed(open(sys.argv[1], encoding='utf-8').read())
text = ' '.join(d.text)
if 'Something went wrong' in text:
    print('error speedscope: something went wrong')
if 'Drag and drop a profile' in text:
    print('error the landing page: nothing was loaded')
m = re.search(r'\((\d+)/(\d+)\)', text)
print('index %s' % ('%s/%s' % m.groups() if m else '1/1'))
for r in d.rows:
    c = r['cells']
    if r['title'] is not None and len(c) == 3:
        print('profile %.3f %s' % (us(c[2]), c[1]))
    elif r['title'] is None and len(c) == 3 and '%' in c[0]:
        print('row %.3f %.3f %s' % (us(c[0]), us(c[1]), c[2].replace('\n', ' ')))
PY
	grep '^error' "$TMPD/$1.dom.txt" && fail "$1: $(grep '^error' "$TMPD/$1.dom.txt")"
	nrows=$(grep -c '^row ' "$TMPD/$1.dom.txt")
	[ "$nrows" -gt 0 ] || fail "$1: no rows in the Sandwich table"
	echo "ok: $1: speedscope read it: $(grep '^index' "$TMPD/$1.dom.txt"), $nrows rows"
}

"$NUSKU" record -q -e cpu,offcpu -o "$TMPD/b.nsk" -- "$WORKLOADS/blocking" "$TMPD" \
	>"$TMPD/answers" || fail "record blocking exited $?"
sleep_ns=$(awk '$1 == "sleeper" { sub("sleep_ns=", "", $2); print $2 }' "$TMPD/answers")
pid=$(sql "$TMPD/b.nsk" "SELECT pid FROM thread WHERE name = 'sleeper' LIMIT 1")
tid=$(sql "$TMPD/b.nsk" "SELECT tid FROM thread WHERE name = 'sleeper' LIMIT 1")
spin=$(sql "$TMPD/b.nsk" "SELECT min(tid) FROM thread WHERE name = 'runqueue_spin'")
spin2=$(sql "$TMPD/b.nsk" "SELECT max(tid) FROM thread WHERE name = 'runqueue_spin'")
nthreads=$(sql "$TMPD/b.nsk" "SELECT count(*) FROM (SELECT pid, tid FROM sample UNION \
SELECT pid, tid FROM offcpu WHERE duration > 0)")
lost=$(sql "$TMPD/b.nsk" "SELECT coalesce(sum(count), 0) FROM loss WHERE source LIKE 'offcpu.%'")
"$NUSKU" export --format chrome -o "$TMPD/all.json" "$TMPD/b.nsk" 2>/dev/null || fail "export"
"$NUSKU" export --format chrome --tid "$tid" -o "$TMPD/sleeper.json" "$TMPD/b.nsk" 2>/dev/null ||
	fail "export --tid $tid"
"$NUSKU" export --format chrome --tid "$spin" -o "$TMPD/spin.json" "$TMPD/b.nsk" 2>/dev/null ||
	fail "export --tid $spin"

# --- the whole recording: every thread a profile, named -------------------------
read_json all
grep -qx "index 1/$nthreads" "$TMPD/all.dom.txt" ||
	fail "all: $(grep '^index' "$TMPD/all.dom.txt"), $nthreads threads"
[ "$(grep -c '^profile ' "$TMPD/all.dom.txt")" = "$nthreads" ] ||
	fail "all: $(grep -c '^profile ' "$TMPD/all.dom.txt") profiles listed, $nthreads threads"
grep '^profile ' "$TMPD/all.dom.txt" | grep -Ev '^profile [0-9.]+ .+ \(pid [0-9]+\), .+ \(tid [0-9]+\)$' &&
	fail "all: a profile without a process and a thread name"
for want in "sleeper (tid $tid)" "runqueue_spin (tid $spin)" "runqueue_spin (tid $spin2)"; do
	grep -q "^profile [0-9.]* blocking (pid $pid), $want\$" "$TMPD/all.dom.txt" ||
		fail "all: no profile 'blocking (pid $pid), $want': $(grep "$want" "$TMPD/all.dom.txt")"
done
echo "ok: all: $nthreads profiles, each named by process and thread"

# --- the sleeper: its sleep slices ------------------------------------------------
read_json sleeper
python3 - "$TMPD/sleeper.json" "$TMPD/sleeper.dom.txt" "$sleep_ns" "$lost" <<'PY' ||
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
sleep_ns, lost = int(sys.argv[3]), int(sys.argv[4])
# the distinct frames speedscope makes of the file's sleep slices: name and args
want = {json.dumps(e['args'], separators=(',', ':'), ensure_ascii=False) for e in ev
        if e['ph'] == 'X' and e['name'] == 'sleep'}
rows = [l.rstrip('\n').split(' ', 3)[1:] for l in open(sys.argv[2]) if l.startswith('row ')]
got = [r for r in rows if r[2].startswith('sleep {')]
assert len(got) == len(want), 'sleep rows %d, distinct sleep slices %d' % (len(got), len(want))
assert 5 - lost <= len(got) <= 5, '%d sleep rows, %d off-CPU events lost' % (len(got), lost)
assert {r[2][len('sleep '):] for r in got} == want, 'the rows are not the slices'
tot = sum(float(r[0]) for r in got) * 1000
assert len(got) < 5 or 0.85 * sleep_ns <= tot <= 1.15 * sleep_ns, \
    'sleep rows %d ns, measured %d' % (tot, sleep_ns)
print('ok: sleeper: %d sleep rows, %.1f ms (measured %.1f ms)' % (len(got), tot / 1e6, sleep_ns / 1e6))
PY
	fail "sleeper: $(grep '^row' "$TMPD/sleeper.dom.txt" | head -c 600)"

# --- a runqueue_spin: its on-CPU stacks -------------------------------------------
read_json spin
python3 - "$TMPD/spin.json" "$TMPD/spin.dom.txt" <<'PY' ||
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
want = {e['name'] for e in ev if e['ph'] == 'X' and e['cat'] == 'cpu'}
rows = {r[3].rstrip('\n'): float(r[1]) for r in
        (l.split(' ', 3) for l in open(sys.argv[2]) if l.startswith('row '))}
assert want, 'no on-CPU slices in the file'
missing = want - set(rows)
assert not missing, 'functions not in the table: %s' % sorted(missing)[:10]
assert rows.get('runqueue_spin', 0) > 0, 'runqueue_spin: %s' % rows.get('runqueue_spin')
print('ok: spin: %d functions, runqueue_spin %.1f ms' % (len(want), rows['runqueue_spin'] / 1e3))
PY
	fail "spin: $(grep '^row' "$TMPD/spin.dom.txt" | head -c 600)"
echo "export_chrome_reader: ok"
