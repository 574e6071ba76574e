#!/bin/sh
# Children are followed: a forked child and an exec'd child each have their
# own function attributed to their own pid, with address spaces from the
# kernel's mapping records and from /proc; --no-inherit records the parent
# only; the program's exit status (3) passes through.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

# follow ENV SOURCE: the recording of forker, address spaces from SOURCE
# (the kernel's mapping records, or /proc when the kernel gives none)
follow() {
	out=$TMPD/run.nsk
	env $1 "$NUSKU" record -q -e cpu -o "$out" -- "$WORKLOADS/forker" 1 > "$TMPD/stdout"
	st=$?
	[ $st = 3 ] || fail "record exited $st, expected forker's 3"
	dump "$out" "$TMPD/dump"
	grep -q "^meta proc.maps $2" "$TMPD/dump" || fail "maps not from $2: $(grep "^meta proc.maps" "$TMPD/dump")"
	set -- $(sed -n 's/^forker: parent \([0-9]*\), child \([0-9]*\), exec child \([0-9]*\)$/\1 \2 \3/p' "$TMPD/stdout")
	parent=$1 child=$2 execd=$3
	[ -n "$execd" ] || fail "forker printed no pids"

	grep -q "^process $child $parent 3 " "$TMPD/dump" || fail "no PROCESS (forked) for $child"
	grep -q "^process $execd [0-9]* 4 forker" "$TMPD/dump" || fail "no PROCESS (exec) for $execd"
	# each function's samples belong to its own process, and make most of it
	# (the rest: exec, the dynamic loader, waiting)
	assert_near "$(pid_share "$TMPD/dump" parent_work "$parent")" 100 0 "parent_work samples in the parent"
	assert_near "$(pid_share "$TMPD/dump" child_work "$child")" 100 0 "child_work samples in the forked child"
	assert_near "$(pid_share "$TMPD/dump" exec_child_work "$execd")" 100 0 "exec_child_work samples in the exec'd child"
	assert_near "$(self_share "$TMPD/dump" parent_work "$parent")" 100 15 "parent_work share of the parent"
	assert_near "$(self_share "$TMPD/dump" child_work "$child")" 100 15 "child_work share of the forked child"
	assert_near "$(self_share "$TMPD/dump" exec_child_work "$execd")" 100 15 "exec_child_work share of the exec'd child"
}
follow X=1 kernel
follow NUSKU_NO_KERNEL_MAPS=1 proc
out=$TMPD/run.nsk
"$NUSKU" record -q -e cpu --no-inherit -o "$out" -- "$WORKLOADS/forker" 1 > "$TMPD/stdout"
[ $? = 3 ] || fail "--no-inherit: status not passed through"
dump "$out" "$TMPD/dump"
pids=$(awk '$1 == "sample" { print $2 }' "$TMPD/dump" | sort -u | wc -l)
[ "$pids" = 1 ] || fail "--no-inherit: samples of $pids processes, expected 1"
echo "record_fork: ok"
