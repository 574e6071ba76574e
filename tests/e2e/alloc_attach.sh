#!/bin/sh
# Attach with -p to alloc_sites waiting between phases: the 100 blocks
# site_pre allocated before the attach are freed after it.  Those frees
# must not count against anything (no negative live bytes, no site_pre
# row), and every site after the attach is exact.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

S=5
out=$TMPD/run.nsk
mkfifo "$TMPD/go"
"$WORKLOADS/alloc_sites" $S --wait <"$TMPD/go" >"$TMPD/wout" &
pid=$!
exec 3>"$TMPD/go" # the workload's read blocks until we write
i=0
until grep -q ready "$TMPD/wout"; do
	i=$((i + 1)); [ $i -le 300 ] || fail "workload not ready"; sleep 0.1
done
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -p "$pid" 2>"$TMPD/err" &
rec=$!
wait_for_meta "$out" alloc.allocator
printf x >&3
exec 3>&-
wait $pid || fail "workload exited $?"
wait $rec || fail "record -p exited $?: $(cat "$TMPD/err")"

"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>"$TMPD/err" ||
	fail "report: $(cat "$TMPD/err")"
no_negative "$TMPD/sites.csv"
[ -z "$(site_col "$TMPD/sites.csv" site_pre allocs)" ] ||
	fail "site_pre (allocated before the attach) is reported"
c=$TMPD/sites.csv
assert_site "$c" site_small  allocs      $((1000 * S + 1))
assert_site "$c" site_small  live_bytes  0
assert_site "$c" site_calloc bytes       $((300000 * S))
assert_site "$c" site_leak   exit_bytes  $((10000 * S))
assert_site "$c" site_grow   allocs      10
assert_site "$c" site_thread allocs      $((2000 * S))
assert_site "$c" site_thread live_bytes  0

# the 101 frees of pre-attach blocks are kept, matched to nothing
"$NUSKU" report "$out" --format csv --sql \
	"SELECT count(*) AS n FROM free WHERE alloc_id IS NULL AND fn = 'free'" \
	>"$TMPD/unknown.csv" 2>/dev/null || fail "--sql"
n=$(tail -1 "$TMPD/unknown.csv")
[ "$n" -ge 101 ] || fail "$n frees of unknown blocks, expected at least 101"
echo "ok: $n frees of blocks allocated before the attach, counted nowhere"
echo "alloc_attach: ok"
