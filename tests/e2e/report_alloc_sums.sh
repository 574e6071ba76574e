#!/bin/sh
# The memory views without filters sum the allocations while loading and
# read the file a second time for peaks and intervals (report/load_alloc.h),
# and so does export of the alloc and live measures (sums alone);
# with a filter, --db or --sql every allocation is a row and the views
# group them in SQL.  The two ways must agree to the byte: every memory
# view, in every format, --folded and --tree, on recordings of every
# allocation (weight = size: every count a whole number) with frees,
# failed calls, mmap regions, threads, reallocs (alloc_sites), processes
# that exit holding memory and a reservation (alloc_exit).  --since 0
# selects everything and takes the row path.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"

# same FILE: every memory view and form of FILE, summed and as rows
n=0
same() {
	for v in alloc-site leaks memory-time; do
		for args in "" "--format csv" "--format json" "--folded" "--tree"; do
			[ "$v" = memory-time ] && [ "$args" = --tree ] && continue
			# shellcheck disable=SC2086
			"$NUSKU" report "$1" --by $v $args >"$TMPD/sums" 2>"$TMPD/sums.err" ||
				fail "$1 --by $v $args: exit $?: $(cat "$TMPD/sums.err")"
			# shellcheck disable=SC2086
			"$NUSKU" report "$1" --by $v $args --since 0 >"$TMPD/rows" 2>"$TMPD/rows.err" ||
				fail "$1 --by $v $args --since 0: exit $?: $(cat "$TMPD/rows.err")"
			cmp -s "$TMPD/sums" "$TMPD/rows" && cmp -s "$TMPD/sums.err" "$TMPD/rows.err" ||
				fail "$1 --by $v $args: summed and row reports differ:
$(diff "$TMPD/rows" "$TMPD/sums" | head -20)
$(diff "$TMPD/rows.err" "$TMPD/sums.err" | head -5)"
			n=$((n + 1))
		done
	done
	# export sums too (without the second read: weights only)
	for by in alloc live; do
		for fmt in pprof svg folded; do
			rm -f "$TMPD/x.sums" "$TMPD/x.rows"
			"$NUSKU" export "$1" --by $by --format $fmt -o "$TMPD/x.sums" 2>"$TMPD/sums.err" ||
				fail "export $1 --by $by --format $fmt: $(cat "$TMPD/sums.err")"
			"$NUSKU" export "$1" --by $by --format $fmt --since 0 -o "$TMPD/x.rows" 2>"$TMPD/rows.err" ||
				fail "export $1 --by $by --format $fmt --since 0: $(cat "$TMPD/rows.err")"
			cmp -s "$TMPD/x.sums" "$TMPD/x.rows" && cmp -s "$TMPD/sums.err" "$TMPD/rows.err" ||
				fail "export $1 --by $by --format $fmt: summed and row exports differ"
			n=$((n + 1))
		done
	done
}

# A synthetic recording first (no BPF): a churn with implied frees and
# failed calls, a child exiting with live blocks, a region, a reservation
# and its commit, a record 1 s out of order, an exec (synth__alloc).
"$(dirname "$NUSKU")/tests/report/mknsk" alloc "$TMPD/synth.nsk" 5000 300 || fail "mknsk alloc"
same "$TMPD/synth.nsk"
echo "ok: synthetic recording, $n reports alike"

need_bpf
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/sites.nsk" -- \
	"$WORKLOADS/alloc_sites" 20 || fail "record alloc_sites exited $?"
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/fork.nsk" -- \
	"$WORKLOADS/alloc_exit" fork || fail "record alloc_exit fork exited $?"
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/reserve.nsk" -- \
	"$WORKLOADS/alloc_exit" reserve || fail "record alloc_exit reserve exited $?"

for f in sites fork reserve; do
	same "$TMPD/$f.nsk"
done
# the summed path really was taken: no allocation rows, the counts kept
"$NUSKU" report "$TMPD/sites.nsk" --by alloc-site >"$TMPD/site.txt" || fail "alloc-site"
a=$("$NUSKU" report "$TMPD/sites.nsk" -q "SELECT count(*) FROM alloc" --format csv | tail -1)
grep -q "^# allocations: $a$" "$TMPD/site.txt" || fail "no '# allocations: $a': $(head -3 "$TMPD/site.txt")"
# a file read from stdin cannot be read twice: rows, the same answer
"$NUSKU" report - --by alloc-site <"$TMPD/sites.nsk" >"$TMPD/stdin.txt" || fail "alloc-site from stdin"
# (all but the first line, which names the file)
tail -n +2 "$TMPD/site.txt" >"$TMPD/a"
tail -n +2 "$TMPD/stdin.txt" >"$TMPD/b"
cmp -s "$TMPD/a" "$TMPD/b" || fail "stdin differs: $(diff "$TMPD/a" "$TMPD/b" | head)"
echo "report_alloc_sums: ok ($n reports alike)"
