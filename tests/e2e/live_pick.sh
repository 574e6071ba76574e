#!/bin/sh
# nusku live with no target, driven in tmux: the list of processes comes up
# full screen, / filters it down to a test process with a name nobody else
# has (a copy of cpu_hot), s changes the sort, Enter opens the live view of
# that process whose top function is hot_a (60% of its CPU by
# construction), q there comes back to the list, q leaves with status 0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf

command -v tmux >/dev/null || skip "tmux is not installed"
SOCK="nusku-pick-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { T kill-server 2>/dev/null; kill "$hot" 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT

cp "$WORKLOADS/cpu_hot" "$TMPD/pick_me_hot"
"$TMPD/pick_me_hot" 60 >/dev/null &
hot=$!

T new-session -d -x 110 -y 30 -s pick \
	"TERM=xterm-256color '$NUSKU' live; echo exited \$? > '$TMPD/exit'; sleep 60" ||
	skip "tmux cannot start a session here"

# Waits until the pane shows $1 (a grep -E pattern), about 10 s at most.
wait_screen() {
	for i in $(seq 100); do
		T capture-pane -p -t pick >"$TMPD/screen" 2>/dev/null
		grep -Eq "$1" "$TMPD/screen" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2; cat "$TMPD/screen" >&2
	return 1
}

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
T send-keys -t pick q
for i in $(seq 50); do [ -s "$TMPD/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMPD/exit" 2>/dev/null)" = "exited 0" ] || fail "q did not leave with 0: $(cat "$TMPD/exit" 2>/dev/null)"
echo "live_pick: ok"
