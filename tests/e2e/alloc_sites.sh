#!/bin/sh
# Record alloc_sites launched, every allocation (no sampling), once through
# the preloaded sampler and once through allocator uprobes: each site's
# count, bytes, frees, live and peak are known by construction (see
# tests/workloads/alloc_sites.c, scale 20) and must come out exactly; the
# leak view, the folded outputs, memory over time and JSON keys as well.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

S=20
# --call-graph fp: the workloads keep frame pointers and the sampler stands
# at the program's call, so the walk names every site by construction.  The
# default (auto) also sends a stack copy with each new stack until the
# recorder answers, and a flood of every allocation can fill the ring
# first: copies are then dropped (loss alloc.ustack, seen in 2 of 6 runs)
# and sites came out short (site_thread 36985 of 40000 once in CI).  The
# copies' unwinding is tested by unwind_signals.sh (allocchain_nofp).
# check MODE: one recording through the sampler (exact: --alloc-sample 1)
# or through uprobes on the allocator; the answers are the same.
check() {
mode=$1
out=$TMPD/$mode.nsk
if [ "$mode" = sampler ]; then
	"$NUSKU" record -q -e alloc --alloc-sample 1 --call-graph fp -o "$out" -- "$WORKLOADS/alloc_sites" $S ||
		fail "record exited $?"
	dump "$out" "$TMPD/dump"
	grep -q '^meta alloc.mode sampler' "$TMPD/dump" || fail "not recorded through the sampler"
else
	"$NUSKU" record -q -e alloc --alloc-sample 1 --call-graph fp --alloc-uprobes -o "$out" -- \
		"$WORKLOADS/alloc_sites" $S || fail "record --alloc-uprobes exited $?"
	dump "$out" "$TMPD/dump"
	grep -q '^meta alloc.mode uprobes' "$TMPD/dump" || fail "not recorded through uprobes"
	grep -q '^meta alloc.allocator .*libc' "$TMPD/dump" || fail "no META alloc.allocator (libc)"
fi
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>"$TMPD/err" ||
	fail "report --by alloc-site: $(cat "$TMPD/err")"
no_negative "$TMPD/sites.csv"

c=$TMPD/sites.csv
#                 site          column       expected
assert_site "$c" site_small   allocs       $((1000 * S + 1))
assert_site "$c" site_small   bytes        $((64000 * S + 8000 * S))
assert_site "$c" site_small   frees        $((1000 * S + 1))
assert_site "$c" site_small   live_bytes   0
assert_site "$c" site_small   peak_bytes   $((64000 * S + 8000 * S))
assert_site "$c" site_calloc  allocs       $((300 * S))
assert_site "$c" site_calloc  bytes        $((300000 * S))
assert_site "$c" site_calloc  frees        $((300 * S))
assert_site "$c" site_calloc  peak_bytes   1000
assert_site "$c" site_aligned allocs       $((400 * S))
assert_site "$c" site_aligned bytes        $((102400 * S))
assert_site "$c" site_aligned live_allocs  0
assert_site "$c" site_aligned peak_bytes   256
assert_site "$c" site_leak    allocs       $((10 * S))
assert_site "$c" site_leak    frees        0
# the process exited: what it never freed is live at its exit, not at the end
assert_site "$c" site_leak    live_allocs  0
assert_site "$c" site_leak    exit_allocs  $((10 * S))
assert_site "$c" site_leak    exit_bytes   $((10000 * S))
assert_site "$c" site_leak    peak_bytes   $((10000 * S))
# realloc: NULL -> 16 -> ... -> 8192, then realloc(p, 0)
assert_site "$c" site_grow    allocs       10
assert_site "$c" site_grow    bytes        16368
assert_site "$c" site_grow    frees        10
assert_site "$c" site_grow    live_bytes   0
assert_site "$c" site_grow    peak_bytes   8192
# NULL from malloc, an overflowing calloc, posix_memalign's ENOMEM
assert_site "$c" site_fail    failed       3
assert_site "$c" site_fail    allocs       0
assert_site "$c" site_fail    bytes        0
# two threads at once
assert_site "$c" site_thread  allocs       $((2000 * S))
assert_site "$c" site_thread  bytes        $((256000 * S))
assert_site "$c" site_thread  frees        $((2000 * S))
assert_site "$c" site_thread  live_bytes   0
assert_site "$c" site_thread  peak_bytes   192 64
# anonymous mmap/munmap
assert_site "$c" site_mmap    allocs       3
assert_site "$c" site_mmap    bytes        3145728
assert_site "$c" site_mmap    frees        2
assert_site "$c" site_mmap    live_bytes   0
assert_site "$c" site_mmap    exit_bytes   1048576
assert_site "$c" site_mmap    peak_bytes   3145728

# the call path of a site ends in the site, under main
[ "$(site_col "$c" site_leak stack)" = "site_leak <- main <- __libc_start_call_main" ] ||
	fail "site_leak stack: $(site_col "$c" site_leak stack)"

# leaks: what was never freed, largest first (all of it live at the exit
# of the program: exit_bytes, the third column)
"$NUSKU" report "$out" --by leaks --format csv >"$TMPD/leaks.csv" 2>/dev/null || fail "--by leaks"
assert_site "$TMPD/leaks.csv" site_leak exit_bytes $((10000 * S))
assert_site "$TMPD/leaks.csv" site_mmap exit_bytes 1048576
assert_site "$TMPD/leaks.csv" site_leak live_bytes 0
[ -z "$(site_col "$TMPD/leaks.csv" site_small exit_bytes)" ] || fail "site_small listed as a leak"
awk -F, 'NR > 2 && $3 > prev { exit 1 } NR > 1 { prev = $3 }' "$TMPD/leaks.csv" ||
	fail "leaks not sorted largest first"
"$NUSKU" report "$out" --leaks --format csv 2>/dev/null | cmp -s - "$TMPD/leaks.csv" ||
	fail "--leaks differs from --by leaks"

# folded: allocated bytes and live bytes per call path, under the process
"$NUSKU" report "$out" --by alloc-site --folded >"$TMPD/alloc.folded" 2>/dev/null || fail "--folded"
grep -qx 'alloc_sites;__libc_start_call_main;main;site_calloc '$((300000 * S)) "$TMPD/alloc.folded" ||
	fail "alloc-site --folded: no site_calloc line of $((300000 * S)) bytes"
"$NUSKU" report "$out" --by leaks --folded >"$TMPD/live.folded" 2>/dev/null || fail "leaks --folded"
grep -qx 'alloc_sites;__libc_start_call_main;main;site_leak '$((10000 * S)) "$TMPD/live.folded" ||
	fail "leaks --folded: no site_leak line of $((10000 * S)) bytes"
! grep -q 'site_calloc' "$TMPD/live.folded" || fail "leaks --folded lists freed memory"

# memory over time: 20 intervals; at the end, live = what the sites hold
"$NUSKU" report "$out" --by memory-time --format csv >"$TMPD/time.csv" 2>/dev/null || fail "memory-time"
[ "$(($(wc -l <"$TMPD/time.csv") - 1))" = 20 ] || fail "memory-time: not 20 intervals"
live_end=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ v = $col["live_bytes"] } END { print v }' "$TMPD/time.csv")
live_sum=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ s += $col["live_bytes"] } END { print s }' "$c")
assert_near "$live_end" "$live_sum" 0 "live bytes at the end of memory-time"
"$NUSKU" report "$out" --by memory-time >/dev/null 2>&1 || fail "memory-time text"

