#!/bin/sh
# Background sessions (issue 16 item 3): record --background of cpu_hot
# returns once its probes are in; sessions lists it (JSON fields), ps names
# it on the target's row, live NAME --snapshot shows hot_a and leaves it
# running, a second session of the same name is refused, stop ends it and
# the file reads back whole with END; a session whose target exits ends by
# itself; kill -9 of a recorder makes its session crashed, and its file
# still reads back; the state directory is 0700, its files 0600, and a
# directory open to others or a symbolic link is refused.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 reads the JSON here"
[ -x "$WORKLOADS/cpu_hot" ] || fail "cpu_hot not built"

# A runtime directory of this test's own, so other sessions do not show.
export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
SD="$XDG_RUNTIME_DIR/nusku"
orphans=""
cleanup() {
	for p in $orphans; do kill -9 "$p" 2>/dev/null; done
	for s in hot crash; do "$NUSKU" stop --timeout 20 $s >/dev/null 2>&1; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
cd "$TMPD" || fail "cd $TMPD"

# field NAME KEY: a session's field in nusku sessions --format json
field() {
	"$NUSKU" sessions --format json >"$TMPD/s.json" || fail "sessions --format json"
	python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["name"] == sys.argv[2]]
v = rows[0][sys.argv[3]] if rows else "absent"
print(json.dumps(v) if not isinstance(v, str) else v)' "$TMPD/s.json" "$1" "$2"
}

# wait_state NAME STATE: at most 60 s
wait_state() {
	i=0
	until [ "$(field "$1" state)" = "$2" ]; do
		i=$((i + 1))
		[ $i -le 600 ] || fail "$1 is $(field "$1" state), not $2, after 60 s"
		sleep 0.1
	done
}

# ---- start one --------------------------------------------------------------
"$NUSKU" record --background --name hot -e cpu -F 499 -- "$WORKLOADS/cpu_hot" 120 \
	>"$TMPD/start.out" 2>"$TMPD/start.err" || fail "record --background: $(cat "$TMPD/start.err")"
[ "$(cut -f1 "$TMPD/start.out")" = hot ] || fail "started: $(cat "$TMPD/start.out")"
[ "$(cut -f2 "$TMPD/start.out")" = "$TMPD/hot.nsk" ] || fail "file: $(cat "$TMPD/start.out")"
echo "ok: started $(cat "$TMPD/start.out")"

# The parent has returned: the session is running, the state is complete.
[ "$(field hot state)" = running ] || fail "state $(field hot state)"
[ "$(field hot file)" = "$TMPD/hot.nsk" ] || fail "file $(field hot file)"
[ "$(field hot signals)" = cpu ] || fail "signals $(field hot signals)"
tp=$(field hot target_pid)
orphans="$tp"
[ "$(cat /proc/$tp/comm)" = cpu_hot ] || fail "target_pid $tp is $(cat /proc/$tp/comm)"
rp=$(field hot pid)
[ "$rp" != "$tp" ] && [ -d /proc/$rp ] || fail "recorder pid $rp"
# detached: a session of its own (not ours), no terminal, not our child
[ "$(ps -o sid= -p $rp | tr -d ' ')" != "$(ps -o sid= -p $$ | tr -d ' ')" ] ||
	fail "recorder $rp is in our session"
[ "$(ps -o tty= -p $rp | tr -d ' ')" = "?" ] || fail "recorder $rp has a terminal"
[ "$(ps -o ppid= -p $rp | tr -d ' ')" != "$$" ] || fail "recorder is our child"
case "$(field hot target)" in *cpu_hot\ 120) ;; *) fail "target $(field hot target)" ;; esac
for k in size_bytes duration_s events lost cost_pct started; do
	v=$(field hot $k)
	python3 -c 'import sys; v = float(sys.argv[1]); sys.exit(0 if v >= 0 else 1)' "$v" 2>/dev/null ||
		fail "$k is '$v'"
done
echo "ok: sessions lists hot: running, pid $rp, target $tp, $(field hot size_bytes) bytes"

# The state directory and its files are this user's only.
[ "$(stat -c %a "$SD")" = 700 ] || fail "session directory mode $(stat -c %a "$SD")"
for f in "$SD"/hot.*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f mode $(stat -c %a "$f")"
done
[ "$(stat -c %a "$TMPD/hot.nsk")" = 600 ] || fail "recording mode $(stat -c %a "$TMPD/hot.nsk")"
echo "ok: $SD 0700, its files 0600"

