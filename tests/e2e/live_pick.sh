#!/bin/sh
# nusku live with no target, driven in tmux: the list of processes comes up
# full screen, / filters it down to a test process with a name nobody else
# has (a copy of cpu_hot), s changes the sort, Enter opens the live view of
# that process whose top function is hot_a (60% of its CPU by
# construction), q there comes back to the list; r saves the process to a
# file as a background session (its name shows on the row), x stops it and
# the file reads back whole; q leaves with status 0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
need_bpf

command -v tmux >/dev/null || skip "tmux is not installed"
SOCK="nusku-pick-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
# the sessions of this test only, in the test's own directory
export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
cleanup() {
	T kill-server 2>/dev/null
	"$NUSKU" stop pick_me_hot-1 >/dev/null 2>&1
	kill "$hot" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT

cp "$WORKLOADS/cpu_hot" "$TMPD/pick_me_hot"
"$TMPD/pick_me_hot" 60 >/dev/null &
hot=$!

T new-session -d -x 110 -y 30 -s pick -c "$TMPD" \
	"XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' TERM=xterm-256color '$NUSKU' live; echo exited \$? > '$TMPD/exit'; sleep 60" ||
	skip "tmux cannot start a session here"

wait_screen() { tmux_wait pick "$1"; }

wait_screen 'pick a process' || fail "the list did not come up"
wait_screen 'PID USER' || fail "no column header"
[ "$(wc -L <"$TMPD/screen")" -le 110 ] || fail "wider than the pane"
T send-keys -t pick / pick_me Enter
wait_screen 'filter: pick_me +1 of' || fail "the filter did not narrow the list to one process"
grep -q "^ *$hot .*pick_me_hot" "$TMPD/screen" || fail "the test process is not the row"
T send-keys -t pick s
wait_screen 'sort: rss' || fail "s did not change the sort"
echo "ok: the list, filtered to pid $hot, sorted"

T send-keys -t pick Enter
wait_screen "record -p $hot" || fail "Enter did not open the live view of pid $hot"
wait_screen 'hot_a' || fail "the live view does not show the hot function"
echo "ok: the live view of the picked process shows $(grep -m1 hot_a "$TMPD/screen")"

T send-keys -t pick q
wait_screen 'pick a process' || fail "q in the live view did not come back to the list"
wait_screen 'filter: pick_me' || fail "the filter was not kept"
T send-keys -t pick r
wait_screen 'saving pid [0-9]+ as session pick_me_hot-1' || fail "r did not start a background session"
wait_screen '\[pick_me_hot-1\] .*pick_me_hot' || fail "the row does not show its session"
"$NUSKU" sessions --format json >"$TMPD/s.json" || fail "nusku sessions"
grep -q '"name": *"pick_me_hot-1"' "$TMPD/s.json" || fail "sessions does not list it: $(cat "$TMPD/s.json")"
sleep 1
T send-keys -t pick x
wait_screen 'session pick_me_hot-1 stopped' || fail "x did not stop the session"
[ -s "$TMPD/pick_me_hot-1.nsk" ] || fail "no file pick_me_hot-1.nsk"
"$NUSKU" info "$TMPD/pick_me_hot-1.nsk" >"$TMPD/info" || fail "the saved file does not read back"
grep -q 'ended: *cleanly' "$TMPD/info" || fail "the saved file did not end cleanly: $(cat "$TMPD/info")"
"$NUSKU" report "$TMPD/pick_me_hot-1.nsk" 2>/dev/null | grep -q hot_a || fail "the saved file has no hot_a"
echo "ok: r saved the picked process to a file, x stopped it, the file reads back"

T send-keys -t pick q
for i in $(seq 300); do [ -s "$TMPD/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMPD/exit" 2>/dev/null)" = "exited 0" ] || fail "q did not leave with 0: $(cat "$TMPD/exit" 2>/dev/null)"
echo "live_pick: ok"
