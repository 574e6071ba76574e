#!/bin/sh
# Memory truth, with answers known by construction (tests/workloads/alloc_exit.c),
# every allocation recorded (--alloc-sample 1):
#  - fork: two children allocate 3000000 and 5000000 bytes and exit without
#    freeing, the parent frees all of its own: each child's bytes are live
#    at its exit, exactly, nothing is live at the end of the recording, and
#    memory-time loses them at the exits;
#  - reserve: 1 GiB mapped PROT_NONE, 8 MiB of it made writable with
#    mprotect: 8 MiB of heap, the reservation counted nowhere but in its
#    note.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

# col CSV KEYCOL KEY COLUMN: COLUMN of the row whose KEYCOL is KEY
col() {
	awk -F, -v k="$2" -v v="$3" -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col[k] == v { print $col[c]; exit }' "$1"
}

out=$TMPD/fork.nsk
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -- "$WORKLOADS/alloc_exit" fork ||
	fail "record fork exited $?"
"$NUSKU" report "$out" --by leaks --format csv >"$TMPD/leaks.csv" 2>"$TMPD/leaks.err" ||
	fail "report --by leaks: $(cat "$TMPD/leaks.err")"
no_negative "$TMPD/leaks.csv"
assert_site "$TMPD/leaks.csv" child_a_site exit_bytes 3000000
assert_site "$TMPD/leaks.csv" child_a_site exit_allocs 300
assert_site "$TMPD/leaks.csv" child_b_site exit_bytes 5000000
assert_site "$TMPD/leaks.csv" child_b_site exit_allocs 500
# one row per process: the two children are two pids, neither the parent
pa=$(site_col "$TMPD/leaks.csv" child_a_site pid)
pb=$(site_col "$TMPD/leaks.csv" child_b_site pid)
[ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != "$pb" ] || fail "children's pids: '$pa' '$pb'"
# nothing is a leak of the recording: every process ended
live=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ s += $col["live_bytes"] } END { print s + 0 }' "$TMPD/leaks.csv")
assert_near "$live" 0 0 "bytes live at the end of the recording"
[ -z "$(site_col "$TMPD/leaks.csv" parent_site pid)" ] || fail "parent_site listed: it freed all"
grep -q 'note: live at exit: 8000000 bytes' "$TMPD/leaks.err" ||
	fail "no live-at-exit note: $(cat "$TMPD/leaks.err")"

"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>/dev/null ||
	fail "report --by alloc-site"
assert_site "$TMPD/sites.csv" child_a_site live_bytes 0
assert_site "$TMPD/sites.csv" child_a_site exit_bytes 3000000
assert_site "$TMPD/sites.csv" child_a_site frees 0
assert_site "$TMPD/sites.csv" child_b_site exit_bytes 5000000
assert_site "$TMPD/sites.csv" parent_site frees 100
assert_site "$TMPD/sites.csv" parent_site exit_bytes 0

# memory-time: the exits take 8000000 bytes off live (in one interval or
# two, as the timing falls), each interval's live follows from the last,
# and nothing is live at the end
"$NUSKU" report "$out" --by memory-time --format csv >"$TMPD/time.csv" 2>/dev/null ||
	fail "report --by memory-time"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ l = $col["live_bytes"]; x = $col["exit_bytes"]; ex += x
	  if (x != 0 && x != 3000000 && x != 5000000 && x != 8000000) { print "exit " x; bad = 1 }
	  if (l != prev + $col["alloc_bytes"] - $col["freed_bytes"] - x) { print "live " l; bad = 1 }
	  prev = l }
	END { if (ex != 8000000 || prev != 0) { print "sum " ex " end " prev; bad = 1 }; exit bad }' \
	"$TMPD/time.csv" || fail "memory-time does not drop the children's bytes at their exits"
echo "ok: memory-time drops 8000000 bytes at the exits"