# A second session of a running name is refused, in one line.
"$NUSKU" record --background --name hot -- "$WORKLOADS/cpu_hot" 5 >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'a session named hot is running' "$TMPD/err" ||
	fail "same name: exit $st: $(cat "$TMPD/err")"
[ "$(field hot pid)" = "$rp" ] || fail "the refused start changed hot's state"
echo "ok: $(cat "$TMPD/err")"

# ps names the session on its target's row.
"$NUSKU" ps --format json $tp >"$TMPD/ps.json" || fail "ps"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r and r[0]["sessions"] == ["hot"] else 1)' "$TMPD/ps.json" ||
	fail "ps sessions: $(cat "$TMPD/ps.json")"
echo "ok: ps lists hot on pid $tp"

# ... and on the rows of the target's children, which it records too.
"$NUSKU" record --background --name kids -e cpu -F 99 -- sh -c "'$WORKLOADS/cpu_hot' 120; true" \
	>/dev/null 2>"$TMPD/err" || fail "kids: $(cat "$TMPD/err")"
kp=$(field kids target_pid)
i=0
until kid=$(pgrep -P "$kp" -x cpu_hot); do
	i=$((i + 1))
	[ $i -le 300 ] || fail "kids: no cpu_hot child of $kp after 30 s"
	sleep 0.1
done
orphans="$orphans $kid $kp"
"$NUSKU" ps --format json "$kid" >"$TMPD/ps.json" || fail "ps of the child"
python3 -c '
import json, sys
r = [p for p in json.load(open(sys.argv[1])) if p["pid"] == int(sys.argv[2])]
sys.exit(0 if r and r[0]["sessions"] == ["kids"] else 1)' "$TMPD/ps.json" "$kid" ||
	fail "ps sessions of the child $kid: $(cat "$TMPD/ps.json")"
"$NUSKU" stop kids >/dev/null 2>"$TMPD/err" || fail "stop kids: $(cat "$TMPD/err")"
echo "ok: ps lists kids on its target's child $kid"

# live NAME: the running session's file, followed; leaving it leaves the
# session running.
"$NUSKU" live hot --snapshot -n 4 -i 1 --view cpu >"$TMPD/live.out" 2>"$TMPD/live.err" ||
	fail "live hot: $(cat "$TMPD/live.err")"
top=$(live_first_top_function "$TMPD/live.out")
[ "$top" = hot_a ] || fail "live hot: top function '$top': $(cat "$TMPD/live.out")"
grep -q '\[live\]' "$TMPD/live.out" || fail "live hot: not followed live: $(live_last_status "$TMPD/live.out")"
[ "$(field hot state)" = running ] || fail "after live: $(field hot state)"
echo "ok: live hot shows hot_a, and hot still runs"

# ---- stop -------------------------------------------------------------------
"$NUSKU" stop hot >"$TMPD/stop.out" 2>"$TMPD/stop.err" || fail "stop: $(cat "$TMPD/stop.err")"
grep -q "^stopped hot: $TMPD/hot.nsk" "$TMPD/stop.out" || fail "stop said: $(cat "$TMPD/stop.out")"
[ "$(field hot state)" = ended ] || fail "after stop: $(field hot state)"
[ "$(field hot file_complete)" = true ] || fail "after stop: not complete"
# its lock goes as it exits; the process itself is gone just after
i=0
while kill -0 $rp 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 300 ] || fail "recorder $rp still runs 30 s after stop"
	sleep 0.1
done
dump "$TMPD/hot.nsk" "$TMPD/hot.txt"
n=$(grep -c '^sample ' "$TMPD/hot.txt")
# the recorder's last figures are END's own
[ "$(field hot events)" = "$(awk '$1 == "end" { print $2 }' "$TMPD/hot.txt")" ] ||
	fail "events $(field hot events), END: $(grep '^end' "$TMPD/hot.txt")"
[ "$(field hot lost)" = "$(awk '$1 == "end" { print $3 }' "$TMPD/hot.txt")" ] ||
	fail "lost $(field hot lost), END: $(grep '^end' "$TMPD/hot.txt")"
[ "$(self_share "$TMPD/hot.txt" hot_a | cut -d. -f1)" -ge 40 ] || fail "hot_a share $(self_share "$TMPD/hot.txt" hot_a)"
echo "ok: $(cat "$TMPD/stop.out"); the file reads back whole ($n samples, END)"

# Unknown names and ended ones.
"$NUSKU" stop nosuch >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'no session named nosuch' "$TMPD/err" ||
	fail "stop nosuch: exit $st: $(cat "$TMPD/err")"