# JSON carries the documented keys
"$NUSKU" report "$out" --by alloc-site --format json >"$TMPD/sites.json" 2>/dev/null || fail "json"
for k in site stack allocs bytes live_allocs live_bytes peak_bytes; do
	grep -q "\"$k\": " "$TMPD/sites.json" || fail "JSON rows have no \"$k\""
done
grep -q '"site": "site_leak"' "$TMPD/sites.json" || fail "JSON has no site_leak row"
echo "ok: $mode"
}

check sampler
check uprobes

# C++: the caller of new is the site, through the sampler and through uprobes
for how in "" --alloc-uprobes; do
	"$NUSKU" record -q -e alloc --alloc-sample 1 --call-graph fp $how -o "$TMPD/new.nsk" -- \
		"$WORKLOADS/alloc_new" 10 || fail "record alloc_new $how exited $?"
	"$NUSKU" report "$TMPD/new.nsk" --by alloc-site --format csv >"$TMPD/new.csv" 2>/dev/null ||
		fail "report alloc_new"
	assert_site "$TMPD/new.csv" new_leak    allocs     10000
	assert_site "$TMPD/new.csv" new_leak    exit_bytes 480000
	assert_site "$TMPD/new.csv" new_array   allocs     50000
	assert_site "$TMPD/new.csv" new_array   live_bytes 0
	assert_site "$TMPD/new.csv" new_nothrow bytes      200000
	echo "ok: C++ new ${how:-through the sampler}"
done
echo "alloc_sites: ok"
