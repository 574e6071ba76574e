#!/bin/sh
# The full-screen view, driven in tmux: it comes up at 100x30 on a file
# still being written, shows the top function of the synthetic recording
# (tests/live/live_gen: gen_hot_a has 60% of the CPU), switches views with
# 1-5 and Tab, pauses, and quits on q.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"

command -v tmux >/dev/null || skip "tmux is not installed"
GEN=$(dirname "$NUSKU")/tests/live/live_gen
[ -x "$GEN" ] || fail "live_gen not built"

SOCK="nusku-test-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { T kill-server 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT

"$GEN" "$TMPD/run.nsk" 6 2>/dev/null &
gen=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$TMPD/run.nsk" ] && break; sleep 0.1; done

T new-session -d -x 100 -y 30 -s live \
	"TERM=xterm-256color '$NUSKU' live --interval 0.3 '$TMPD/run.nsk'; echo exited \$? > '$TMPD/exit'; sleep 30" ||
	skip "tmux cannot start a session here"

wait_screen() { tmux_wait live "$1"; }

wait_screen 'nusku live' || fail "the screen did not come up"
wait_screen 'CPU: top functions' || fail "the CPU view is not first"
wait_screen 'records' || fail "no status line"
wait_screen 'gen_hot_a' || fail "the top function is not on the screen"
line=$(grep -m1 gen_hot_ "$TMPD/screen")
echo "$line" | grep -q gen_hot_a || fail "first row is not gen_hot_a: $line"
echo "ok: top function on screen: $line"
grep -q 'lost 7' "$TMPD/screen" || fail "lost events not on the screen"
grep -q 'lost: cpu.ringbuf 7' "$TMPD/screen" || fail "lost events by source not on the screen"
[ "$(wc -L <"$TMPD/screen")" -le 100 ] || fail "wider than the pane"

T send-keys -t live 2
wait_screen 'Memory: allocation sites' || fail "key 2 did not switch to the memory view"
wait_screen 'no data for this signal' || fail "a view without tables must say so"
T send-keys -t live Tab
wait_screen 'Blocking' || fail "Tab did not move to the next view"
T send-keys -t live 1
wait_screen 'CPU: top functions' || fail "key 1 did not come back to CPU"
T send-keys -t live ' '
wait_screen '\[paused\]' || fail "space did not pause"
T send-keys -t live p
wait_screen '\[live\]|\[ended' || fail "p did not resume"
echo "ok: views switch, pause works"

T send-keys -t live s
wait_screen 'sort: overall' || fail "s did not change the sort"
T send-keys -t live t
wait_screen 'thread id' || fail "t did not ask for a thread"
T send-keys -t live 4242 Enter
wait_screen 'filter: thread 4242' || fail "the thread filter is not shown"
wait_screen 'gen_hot_a' || fail "thread 4242 (the generator's) shows nothing"
T send-keys -t live t 99 Enter
wait_screen 'filter: thread 99' || fail "the second thread filter is not shown"
wait_screen 'no data for this signal' || fail "a thread without samples must show no rows"
T send-keys -t live c
for i in $(seq 30); do
	T capture-pane -p -t live >"$TMPD/screen"
	grep -q 'filter:' "$TMPD/screen" || break
	sleep 0.1
done
grep -q 'filter:' "$TMPD/screen" && fail "c did not clear the filter"
T send-keys -t live w
wait_screen 'window: 5.0s' || fail "w did not widen the window"
echo "ok: sort, window, thread filter and clear"

T send-keys -t live q
for i in $(seq 50); do [ -s "$TMPD/exit" ] && break; sleep 0.1; done
[ -s "$TMPD/exit" ] || fail "q did not quit"
grep -q 'exited 0' "$TMPD/exit" || fail "quit with $(cat "$TMPD/exit")"
kill $gen 2>/dev/null
wait $gen 2>/dev/null
echo "ok: q quits"

# A pipe on stdin: keys still come from the terminal.
rm -f "$TMPD/exit"
T new-session -d -x 80 -y 24 -s pipe \
	"'$GEN' - 5 2>/dev/null | TERM=xterm-256color '$NUSKU' live --interval 0.3 -; echo exited \$? > '$TMPD/exit'; sleep 30" ||
	fail "tmux: second session"
for i in $(seq 50); do
	T capture-pane -p -t pipe >"$TMPD/screen" 2>/dev/null
	grep -q 'gen_hot_a' "$TMPD/screen" && break
	sleep 0.1
done
grep -q 'gen_hot_a' "$TMPD/screen" || { cat "$TMPD/screen" >&2; fail "pipe: the top function is not on the screen"; }
grep -q 'stdin' "$TMPD/screen" || fail "pipe: the source is not named"
[ "$(wc -L <"$TMPD/screen")" -le 80 ] || fail "wider than 80 columns"
T send-keys -t pipe q
for i in $(seq 50); do [ -s "$TMPD/exit" ] && break; sleep 0.1; done
grep -q 'exited 0' "$TMPD/exit" 2>/dev/null || fail "pipe: q did not quit"
echo "ok: a pipe at 80x24, keys from the terminal"
echo "live_tmux: ok"
