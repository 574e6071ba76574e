#!/bin/sh
# Continuous mode (issue 16 item 4): record --continuous DIR with 2 s
# segments and 6 s of retention over 15 s of cpu_hot keeps 3 or 4
# segments, each readable alone (info: exit 0, END), 0600 in a 0700
# directory; report DIR equals the sum of the per-segment reports (CPU
# samples per function); report DIR --since and info DIR@FROM.. select the
# segments whose time range (from their names) overlaps the range; diff
# compares two ranges; bad input gets one line and a non-zero exit.  As a
# session: sessions lists it, live NAME shows hot_a, stop closes every
# segment.  A recorder killed with SIGKILL leaves every closed segment
# readable with its END, and the directory still reads as one recording.
# Two recorder runs into one directory read as one recording.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 reads the CSV and JSON here"
[ -x "$WORKLOADS/cpu_hot" ] || fail "cpu_hot not built"

export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
orphans=""
cleanup() {
	"$NUSKU" stop --timeout 20 cont >/dev/null 2>&1
	for p in $orphans; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT

# samples FILE-OR-DIR [OPTIONS]: "function|module<TAB>samples" lines, sorted
samples() {
	what=$1
	shift
	"$NUSKU" report "$what" "$@" --format csv 2>"$TMPD/r.err" >"$TMPD/r.csv" ||
		fail "report $what $*: $(cat "$TMPD/r.err")"
	python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["function"] + "|" + r["module"] + "\t" + r["self_samples"])' "$TMPD/r.csv" | sort
}

# sum_parts FILES...: the per-function sums of their reports
sum_parts() {
	for f in "$@"; do samples "$f"; done | awk -F '\t' '
		{ n[$1] += $2 } END { for (k in n) print k "\t" n[k] }' | sort
}

# wait_closed DIR: until DIR holds two closed segments (at most 60 s: a
# wait, not a measurement)
wait_closed() {
	i=0
	until [ "$(ls "$1" 2>/dev/null | grep -v open | grep -c '^nusku-')" -ge 2 ]; do
		i=$((i + 1))
		[ $i -le 600 ] || fail "no two closed segments in 60 s: $(ls "$1")"
		sleep 0.1
	done
}

# ---- 2 s segments, 6 s kept, 15 s of cpu_hot ---------------------------------
D="$TMPD/cont"
"$NUSKU" record -q --continuous "$D" --segment 2s --keep 6s -- \
	"$WORKLOADS/cpu_hot" 15 >/dev/null 2>"$TMPD/rec.err" ||
	fail "record --continuous: $(cat "$TMPD/rec.err")"
n=$(ls "$D" | grep -c '^nusku-.*\.nsk$')
[ "$n" -ge 2 ] && [ "$n" -le 4 ] || fail "$n segments kept: $(ls "$D")"
# retention by the names: what is kept began at most 6 s before the newest
# ended (the last prune ran after that end), and the first segments are gone
python3 -c '
import calendar, os, sys, time
def t(s):
    return calendar.timegm(time.strptime(s[:15], "%Y%m%dT%H%M%S")) * 1000 + int(s[16:19])
rng = [(t(n[6:26]), t(n[27:47])) for n in os.listdir(sys.argv[1]) if n.startswith("nusku-")]
newest = max(e for _, e in rng)
old = [s for s, _ in rng if s < newest - 6000]
assert not old, old
assert newest - min(s for s, _ in rng) < 14000, rng' "$D" ||
	fail "retention: $(ls "$D")"
ls "$D" | grep -q open && fail "an open segment after a clean end: $(ls "$D")"
[ "$(ls -A "$D" | grep -vc '^nusku-')" = 0 ] || fail "other files: $(ls -A "$D")"
[ "$(stat -c %a "$D")" = 700 ] || fail "directory mode $(stat -c %a "$D")"
for f in "$D"/nusku-*.nsk; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f: mode $(stat -c %a "$f")"
	"$NUSKU" info "$f" >"$TMPD/info" 2>&1 || fail "info $f: $(cat "$TMPD/info")"
	grep -q '^ended: *cleanly' "$TMPD/info" || fail "$f: no END: $(cat "$TMPD/info")"
	grep -q '^  process ' "$TMPD/info" || fail "$f: no PROCESS record"
	grep -Eq ' cost\.(bpf_run_ns|error) ' "$TMPD/info" || fail "$f: no cost of its own"
	samples "$f" >"$TMPD/one"
	# the newest may be a moment after cpu_hot ended, and hold no sample
	[ "$f" = "$(ls "$D"/nusku-*.nsk | tail -1)" ] ||
		grep -q '^hot_a|cpu_hot	[1-9]' "$TMPD/one" || fail "$f alone: no hot_a"
done
echo "ok: $n segments kept of about 8, each readable alone with its END"

