#!/bin/sh
# The syscall signal is asked for, never a default (docs/syscall.md): its
# tracepoints put every process of the machine on the slow syscall path.
#
# The proof is in the recorder's own file descriptors: while a launched
# program runs, every probe is in, and each BPF link the recorder holds
# names its program (fdinfo: prog_id, and tp_name for a raw tracepoint).
# A default recording holds no program on sys_enter or sys_exit, so no
# other process's syscall meets one; --slow-syscall without -e, and -e
# syscall, hold both, and say once what that costs.  A syscall view of a
# recording without the signal says why it is empty.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf
command -v bpftool >/dev/null || skip "bpftool not installed"

# links PID: one line per BPF link PID holds, "TP_NAME PROG_NAME" (TP_NAME
# is - for a link that is not a raw tracepoint's)
links() {
	for fd in /proc/$1/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		*bpf_link*) ;;
		*) continue ;;
		esac
		info=/proc/$1/fdinfo/${fd##*/}
		id=$(awk '$1 == "prog_id:" { print $2 }' "$info")
		tp=$(awk '$1 == "tp_name:" { print $2 }' "$info")
		pn=$(bpftool prog show id "$id" 2>/dev/null | sed -n 's/^[0-9]*: [a-z_]*  name \([^ ]*\) .*/\1/p')
		echo "${tp:--} ${pn:-?}"
	done
}

# hold NAME ARGS...: records `sh -c` writing a marker, then sleeping, with
# the recorder's ARGS; once the marker is there (every probe is in before
# the program's exec), lists the recorder's links into $TMPD/NAME.links
hold() {
	name=$1
	shift
	rm -f "$TMPD/$name.go"
	"$NUSKU" record "$@" -o "$TMPD/$name.nsk" -- \
		sh -c "echo > '$TMPD/$name.go'; sleep 2" >/dev/null 2>"$TMPD/$name.err" &
	rec=$!
	i=0
	until [ -f "$TMPD/$name.go" ]; do
		i=$((i + 1))
		[ $i -le 1800 ] || fail "$name: the program did not start in 180 s: $(cat "$TMPD/$name.err")"
		kill -0 $rec 2>/dev/null || fail "$name: record exited early: $(cat "$TMPD/$name.err")"
		sleep 0.1
	done
	links $rec >"$TMPD/$name.links"
	wait $rec || fail "$name: record exited $?: $(cat "$TMPD/$name.err")"
	[ -s "$TMPD/$name.links" ] || fail "$name: no BPF link found in the recorder"
}

on_syscalls() { grep -E '^sys_(enter|exit) |_sys_(enter|exit)$' "$1"; }

# ---- the default: nothing on the syscall path ---------------------------------
hold dflt
if on_syscalls "$TMPD/dflt.links" >"$TMPD/bad"; then
	fail "a default recording holds syscall programs: $(cat "$TMPD/bad")"
fi
grep -q '^sched_process_exec ' "$TMPD/dflt.links" ||
	fail "the link listing missed the process probes: $(cat "$TMPD/dflt.links")"
grep -q 'syscall' "$TMPD/dflt.err" && fail "the default said something of syscalls: $(cat "$TMPD/dflt.err")"
dump "$TMPD/dflt.nsk" "$TMPD/dflt.dump"
grep -q '^meta events cpu,alloc,offcpu,net$' "$TMPD/dflt.dump" ||
	fail "default events: $(grep '^meta events' "$TMPD/dflt.dump")"
echo "ok: a default recording holds no program on sys_enter or sys_exit"

# ---- asked for: by an option, by name ----------------------------------------
for how in "slow --slow-syscall 5ms" "named -e cpu,syscall"; do
	set -- $how
	name=$1
	shift
	hold "$name" "$@"
	for tp in sys_enter sys_exit; do
		grep -q "^$tp nsk_$tp\$" "$TMPD/$name.links" ||
			fail "$name: no $tp program: $(cat "$TMPD/$name.links")"
	done
	[ "$(grep -c "syscall tracepoints are machine-wide" "$TMPD/$name.err")" = 1 ] ||
		fail "$name: the cost was not said once: $(cat "$TMPD/$name.err")"
	echo "ok: $* records syscalls and says what that costs"
done
dump "$TMPD/slow.nsk" "$TMPD/slow.dump"
grep -q '^meta events cpu,alloc,offcpu,syscall,net$' "$TMPD/slow.dump" ||
	fail "--slow-syscall events: $(grep '^meta events' "$TMPD/slow.dump")"

# ---- a syscall view says why it is empty ------------------------------------
"$NUSKU" report "$TMPD/dflt.nsk" --by syscall >"$TMPD/r.txt" 2>&1 || fail "report --by syscall exited $?"
grep -q '^# no syscall signal in this recording: record it with -e syscall' "$TMPD/r.txt" ||
	fail "no note in --by syscall: $(cat "$TMPD/r.txt")"
"$NUSKU" report "$TMPD/dflt.nsk" --by syscall-slow --format json >"$TMPD/r.json" 2>&1 ||
	fail "report --by syscall-slow --format json exited $?"
grep -q '"notes": \["no syscall signal in this recording' "$TMPD/r.json" ||
	fail "no note in the JSON: $(cat "$TMPD/r.json")"
"$NUSKU" report "$TMPD/slow.nsk" --by syscall >"$TMPD/r2.txt" 2>&1 || fail "report of slow exited $?"
grep -q 'no syscall signal' "$TMPD/r2.txt" && fail "a note on a recording with syscalls"
"$NUSKU" report "$TMPD/dflt.nsk" --by blocking >"$TMPD/r3.txt" 2>&1 || fail "report --by blocking exited $?"
grep -q 'signal in this recording' "$TMPD/r3.txt" && fail "a note on a view of a recorded signal"
echo "ok: the syscall views of a recording without them say so"
echo "syscall_default: ok"
