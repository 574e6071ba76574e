#!/bin/sh
# Sampled allocations through the preloaded sampler, against the exact
# answers of alloc_sites (tests/workloads/alloc_sites.c, scale S).
#
# The estimates are unbiased with a relative standard deviation of about
# sqrt(interval / bytes) per site.  At --alloc-sample 64k and S = 8000 every
# site with at least 1% of the bytes has 80 MB or more: the +-10% asked of
# bytes and counts is 9 standard deviations or more for all but site_leak,
# whose +-15% on 80 MB is 5.2.  The sampler's seed is fixed
# (NUSKU_ALLOC_SEED), so a run is also the same from one time to the next
# (up to the order in which the two threads of site_thread allocate).
# Frees of sampled blocks are all seen, so fully freed sites hold exactly
# nothing at the end.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

S=8000
out=$TMPD/run.nsk
# Records lost (a ring buffer full while the machine starved the draining
# thread; counted, as LOSS records) take their bytes from whichever site
# was allocating then: the totals below hold for a recording that lost
# none.  A lost stack copy loses nothing (the record goes without it).
# Up to three tries; every one losing records is a failure.
for try in 1 2 3; do
	NUSKU_ALLOC_SEED=12345 "$NUSKU" record -q -e alloc --alloc-sample 64k -o "$out" -- \
		"$WORKLOADS/alloc_sites" $S || fail "record exited $?"
	dump "$out" "$TMPD/dump"
	lost=$(awk '$1 == "loss" && $2 != "alloc.ustack" { n += $3; w = w " " $2 " " $3 }
		END { if (n) print w }' "$TMPD/dump")
	[ -z "$lost" ] && break
	echo "try $try lost records:$lost"
	[ $try = 3 ] && fail "three recordings lost records:$lost"
done
grep -q '^meta alloc.sample_bytes 65536' "$TMPD/dump" || fail "no META alloc.sample_bytes"
grep -q '^meta alloc.mode sampler' "$TMPD/dump" || fail "not recorded through the sampler"
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>/dev/null || fail "report"
no_negative "$TMPD/sites.csv"
c=$TMPD/sites.csv
pct() { awk -v v="$1" -v p="$2" 'BEGIN { printf "%d\n", v * p / 100 }'; }
b=$((300000 * S));          assert_site "$c" site_calloc  bytes  $b $(pct $b 10)
n=$((300 * S));             assert_site "$c" site_calloc  allocs $n $(pct $n 10)
b=$((256000 * S));          assert_site "$c" site_thread  bytes  $b $(pct $b 10)
n=$((2000 * S));            assert_site "$c" site_thread  allocs $n $(pct $n 10)
b=$((102400 * S));          assert_site "$c" site_aligned bytes  $b $(pct $b 10)
b=$((64000 * S + 8000 * S)); assert_site "$c" site_small  bytes  $b $(pct $b 10)
b=$((10000 * S));           assert_site "$c" site_leak    exit_bytes $b $(pct $b 15)
b=$((10000 * S));           assert_site "$c" site_leak    bytes  $b $(pct $b 15)
for s in site_calloc site_thread site_aligned site_small; do
	assert_site "$c" $s live_bytes 0
done
# the leak view finds it first
"$NUSKU" report "$out" --by leaks --format csv >"$TMPD/leaks.csv" 2>/dev/null || fail "--by leaks"
first=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	NR == 2 { print $(c["site"]) }' "$TMPD/leaks.csv")
[ "$first" = site_leak ] || fail "the largest leak is $first, not site_leak"
# far fewer records than allocations
n=$("$NUSKU" report "$out" --format csv --sql "SELECT count(*) FROM alloc" 2>/dev/null | tail -1)
allocs=$((300 * S + 2000 * S + 400 * S + 1001 * S + 10 * S))
[ "$n" -lt $((allocs / 100)) ] || fail "$n allocation records for $allocs allocations"
echo "ok: $n records for $allocs allocations"

# the default interval is 512 KiB, through the sampler as well
"$NUSKU" record -q -e alloc -o "$TMPD/d.nsk" -- "$WORKLOADS/alloc_sites" 100 ||
	fail "record (default interval) exited $?"
dump "$TMPD/d.nsk" "$TMPD/ddump"
grep -q '^meta alloc.sample_bytes 524288' "$TMPD/ddump" || fail "default interval is not 512 KiB"
grep -q '^meta alloc.mode sampler' "$TMPD/ddump" || fail "default is not the sampler"
echo "alloc_sampled: ok"
