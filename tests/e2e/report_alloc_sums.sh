#!/bin/sh
# The memory views sum the allocations while loading and read the file a
# second time for peaks and intervals (report/load_alloc.h), and so does
# export of the alloc and live measures (sums alone); a filter (--pid
# --tid --comm --since --until) is applied while summing.  With --db,
# --sql or NUSKU_ALLOC_ROWS=1 every allocation is a row and the views
# group and filter them in SQL.  The two ways must agree to the byte: every
# memory view, in every format, --folded and --tree, unfiltered and under
# each filter, on recordings of every allocation (weight = size: every
# count a whole number) with frees, failed calls, mmap regions, threads,
# reallocs (alloc_sites), processes that exit holding memory and a
# reservation (alloc_exit).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"

# same FILE [FILTER...]: every memory view and form of FILE, summed and as
# rows, with the filter given
n=0
same() {
	sf=$1
	shift
	for v in alloc-site leaks memory-time; do
		for args in "" "--format csv" "--format json" "--folded" "--tree"; do
			[ "$v" = memory-time ] && [ "$args" = --tree ] && continue
			# shellcheck disable=SC2086
			"$NUSKU" report "$sf" --by $v $args "$@" >"$TMPD/sums" 2>"$TMPD/sums.err" ||
				fail "$sf --by $v $args $*: exit $?: $(cat "$TMPD/sums.err")"
			# shellcheck disable=SC2086
			NUSKU_ALLOC_ROWS=1 "$NUSKU" report "$sf" --by $v $args "$@" >"$TMPD/rows" 2>"$TMPD/rows.err" ||
				fail "$sf --by $v $args $* (rows): exit $?: $(cat "$TMPD/rows.err")"
			cmp -s "$TMPD/sums" "$TMPD/rows" && cmp -s "$TMPD/sums.err" "$TMPD/rows.err" ||
				fail "$sf --by $v $args $*: summed and row reports differ:
$(diff "$TMPD/rows" "$TMPD/sums" | head -20)
$(diff "$TMPD/rows.err" "$TMPD/sums.err" | head -5)"
			n=$((n + 1))
		done
	done
	# export sums too (without the second read: weights only)
	for by in alloc live; do
		for fmt in pprof svg folded; do
			rm -f "$TMPD/x.sums" "$TMPD/x.rows"
			"$NUSKU" export "$sf" --by $by --format $fmt "$@" -o "$TMPD/x.sums" 2>"$TMPD/sums.err" ||
				fail "export $sf --by $by --format $fmt $*: $(cat "$TMPD/sums.err")"
			NUSKU_ALLOC_ROWS=1 "$NUSKU" export "$sf" --by $by --format $fmt "$@" -o "$TMPD/x.rows" 2>"$TMPD/rows.err" ||
				fail "export $sf --by $by --format $fmt $* (rows): $(cat "$TMPD/rows.err")"
			cmp -s "$TMPD/x.sums" "$TMPD/x.rows" && cmp -s "$TMPD/sums.err" "$TMPD/rows.err" ||
				fail "export $sf --by $by --format $fmt $*: summed and row exports differ"
			n=$((n + 1))
		done
	done
}

# first COL FILE N: the Nth smallest COL of the allocation rows
first() {
	"$NUSKU" report "$2" -q "SELECT $1 FROM alloc ORDER BY $1 LIMIT 1 OFFSET $3" \
		--format csv | tail -1
}

# filtered FILE: the filters that select part of FILE: its first process,
# its last thread, the comm of the first allocation, a time window with
# a process, a name nothing has
filtered() {
	p=$(first pid "$1" 0)
	t=$("$NUSKU" report "$1" -q "SELECT max(tid) FROM alloc" --format csv | tail -1)
	c=$("$NUSKU" report "$1" -q "SELECT c.name FROM alloc a JOIN comm c ON c.id = a.comm_id LIMIT 1" --format csv | tail -1)
	[ -n "$p" ] && [ -n "$t" ] || fail "$1: no allocations to filter"
	same "$1" --pid "$p"
	same "$1" --tid "$t"
	[ -z "$c" ] || same "$1" --comm "$c"
	same "$1" --since 0.2 --until 1.5 --pid "$p"
	same "$1" --comm no-such-name
}

# A synthetic recording first (no BPF): a churn with implied frees and
# failed calls, a child exiting with live blocks, a region, a reservation
# and its commit, a record 1 s out of order, an exec (synth__alloc).
"$(dirname "$NUSKU")/tests/report/mknsk" alloc "$TMPD/synth.nsk" 5000 300 || fail "mknsk alloc"
same "$TMPD/synth.nsk"
filtered "$TMPD/synth.nsk"
same "$TMPD/synth.nsk" --pid 100,200 --since 0.5
same "$TMPD/synth.nsk" --until 1
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
	filtered "$TMPD/$f.nsk"
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