# the whole is the sum of its parts
samples "$D" >"$TMPD/whole"
sum_parts "$D"/nusku-*.nsk >"$TMPD/parts"
cmp -s "$TMPD/whole" "$TMPD/parts" ||
	fail "report DIR is not the sum of its segments: $(diff "$TMPD/whole" "$TMPD/parts")"
echo "ok: report DIR = the sum of the segments' reports ($(wc -l <"$TMPD/whole") functions)"

# --since X: the segments that end less than X before the newest's end;
# X from the names, half the time from the oldest's end to the newest's,
# so that the oldest is left out and the newest is in
python3 -c '
import calendar, os, sys, time
def t(s):
    return calendar.timegm(time.strptime(s[:15], "%Y%m%dT%H%M%S")) * 1000 + int(s[16:19])
segs = sorted(n for n in os.listdir(sys.argv[1]) if n.startswith("nusku-"))
rng = [(n, t(n[6:26]), t(n[27:47])) for n in segs]
newest = max(e for _, _, e in rng)
x = (newest - rng[0][2]) // 2
open(sys.argv[2], "w").write("%dms" % x)
for n, s, e in rng:
    if e > newest - x:
        print(sys.argv[1] + "/" + n)' "$D" "$TMPD/x" >"$TMPD/want"
X=$(cat "$TMPD/x")
[ -s "$TMPD/want" ] || fail "no segment ends in the last $X?"
[ "$(wc -l <"$TMPD/want")" -lt "$n" ] || fail "--since $X would take every segment"
"$NUSKU" info "$D@-$X.." --format json >"$TMPD/sel.json" || fail "info DIR@-$X.."
python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["segments"]:
    print(sys.argv[2] + "/" + s["name"])' "$TMPD/sel.json" "$D" >"$TMPD/got"
cmp -s "$TMPD/want" "$TMPD/got" || fail "DIR@-$X.. took $(cat "$TMPD/got"), not $(cat "$TMPD/want")"
samples "$D" --since "$X" >"$TMPD/since"
sum_parts $(cat "$TMPD/want") >"$TMPD/since_parts"
cmp -s "$TMPD/since" "$TMPD/since_parts" ||
	fail "report --since $X is not its segments: $(diff "$TMPD/since" "$TMPD/since_parts")"
samples "$D@-$X.." >"$TMPD/since_at"
cmp -s "$TMPD/since" "$TMPD/since_at" || fail "--since $X and DIR@-$X.. differ"
echo "ok: --since $X reads the $(wc -l <"$TMPD/want") of $n segments that end in the last $X"

# two ranges compared
"$NUSKU" diff "$D@..-$X" "$D@-$X.." >"$TMPD/diff" 2>"$TMPD/diff.err" ||
	fail "diff of two ranges: $(cat "$TMPD/diff.err")"
grep -q hot_a "$TMPD/diff" || fail "diff: no hot_a: $(cat "$TMPD/diff")"
echo "ok: diff DIR@..-$X DIR@-$X.."

# bad input: one line, non-zero
mkdir -m 700 "$TMPD/empty"
for args in "report $TMPD/empty" "info $TMPD/empty" \
	    "report $D --since 100s --until 90s" "report $TMPD/nothere@-1m.." \
	    "report $D --since yesterday" "info $D/nusku-x.nsk@1s.."; do
	# shellcheck disable=SC2086
	"$NUSKU" $args >/dev/null 2>"$TMPD/bad.err" && fail "$args: exit 0"
	[ "$(wc -l <"$TMPD/bad.err")" = 1 ] || fail "$args: $(cat "$TMPD/bad.err")"
done
echo "ok: bad directories and ranges refused in one line"

# a directory that is a symbolic link, or that others can write: refused,
# nothing made in it
mkdir -m 700 "$TMPD/real"
ln -s "$TMPD/real" "$TMPD/link"
mkdir "$TMPD/shared"
chmod 777 "$TMPD/shared"
for d in "$TMPD/link" "$TMPD/shared"; do
	"$NUSKU" record -q --continuous "$d" -- true >/dev/null 2>"$TMPD/bad.err" &&
		fail "record --continuous $d: exit 0"
	[ "$(wc -l <"$TMPD/bad.err")" = 1 ] || fail "$d: $(cat "$TMPD/bad.err")"
done
made=$(find "$TMPD/real" "$TMPD/shared" -mindepth 1)
[ -z "$made" ] || fail "files made: $made"
echo "ok: a linked or shared directory refused: $(cat "$TMPD/bad.err")"

# ---- two recorder runs into one directory --------------------------------------
# each run numbers its frames, stacks and strings from 1: read as one
# recording, each run's samples keep their own functions (the sum of the
# per-segment reports), and the recording says how many runs it holds
[ -x "$WORKLOADS/cpu_split" ] || fail "cpu_split not built"
D4="$TMPD/runs"
"$NUSKU" record -q --continuous "$D4" --segment 1s -e cpu -F 199 -- \
	"$WORKLOADS/cpu_hot" 2 >/dev/null 2>"$TMPD/rec.err" ||
	fail "first run: $(cat "$TMPD/rec.err")"
