#!/bin/sh
# CPU sampling stays on the target: a recording of a launched program
# samples with events on the program's own threads, inherited by the
# threads and children it starts, so a process outside it never takes a
# sampling interrupt.  The BPF program counts every sample it is handed of
# a process not recorded (META cpu.elsewhere): with two bystander threads
# spinning on this machine's CPUs the whole time, a recording of `sleep`
# gets none of them (a per-CPU event would hand it ~999 a second of each).
# A child started through a shell is sampled, by inheritance, and 200
# short ones leave nothing elsewhere as they exit.  -a still samples per
# CPU.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

meta() { awk -v k="$1" '$1 == "meta" && $2 == k { print $3 }' "$2"; }

"$WORKLOADS/cpu_hot" 6 >/dev/null &
by=$!
trap 'kill $by 2>/dev/null; rm -rf "$TMPD"' EXIT

"$NUSKU" record -q -e cpu -o "$TMPD/sleep.nsk" -- sleep 1 || fail "record of sleep exited $?"
dump "$TMPD/sleep.nsk" "$TMPD/sleep"
[ "$(meta cpu.events "$TMPD/sleep")" = task ] ||
	fail "cpu.events is '$(meta cpu.events "$TMPD/sleep")', expected task"
n=$(meta cpu.elsewhere "$TMPD/sleep")
[ "$n" = 0 ] || fail "$n samples of processes outside the recording of sleep, expected 0"
n=$(awk -v p="$by" '$1 == "sample" && $2 == p' "$TMPD/sleep" | wc -l)
[ "$n" = 0 ] || fail "$n samples of the bystander $by"
echo "ok: no sample of anything but sleep beside a spinning bystander"

# a child through a shell: its samples are there, and still none elsewhere
"$NUSKU" record -q -e cpu -o "$TMPD/sh.nsk" -- sh -c "'$WORKLOADS/cpu_hot' 1 >/dev/null; :" ||
	fail "record of sh -c cpu_hot exited $?"
dump "$TMPD/sh.nsk" "$TMPD/sh"
n=$(grep -c '^sample.*hot_a' "$TMPD/sh")
[ "$n" -ge 100 ] || fail "$n samples in hot_a of the shell's child, expected >= 100 (1 s of two threads)"
n=$(meta cpu.elsewhere "$TMPD/sh")
[ "$n" = 0 ] || fail "$n samples outside the recording of sh -c cpu_hot, expected 0"
echo "ok: the shell's child sampled through the inherited events"
# 200 short children, sampled 4999 times a second: a process on its way
# out has left the target map before its events go, and that is its own
# end, not elsewhere
"$NUSKU" record -q -e cpu -F 4999 -o "$TMPD/loop.nsk" -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done' ||
	fail "record of a loop of /bin/true exited $?"
dump "$TMPD/loop.nsk" "$TMPD/loop"
n=$(meta cpu.elsewhere "$TMPD/loop")
[ "$n" = 0 ] || fail "$n samples outside the recording of 200 short children, expected 0"
echo "ok: 200 children came and went, no sample elsewhere"
kill $by 2>/dev/null

"$NUSKU" record -q -a -e cpu -d 0.3 -o "$TMPD/all.nsk" || fail "record -a exited $?"
dump "$TMPD/all.nsk" "$TMPD/all"
[ "$(meta cpu.events "$TMPD/all")" = cpu ] ||
	fail "cpu.events of -a is '$(meta cpu.events "$TMPD/all")', expected cpu"
echo "ok: -a samples per CPU"