"$NUSKU" stop hot >"$TMPD/out" 2>&1 || fail "stop of an ended session: $(cat "$TMPD/out")"
grep -q 'already ended' "$TMPD/out" || fail "stop of an ended session: $(cat "$TMPD/out")"
"$NUSKU" live nosuch --snapshot -n 1 >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 2 ] && grep -q 'no such file or session' "$TMPD/err" || fail "live nosuch: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# ---- a target that exits ends its session -----------------------------------
"$NUSKU" record --background -e cpu -- "$WORKLOADS/cpu_hot" 1 >"$TMPD/short.out" 2>"$TMPD/err" ||
	fail "short: $(cat "$TMPD/err")"
short=$(cut -f1 "$TMPD/short.out")
[ "$short" = cpu_hot-1 ] || fail "default name '$short'"
wait_state "$short" ended
[ "$(field "$short" exit_status)" = 0 ] || fail "$short exit status $(field "$short" exit_status)"
dump "$(cut -f2 "$TMPD/short.out")" "$TMPD/short.txt"
echo "ok: $short ended by itself with its target"

# ---- a crash ----------------------------------------------------------------
"$NUSKU" record --background --name crash -e cpu -- "$WORKLOADS/cpu_hot" 120 >/dev/null 2>"$TMPD/err" ||
	fail "crash: $(cat "$TMPD/err")"
cp=$(field crash pid)
ct=$(field crash target_pid)
orphans="$orphans $ct"
# killed once its file holds samples of hot_a (whole chunks on disk)
i=0
until "$NSK_DUMP" "$TMPD/crash.nsk" 2>/dev/null | grep -q '^sample .*hot_a'; do
	i=$((i + 1))
	[ $i -le 1800 ] || fail "no hot_a sample in crash.nsk after 180 s"
	sleep 0.1
done
kill -9 "$cp"
wait_state crash crashed
[ "$(field crash file_complete)" = false ] || fail "crashed: file_complete"
[ "$(field crash figures)" = file ] || fail "crashed: figures from $(field crash figures)"
[ "$(field crash events)" -gt 0 ] || fail "crashed: no events read back"
"$NUSKU" info "$TMPD/crash.nsk" >"$TMPD/info.out" 2>&1 || fail "info of the crashed file: $(cat "$TMPD/info.out")"
grep -q 'no END record' "$TMPD/info.out" || fail "info: $(grep ended "$TMPD/info.out")"
"$NUSKU" report "$TMPD/crash.nsk" >"$TMPD/crash.rep" 2>&1 || fail "report of the crashed file: $(cat "$TMPD/crash.rep")"
grep -q ' hot_a ' "$TMPD/crash.rep" || fail "report of the crashed file: no hot_a"
"$NUSKU" sessions >"$TMPD/text" || fail "sessions (text)"
grep -q '^crash  *crashed ' "$TMPD/text" || fail "text: $(cat "$TMPD/text")"
# the rows fit 80 columns; the file under each is whole, however long
awk '!/^  / && length > 80 { exit 1 }' "$TMPD/text" || fail "sessions rows wider than 80 columns"
"$NUSKU" stop crash >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q 'has crashed' "$TMPD/err" || fail "stop crashed: exit $st: $(cat "$TMPD/err")"
kill -9 "$ct" 2>/dev/null
echo "ok: kill -9 of the recorder: crash is crashed, $(field crash events) records read back"

# --clean forgets ended and crashed sessions, not their files.
"$NUSKU" sessions --clean --format json >"$TMPD/clean.json" || fail "sessions --clean"
[ "$(cat "$TMPD/clean.json")" = "[]" ] || fail "after --clean: $(cat "$TMPD/clean.json")"
[ -f "$TMPD/crash.nsk" ] && [ -f "$TMPD/hot.nsk" ] || fail "--clean removed a recording"
echo "ok: --clean"

# ---- the directory must be private ------------------------------------------
chmod 755 "$SD"
"$NUSKU" sessions >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q 'open to others' "$TMPD/err" || fail "0755 directory: exit $st: $(cat "$TMPD/err")"
"$NUSKU" record --background -- "$WORKLOADS/cpu_hot" 1 >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q 'open to others' "$TMPD/err" || fail "0755 directory, record: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"
rm -rf "$SD"
mkdir -m 700 "$TMPD/elsewhere"
ln -s "$TMPD/elsewhere" "$SD"
"$NUSKU" sessions >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q 'not a directory' "$TMPD/err" || fail "symlink: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"
echo "sessions: ok"