"$NUSKU" record -q --continuous "$D4" --segment 1s -e cpu -F 199 -- \
	"$WORKLOADS/cpu_split" 30 2 >/dev/null 2>"$TMPD/rec.err" ||
	fail "second run: $(cat "$TMPD/rec.err")"
samples "$D4" >"$TMPD/whole"
sum_parts "$D4"/nusku-*.nsk >"$TMPD/parts"
cmp -s "$TMPD/whole" "$TMPD/parts" ||
	fail "two runs: report DIR is not the sum of its segments: $(diff "$TMPD/whole" "$TMPD/parts")"
grep -q '^hot_a|cpu_hot	[1-9]' "$TMPD/whole" || fail "two runs: no hot_a of the first"
grep -q '^steady_a|cpu_split	[1-9]' "$TMPD/whole" || fail "two runs: no steady_a of the second"
runs=$("$NUSKU" report "$D4" -f csv --sql "SELECT value FROM recording WHERE \
	key = 'recorder_runs'" | tail -n 1)
[ "$runs" = 2 ] || fail "recorder_runs: $runs"
echo "ok: two recorder runs in one directory read as one recording ($(wc -l <"$TMPD/whole") functions)"

# ---- as a session -----------------------------------------------------------
D2="$TMPD/sess"
"$NUSKU" record --continuous "$D2" --segment 3s --background --name cont -e cpu \
	-F 199 -- "$WORKLOADS/cpu_hot" 120 >"$TMPD/start.out" 2>"$TMPD/start.err" ||
	fail "record --continuous --background: $(cat "$TMPD/start.err")"
[ "$(cut -f2 "$TMPD/start.out")" = "$D2" ] || fail "started: $(cat "$TMPD/start.out")"
"$NUSKU" sessions --format json >"$TMPD/s.json" || fail "sessions"
python3 -c '
import json, sys
r = [r for r in json.load(open(sys.argv[1])) if r["name"] == "cont"]
assert r and r[0]["state"] == "running" and r[0]["file"] == sys.argv[2], r' \
	"$TMPD/s.json" "$D2" || fail "sessions: $(cat "$TMPD/s.json")"
wait_closed "$D2"
# (a few snapshots: the newest segment may have just begun, and its first
# chunk comes when the recorder's loop next runs)
"$NUSKU" live cont --snapshot -n 6 >"$TMPD/live" 2>&1 || fail "live cont: $(cat "$TMPD/live")"
grep -q hot_a "$TMPD/live" || fail "live cont: no hot_a: $(cat "$TMPD/live")"
# 5 snapshots a second apart cross a 3 s segment's end: live follows on
"$NUSKU" live "$D2" --snapshot -n 5 >"$TMPD/live" 2>&1 || fail "live DIR: $(cat "$TMPD/live")"
segs=$(sed -n 's/^== .* \(nusku-[0-9TZ.]*-\).*/\1/p' "$TMPD/live" | sort -u | wc -l)
[ "$segs" -ge 2 ] || fail "live DIR stayed in one segment: $(grep '^==' "$TMPD/live")"
grep '^==' "$TMPD/live" | tail -1 | grep -q '\[live\]' || fail "live DIR ended: $(grep '^==' "$TMPD/live")"
"$NUSKU" stop cont >"$TMPD/stop" 2>&1 || fail "stop cont: $(cat "$TMPD/stop")"
ls "$D2" | grep -q open && fail "stop left an open segment: $(ls "$D2")"
for f in "$D2"/nusku-*.nsk; do
	"$NUSKU" info "$f" 2>/dev/null | grep -q '^ended: *cleanly' || fail "$f: no END after stop"
done
echo "ok: sessions lists it, live NAME shows hot_a, live DIR follows into the next segment, stop closes every segment"

# ---- SIGKILL ----------------------------------------------------------------
D3="$TMPD/killed"
"$NUSKU" record -q --continuous "$D3" --segment 1s -e cpu -F 199 -- \
	"$WORKLOADS/cpu_hot" 120 >/dev/null 2>&1 &
rec=$!
orphans="$rec"
wait_closed "$D3"
child=$(pgrep -P "$rec")
orphans="$rec $child"
kill -9 "$rec"
wait "$rec" 2>/dev/null
kill -9 $child 2>/dev/null
closed=0
for f in "$D3"/nusku-*.nsk; do
	case "$f" in *-open.nsk) continue ;; esac
	"$NUSKU" info "$f" >"$TMPD/info" 2>&1 || fail "info $f after SIGKILL"
	grep -q '^ended: *cleanly' "$TMPD/info" || fail "$f: no END after SIGKILL"
	closed=$((closed + 1))
done
[ "$closed" -ge 2 ] || fail "$closed closed segments"
samples "$D3" | grep -q '^hot_a|cpu_hot	[1-9]' || fail "report of the killed DIR: no hot_a"
echo "ok: SIGKILL left $closed closed segments with END; the directory reads back"
