#!/bin/sh
# nusku sessions, stop, live NAME and ps's sessions column over ssh, against an sshd
# this test starts on 127.0.0.1 (tests/e2e/sshd_lib.sh): a background
# session started here is listed by the remote side as it is here, named
# on its target's remote ps row, stopped over ssh (the file then ends with
# END); an unknown name is one line of error; a hostile remote's escape
# bytes never reach the terminal.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/sshd_lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 reads the JSON here"
[ -x "$WORKLOADS/cpu_hot" ] || fail "cpu_hot not built"

test_cleanup() {
	[ -n "${tp:-}" ] && kill -9 "$tp" 2>/dev/null
	"$NUSKU" stop --timeout 20 remote1 >/dev/null 2>&1
}
start_sshd 4211

# The "remote" is this machine: its nusku gets this test's own runtime
# directory (an ssh login has none of its own here).
export XDG_RUNTIME_DIR="$TMPD/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
cat >"$D/nusku" <<WRAP
#!/bin/sh
XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' exec '$NUSKU' "\$@"
WRAP
chmod +x "$D/nusku"
R="--ssh root@127.0.0.1 --remote-nusku $D/nusku"

"$NUSKU" record --background --name remote1 -e cpu -o "$TMPD/r.nsk" -- "$WORKLOADS/cpu_hot" 120 \
	>/dev/null 2>"$TMPD/err" || fail "record --background: $(cat "$TMPD/err")"

jfield() {
	python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["name"] == sys.argv[2]]
v = rows[0][sys.argv[3]] if rows else "absent"
print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2" "$3"
}

# sessions --ssh: the same session as here
"$NUSKU" sessions $R --ssh-opt "$SSHOPT" --format json >"$TMPD/remote.json" 2>"$TMPD/err" </dev/null ||
	fail "sessions --ssh: $(cat "$TMPD/err")"
"$NUSKU" sessions --format json >"$TMPD/local.json" || fail "sessions"
for k in state pid target_pid target signals file; do
	[ "$(jfield "$TMPD/remote.json" remote1 $k)" = "$(jfield "$TMPD/local.json" remote1 $k)" ] ||
		fail "remote $k '$(jfield "$TMPD/remote.json" remote1 $k)' != local '$(jfield "$TMPD/local.json" remote1 $k)'"
done
[ "$(jfield "$TMPD/remote.json" remote1 state)" = running ] || fail "remote state"
tp=$(jfield "$TMPD/local.json" remote1 target_pid)
"$NUSKU" sessions $R --ssh-opt "$SSHOPT" >"$TMPD/remote.txt" 2>"$TMPD/err" </dev/null ||
	fail "sessions --ssh (text): $(cat "$TMPD/err")"
grep -q '^remote1  *running ' "$TMPD/remote.txt" || fail "remote text: $(cat "$TMPD/remote.txt")"
echo "ok: sessions --ssh lists remote1 as here"

# ps --ssh: the sessions column of the remote rows
"$NUSKU" ps $R --ssh-opt "$SSHOPT" --format json $tp >"$TMPD/ps.json" 2>"$TMPD/err" </dev/null ||
	fail "ps --ssh: $(cat "$TMPD/err")"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r and r[0]["sessions"] == ["remote1"] else 1)' "$TMPD/ps.json" ||
	fail "ps --ssh sessions: $(cat "$TMPD/ps.json")"
echo "ok: ps --ssh names remote1 on pid $tp"

# live NAME --ssh: the remote session's file, followed there, shown here;
# leaving leaves the session running
"$NUSKU" live $R --ssh-opt "$SSHOPT" remote1 --snapshot -n 4 -i 1 --view cpu \
	>"$TMPD/live.out" 2>"$TMPD/err" </dev/null || fail "live --ssh remote1: $(cat "$TMPD/err")"
top=$(live_first_top_function "$TMPD/live.out")
[ "$top" = hot_a ] || fail "live --ssh remote1: top function '$top': $(cat "$TMPD/live.out")"
"$NUSKU" sessions --format json >"$TMPD/local.json" || fail "sessions"
[ "$(jfield "$TMPD/local.json" remote1 state)" = running ] || fail "after live --ssh: $(jfield "$TMPD/local.json" remote1 state)"
"$NUSKU" live $R --ssh-opt "$SSHOPT" nosuch --snapshot -n 1 >/dev/null 2>"$TMPD/err" </dev/null; st=$?
[ $st != 0 ] && grep -q 'no such file or session' "$TMPD/err" ||
	fail "live --ssh nosuch: exit $st: $(cat "$TMPD/err")"
echo "ok: live --ssh remote1 shows hot_a, and remote1 still runs"

# stop --ssh: an unknown name, then remote1
"$NUSKU" stop $R --ssh-opt "$SSHOPT" nosuch >/dev/null 2>"$TMPD/err" </dev/null; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'no session named nosuch' "$TMPD/err" ||
	fail "stop --ssh nosuch: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"
"$NUSKU" stop $R --ssh-opt "$SSHOPT" remote1 >"$TMPD/out" 2>"$TMPD/err" </dev/null ||
	fail "stop --ssh: $(cat "$TMPD/err")"
grep -q "^stopped remote1: $TMPD/r.nsk" "$TMPD/out" || fail "stop --ssh said: $(cat "$TMPD/out")"
"$NUSKU" sessions --format json >"$TMPD/local.json" || fail "sessions"
[ "$(jfield "$TMPD/local.json" remote1 state)" = ended ] || fail "after stop --ssh: $(jfield "$TMPD/local.json" remote1 state)"
dump "$TMPD/r.nsk" "$TMPD/r.txt"
echo "ok: $(cat "$TMPD/out")"

# Not installed there; a hostile answer
"$NUSKU" sessions --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku /nonexistent/nusku \
	>/dev/null 2>"$TMPD/err" </dev/null; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'not installed' "$TMPD/err" ||
	fail "not installed: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"
printf '#!/bin/sh\nprintf "evil\\033]0;title\\007 \\302\\233 31m\\n"\n' >"$D/evil"
chmod +x "$D/evil"
"$NUSKU" sessions --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku "$D/evil" \
	>"$TMPD/evil.txt" 2>"$TMPD/err" </dev/null || fail "hostile remote: $(cat "$TMPD/err")"
! grep -q "$(printf '\033')" "$TMPD/evil.txt" || fail "an escape byte reached the terminal"
! grep -q "$(printf '\302\233')" "$TMPD/evil.txt" || fail "a C1 CSI reached the terminal"
grep -q 'evil' "$TMPD/evil.txt" || fail "hostile answer lost: $(cat "$TMPD/evil.txt")"
echo "ok: hostile remote escaped: $(cat "$TMPD/evil.txt")"
echo "sessions_ssh: ok"
