#!/bin/sh
# nusku ps --ssh against an sshd this test starts on 127.0.0.1
# (tests/e2e/sshd_lib.sh):
# the remote rows of a cpu_hot started here (same pid, comm, runtime, frame
# pointers as the local rows), FILTER and --sort applied on this side, the
# remote's errors in one line (not installed: exit 127; not JSON), and
# hostile remote JSON (escape bytes in a comm) escaped before the terminal.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/sshd_lib.sh"
command -v python3 >/dev/null || skip "python3 reads the JSON here"
[ -x "$WORKLOADS/cpu_hot" ] || fail "cpu_hot not built"

test_cleanup() { [ -n "${hot:-}" ] && { kill $hot 2>/dev/null; wait $hot 2>/dev/null; }; }
start_sshd 7919
"$WORKLOADS/cpu_hot" 60 >/dev/null &
hot=$!

field() {
	python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
r = [x for x in rows if x["pid"] == int(sys.argv[2])]
v = r[0][sys.argv[3]] if r else "absent"
print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2" "$3"
}

# The real remote nusku: the same facts as here
"$NUSKU" ps --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku "$NUSKU" \
	--format json >"$TMPD/remote.json" 2>"$TMPD/err" </dev/null || fail "ps --ssh: $(cat "$TMPD/err")"
"$NUSKU" ps --format json $hot >"$TMPD/local.json" || fail "local ps"
for k in comm cmdline runtime frame_pointers debug_info can_profile user sessions; do
	[ "$(field "$TMPD/remote.json" $hot $k)" = "$(field "$TMPD/local.json" $hot $k)" ] ||
		fail "remote $k '$(field "$TMPD/remote.json" $hot $k)' != local '$(field "$TMPD/local.json" $hot $k)'"
done
[ "$(field "$TMPD/remote.json" $hot frame_pointers)" = true ] || fail "remote: cpu_hot frame pointers"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMPD/remote.json")
[ "$n" -gt 10 ] || fail "remote: only $n rows"
echo "ok: remote rows ($n) agree with local ones for cpu_hot"

# FILTER and the text table, on this side
"$NUSKU" ps --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku "$NUSKU" $hot \
	>"$TMPD/remote.txt" 2>"$TMPD/err" </dev/null || fail "ps --ssh PID: $(cat "$TMPD/err")"
[ "$(wc -l <"$TMPD/remote.txt")" = 2 ] || fail "remote filter: $(cat "$TMPD/remote.txt")"
grep -q "^ *$hot root .* native  yes yes yes .*cpu_hot 60" "$TMPD/remote.txt" ||
	fail "remote text row: $(cat "$TMPD/remote.txt")"
echo "ok: $(tail -1 "$TMPD/remote.txt")"

# Not installed there: exit 127 turned into one line
"$NUSKU" ps --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku /nonexistent/nusku \
	>/dev/null 2>"$TMPD/err" </dev/null; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'not installed' "$TMPD/err" ||
	fail "not installed: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# A remote that answers with something else
printf '#!/bin/sh\necho "<html>hello</html>"\n' >"$D/not_json"
chmod +x "$D/not_json"
"$NUSKU" ps --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku "$D/not_json" \
	>/dev/null 2>"$TMPD/err" </dev/null; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'did not answer' "$TMPD/err" ||
	fail "not JSON: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# A hostile remote: escape bytes in a comm and a cmdline, an unknown runtime
cat >"$D/evil" <<'EVIL'
#!/bin/sh
printf '%s\n' '[{"pid":7,"user":"x\u001b]0;t\u0007","comm":"c\u001b[2J","cmdline":"run \u009b31m now","cpu_pct":5,"rss_bytes":4096,"threads":1,"cgroup":null,"runtime":"\u001b[5m","frame_pointers":null,"debug_info":false,"can_profile":false,"missing":["CAP_BPF"],"sessions":[],"extra":{"a":[1,2]}}]'
EVIL
chmod +x "$D/evil"
"$NUSKU" ps --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" --remote-nusku "$D/evil" \
	>"$TMPD/evil.txt" 2>"$TMPD/err" </dev/null || fail "hostile remote: $(cat "$TMPD/err")"
! grep -q "$(printf '\033')" "$TMPD/evil.txt" || fail "an escape byte reached the terminal"
! grep -q "$(printf '\302\233')" "$TMPD/evil.txt" || fail "a C1 CSI reached the terminal"
grep -q 'unknown' "$TMPD/evil.txt" || fail "unknown runtime not named: $(cat "$TMPD/evil.txt")"
grep -q 'run \\xc2\\x9b31m now' "$TMPD/evil.txt" || fail "C1 not escaped: $(cat "$TMPD/evil.txt")"
echo "ok: hostile remote rows escaped: $(tail -1 "$TMPD/evil.txt")"
echo "ps_ssh: ok"
