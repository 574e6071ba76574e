#!/bin/sh
# Allocations of processes forked without an exec, by fork(2) and by a raw
# clone(2), under the sampler (preload/probes.h).
#
# The parent's probe points, hit before it forks, are calls into a
# trampoline page on kernels that optimize uprobes; a child does not
# inherit that page, and must call the trap pair instead.  A raw clone runs
# no fork handlers, and must still start its batch of frees anew.  With
# every allocation recorded, each process's own sites hold exactly N
# allocations of 1000 bytes, all freed, and one block of 7000 bytes live at
# its exit; nothing dies (the workload exits 0 only when both descendants
# did).  Then sampled: the same processes, and each has samples.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
W=$WORKLOADS/alloc_fork
N=3000

"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/x.nsk" -- "$W" $N >"$TMPD/out" 2>"$TMPD/err" ||
	fail "record exited $?: $(cat "$TMPD/err" "$TMPD/out")"
parent=$(sed -n 's/^alloc_fork: parent \([0-9]*\)$/\1/p' "$TMPD/out")
child=$(sed -n 's/^alloc_fork: child \([0-9]*\), clone.*/\1/p' "$TMPD/out")
clone=$(sed -n 's/^alloc_fork: child .*, clone \([0-9]*\)$/\1/p' "$TMPD/out")
[ -n "$parent" ] && [ -n "$child" ] && [ -n "$clone" ] || fail "no pids: $(cat "$TMPD/out")"
dump "$TMPD/x.nsk" "$TMPD/x.dump"
for who in parent:$parent:site_parent child:$child:site_child clone:$clone:site_clone; do
	name=${who%%:*} rest=${who#*:}
	pid=${rest%%:*} site=${rest#*:}
	"$NUSKU" report "$TMPD/x.nsk" --by alloc-site --pid "$pid" --format csv >"$TMPD/$name.csv" 2>/dev/null ||
		fail "report --pid $pid"
	assert_site "$TMPD/$name.csv" "$site" allocs $N
	assert_site "$TMPD/$name.csv" "$site" bytes $((N * 1000))
	assert_site "$TMPD/$name.csv" "$site" frees $N
	assert_site "$TMPD/$name.csv" site_kept exit_bytes 7000
	for other in site_parent site_child site_clone; do
		[ "$other" = "$site" ] && continue
		[ -z "$(site_col "$TMPD/$name.csv" "$other" allocs)" ] ||
			fail "$name ($pid) has allocations at $other: $(cat "$TMPD/$name.csv")"
	done
	echo "ok: $name: $N allocations at $site, all freed; 7000 bytes live at its exit"
done

"$NUSKU" record -q -e alloc --alloc-sample 64k -o "$TMPD/s.nsk" -- "$W" $N >"$TMPD/out" 2>"$TMPD/err" ||
	fail "sampled: record exited $?: $(cat "$TMPD/err" "$TMPD/out")"
"$NUSKU" report "$TMPD/s.nsk" --format csv --sql "SELECT count(DISTINCT pid) FROM alloc" \
	>"$TMPD/n.csv" 2>/dev/null || fail "sampled: report"
# 3 MB at a mean interval of 64 KiB in each: no samples in one has odds e^-46
[ "$(tail -n 1 "$TMPD/n.csv")" = 3 ] || fail "sampled: processes with samples: $(cat "$TMPD/n.csv")"
echo "alloc_fork: ok"