# batch: the sampler keeps frees in a batch for its next trap; a child
# that frees after its last allocation and leaves by _exit (no
# destructor) still has them told: nothing of freed_site live at its exit
out=$TMPD/batch.nsk
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -- "$WORKLOADS/alloc_exit" batch ||
	fail "record batch exited $?"
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/b.csv" 2>/dev/null ||
	fail "report batch"
assert_site "$TMPD/b.csv" freed_site allocs 40
assert_site "$TMPD/b.csv" freed_site frees 40
assert_site "$TMPD/b.csv" freed_site exit_bytes 0
echo "ok: frees waiting at _exit are told"

# threads: 4 threads free while the others allocate; every free is told,
# exact mode and sampled
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/th.nsk" -- "$WORKLOADS/alloc_exit" threads ||
	fail "record threads exited $?"
"$NUSKU" report "$TMPD/th.nsk" --by alloc-site --format csv >"$TMPD/th.csv" 2>/dev/null ||
	fail "report threads"
assert_site "$TMPD/th.csv" thread_site allocs 8000
assert_site "$TMPD/th.csv" thread_site frees 8000
assert_site "$TMPD/th.csv" thread_site live_bytes 0
assert_site "$TMPD/th.csv" thread_site exit_bytes 0
"$NUSKU" record -q -e alloc --alloc-sample 4k -o "$TMPD/ths.nsk" -- "$WORKLOADS/alloc_exit" threads ||
	fail "record threads sampled exited $?"
"$NUSKU" report "$TMPD/ths.nsk" --by alloc-site --format csv >"$TMPD/ths.csv" 2>/dev/null ||
	fail "report threads sampled"
# sampled: about 200 samples of the 800,000 bytes at a 4 KiB mean (none
# at all has probability e^-195), and each was freed
v=$(site_col "$TMPD/ths.csv" thread_site allocs)
[ -n "$v" ] || fail "nothing sampled at thread_site"
assert_site "$TMPD/ths.csv" thread_site frees "$v"
assert_site "$TMPD/ths.csv" thread_site live_bytes 0
assert_site "$TMPD/ths.csv" thread_site exit_bytes 0
no_negative "$TMPD/ths.csv"
echo "ok: threads' frees all told"

# reserve: the commit is heap, the reservation is not
for how in "" --alloc-uprobes; do
	out=$TMPD/reserve.nsk
	"$NUSKU" record -q -e alloc --alloc-sample 1 $how -o "$out" -- \
		"$WORKLOADS/alloc_exit" reserve || fail "record reserve $how exited $?"
	"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/r.csv" 2>"$TMPD/r.err" ||
		fail "report reserve: $(cat "$TMPD/r.err")"
	# (under uprobes the sites of a process this short may go unnamed:
	# its maps are read after the fact; the bytes are what counts here)
	if [ -z "$how" ]; then
		assert_site "$TMPD/r.csv" commit_site bytes 8388608
		assert_site "$TMPD/r.csv" commit_site exit_bytes 8388608
	fi
	[ -z "$(site_col "$TMPD/r.csv" reserve_site bytes)" ] ||
		fail "the PROT_NONE reservation counted as heap"
	heap=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ s += $col["exit_bytes"] + $col["live_bytes"] } END { print s + 0 }' "$TMPD/r.csv")
	# the loader's own few mappings aside, no more than the commit
	assert_near "$heap" 8388608 1048576 "heap of the reserve program ${how:-(sampler)}"
	grep -q 'note: reserved address space, not heap: 1073741824 bytes' "$TMPD/r.err" ||
		fail "no reservation note: $(cat "$TMPD/r.err")"
	"$NUSKU" report "$out" --by leaks --format csv 2>/dev/null >"$TMPD/rl.csv" || fail "leaks"
	[ -z "$(site_col "$TMPD/rl.csv" reserve_site pid)" ] || fail "the reservation is a leak"
done
echo "alloc_exit: ok"
