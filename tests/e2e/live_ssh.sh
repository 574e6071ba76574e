#!/bin/sh
# nusku live --ssh against an sshd this test starts on 127.0.0.1
# (tests/e2e/sshd_lib.sh).  The transport is
# checked with a stand-in recorder (a script that streams
# tests/live/live_gen), the remote errors (not installed: exit 127; the
# recorder's own error), -o keeping the bytes, and, where BPF can run, a
# real remote `nusku record` of tests/workloads/cpu_hot.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/live_lib.sh"

. "$TOP_SRCDIR/tests/e2e/sshd_lib.sh"
GEN=$(dirname "$NUSKU")/tests/live/live_gen
[ -x "$GEN" ] || fail "live_gen not built"
start_sshd 0

# A stand-in for the remote nusku: `record -o - ...` streams live_gen.
cat >"$D/fake_nusku" <<FAKE
#!/bin/sh
[ "\$1" = record ] && [ "\$2" = -o ] && [ "\$3" = - ] || { echo "fake_nusku: bad arguments: \$*" >&2; exit 2; }
exec "$GEN" - 1.5
FAKE
chmod +x "$D/fake_nusku"

"$NUSKU" live --snapshot --interval 0.5 --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" \
	--remote-nusku "$D/fake_nusku" -o "$TMPD/kept.nsk" -- /bin/true 'with space' >"$TMPD/out" 2>"$TMPD/err" ||
	fail "live over ssh failed: $(cat "$TMPD/err")"
last=$(grep '^== nusku live' "$TMPD/out" | tail -1)
echo "$last" | grep -q 'ssh root@127.0.0.1' || fail "source not named: $last"
echo "$last" | grep -q '\[ended\]' || fail "remote stream did not end cleanly: $last"
echo "$last" | grep -q 'lost 7' || fail "lost events not shown: $last"
[ "$(live_top_function "$TMPD/out")" = gen_hot_a ] || fail "top function over ssh is not gen_hot_a"
"$NUSKU" live --snapshot "$TMPD/kept.nsk" | grep '^== nusku live' | tail -1 | grep -q '\[ended\]' ||
	fail "the recording kept with -o does not read back whole"
echo "ok: remote stream shown and kept: $last"

# Not installed there: exit 127, one line, non-zero.
"$NUSKU" live --snapshot --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" \
	--remote-nusku /nonexistent/nusku -- /bin/true >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] || fail "remote not installed: exit $st"
[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "remote not installed: not one line: $(cat "$TMPD/err")"
grep -q 'not installed' "$TMPD/err" || fail "remote not installed: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# The remote recorder's own error, passed on as one line.
printf '#!/bin/sh\necho "nusku: record: permission denied (needs root)" >&2\nexit 1\n' >"$D/failing_nusku"
chmod +x "$D/failing_nusku"
"$NUSKU" live --snapshot --ssh root@127.0.0.1 --ssh-opt "$SSHOPT" \
	--remote-nusku "$D/failing_nusku" -p 1 >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] || fail "remote error: exit $st: $(cat "$TMPD/err")"
grep -q 'permission denied' "$TMPD/err" || fail "remote error not passed on: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# ssh itself failing (nothing listens on the port): ssh's own message.
"$NUSKU" live --snapshot --ssh root@127.0.0.1 --ssh-opt "-p 1 -o ConnectTimeout=3" -p 1 >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q 'ssh root@127.0.0.1 failed' "$TMPD/err" || fail "ssh failure: exit $st: $(cat "$TMPD/err")"
echo "ok: $(cat "$TMPD/err")"

# The real thing, where BPF can run and record is there.
if [ -r /sys/kernel/btf/vmlinux ] && [ -x "$WORKLOADS/cpu_hot" ] &&
	! "$NUSKU" record --help 2>&1 | grep -q 'not implemented'; then
	"$NUSKU" live --snapshot --interval 1 --view cpu -e cpu --ssh root@127.0.0.1 \
		--ssh-opt "$SSHOPT" --remote-nusku "$NUSKU" -- "$WORKLOADS/cpu_hot" 3 >"$TMPD/real" 2>"$TMPD/err" ||
		fail "live --ssh of cpu_hot failed: $(cat "$TMPD/err")"
	top=$(live_first_top_function "$TMPD/real")
	[ "$top" = hot_a ] || fail "top function over ssh is '$top', not hot_a: $(cat "$TMPD/real")"
	echo "ok: real remote recording shows hot_a on top"
else
	echo "note: no real remote recording (record or BPF not available)"
fi
echo "live_ssh: ok"
