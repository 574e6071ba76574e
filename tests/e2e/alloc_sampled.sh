#!/bin/sh
# --alloc-sample 16k: byte-interval sampling.  Estimates are unbiased with
# a relative standard deviation of about sqrt(interval / bytes) per site; the
# tolerances below are 4 to 5 of those (scale 100: site_calloc 30 MB ~ 2.3%,
# site_small 7.2 MB ~ 4.8%, site_leak 1 MB ~ 13%).  Frees of sampled blocks
# are all seen, so fully freed sites hold exactly nothing at the end.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

S=100
out=$TMPD/run.nsk
"$NUSKU" record -q -e alloc --alloc-sample 16k -o "$out" -- "$WORKLOADS/alloc_sites" $S ||
	fail "record exited $?"
dump "$out" "$TMPD/dump"
grep -q '^meta alloc.sample_bytes 16384' "$TMPD/dump" || fail "no META alloc.sample_bytes"
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>/dev/null || fail "report"
no_negative "$TMPD/sites.csv"
c=$TMPD/sites.csv
pct() { awk -v v="$1" -v p="$2" 'BEGIN { printf "%d\n", v * p / 100 }'; }
b=$((300000 * S)); assert_site "$c" site_calloc bytes  $b $(pct $b 12)
n=$((300 * S));    assert_site "$c" site_calloc allocs $n $(pct $n 12)
b=$((256000 * S)); assert_site "$c" site_thread bytes  $b $(pct $b 12)
b=$((102400 * S)); assert_site "$c" site_aligned bytes $b $(pct $b 20)
b=$((72000 * S));  assert_site "$c" site_small bytes   $b $(pct $b 25)
b=$((10000 * S));  assert_site "$c" site_leak live_bytes $b $(pct $b 60)
for s in site_calloc site_thread site_aligned site_small; do
	assert_site "$c" $s live_bytes 0
done
# far fewer records than allocations
n=$("$NUSKU" report "$out" --format csv --sql "SELECT count(*) FROM alloc" 2>/dev/null | tail -1)
allocs=$((300 * S + 2000 * S + 400 * S + 1001 * S + 10 * S))
[ "$n" -lt $((allocs / 10)) ] || fail "$n allocation records for $allocs allocations"
echo "ok: $n records for $allocs allocations"
echo "alloc_sampled: ok"
