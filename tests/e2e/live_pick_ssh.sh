#!/bin/sh
# The picker of nusku live over ssh (issue 16 item 2: "the same over
# --ssh HOST"), driven in tmux against an sshd this test starts on
# 127.0.0.1: the list is the remote host's, / filters it to a copy of
# cpu_hot with a name nobody else has, Enter opens its live view over ssh
# (top function hot_a, 60% by construction), q comes back; r starts a
# background session on the remote host (its name shows on the row), x
# stops it there and the file reads back whole; q leaves with status 0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
. "$TOP_SRCDIR/tests/e2e/sshd_lib.sh"
need_bpf
command -v tmux >/dev/null || skip "tmux is not installed"

SOCK="nusku-pick-ssh-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
test_cleanup() {
	T kill-server 2>/dev/null
	[ -n "${D:-}" ] && "$D/nusku" stop pick_me_ssh-1 >/dev/null 2>&1
	[ -n "${hot:-}" ] && kill "$hot" 2>/dev/null
}
start_sshd 5177

# The "remote" is this machine: its nusku gets this test's own runtime
# directory (an ssh login has none of its own here).
export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
cat >"$D/nusku" <<WRAP
#!/bin/sh
cd '$TMPD' && XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' exec '$NUSKU' "\$@"
WRAP
chmod +x "$D/nusku"

cp "$WORKLOADS/cpu_hot" "$TMPD/pick_me_ssh"
"$TMPD/pick_me_ssh" 600 >/dev/null &
hot=$!

T new-session -d -x 120 -y 30 -s pick -c "$TMPD" \
	"TERM=xterm-256color '$NUSKU' live --ssh root@127.0.0.1 --ssh-opt '$SSHOPT' --remote-nusku '$D/nusku'; echo exited \$? > '$TMPD/exit'; sleep 60" ||
	skip "tmux cannot start a session here"
wait_screen() { tmux_wait pick "$1"; }

wait_screen 'pick a process on root@127.0.0.1' || fail "the remote list did not come up"
T send-keys -t pick / pick_me_ssh Enter
wait_screen 'filter: pick_me_ssh +1 of' || fail "the filter did not narrow the remote list to one process"
grep -q "^ *$hot .*pick_me_ssh" "$TMPD/screen" || fail "the test process is not the row"
echo "ok: the remote list, filtered to pid $hot"

T send-keys -t pick Enter
wait_screen 'hot_a' || fail "the live view over ssh does not show the hot function"
echo "ok: the live view over ssh shows $(grep -m1 hot_a "$TMPD/screen")"
T send-keys -t pick q
wait_screen 'pick a process on root@127.0.0.1' || fail "q in the live view did not come back to the list"

T send-keys -t pick r
wait_screen 'saving pid [0-9]+ as session pick_me_ssh-1' || fail "r did not start a session on the remote host"
wait_screen '\[pick_me_ssh-1\] .*pick_me_ssh' || fail "the row does not show its session"
"$D/nusku" sessions --format json >"$TMPD/s.json" || fail "nusku sessions (remote side)"
grep -q '"name": *"pick_me_ssh-1"' "$TMPD/s.json" || fail "the remote side does not list it: $(cat "$TMPD/s.json")"
sleep 1
T send-keys -t pick x
wait_screen 'session pick_me_ssh-1 stopped' || fail "x did not stop the session over ssh"
f=$(python3 -c 'import json,sys; print([s["file"] for s in json.load(open(sys.argv[1])) if s["name"] == "pick_me_ssh-1"][0])' "$TMPD/s.json")
"$NUSKU" info "$f" >"$TMPD/info" || fail "the saved file does not read back"
grep -q 'ended: *cleanly' "$TMPD/info" || fail "the saved file did not end cleanly: $(cat "$TMPD/info")"
echo "ok: r saved the remote process to $f, x stopped it, the file reads back"

T send-keys -t pick q
for i in $(seq 300); do [ -s "$TMPD/exit" ] && break; sleep 0.1; done
echo "q: left after $i tenths of a second"
[ "$(cat "$TMPD/exit" 2>/dev/null)" = "exited 0" ] || { T capture-pane -p -t pick >&2; fail "q did not leave with 0: $(cat "$TMPD/exit" 2>/dev/null)"; }
echo "live_pick_ssh: ok"
