#!/bin/sh
# Bounded memory on any input (issue 17 item 2), no BPF needed: recordings
# of a few hundred bytes to a megabyte that once drove report to 24 GB (one
# 200,000-frame stack under --tree), report and live past 1 GB (600 deep
# stacks of 100 KB names), and one past the whole-file text limit.  Each
# runs under `prlimit --as` (512 MiB; skipped under --enable-asan, whose
# shadow memory needs terabytes of address space) and must end with its
# status and its one line (report/limits.h, docs/schema.md "Limits").
. "$TOP_SRCDIR/tests/e2e/lib.sh"

MKNSK=$(dirname "$NUSKU")/tests/report/mknsk
"$MKNSK" deep "$TMPD/deep.nsk" 1 200000 8 || fail "mknsk deep"
"$MKNSK" deep "$TMPD/wide.nsk" 600 20 100000 || fail "mknsk wide"
"$MKNSK" deep "$TMPD/big.nsk" 40000 1 4096 || fail "mknsk big"

LIMIT=""
if command -v prlimit >/dev/null && ! ldd "$NUSKU" 2>/dev/null | grep -q libasan; then
	LIMIT="prlimit --as=$((512 << 20))"
else
	echo "note: no address-space limit (prlimit missing or an ASan build)"
fi

# run WANT_STATUS WHAT ARGS...: nusku under the limit, output in out/err
run() {
	want=$1 what=$2
	shift 2
	# shellcheck disable=SC2086
	$LIMIT "$NUSKU" "$@" >"$TMPD/out" 2>"$TMPD/err"
	got=$?
	[ "$got" = "$want" ] || fail "$what: exit $got, want $want: $(head -c 300 "$TMPD/err")"
}

# A stack past 1024 frames: kept leaf-most, one warning, rest shown.
for args in "--by stack --tree" "--by stack" "--by function" "--folded"; do
	# shellcheck disable=SC2086
	run 0 "report $args (deep)" report $args "$TMPD/deep.nsk"
	grep -q "stack of 200000 frames is past the limit of 1024" "$TMPD/out" "$TMPD/err" ||
		fail "report $args (deep): no warning: $(head -8 "$TMPD/out")"
done
[ "$("$NUSKU" report --by stack --tree --min-pct 0 "$TMPD/deep.nsk" | grep -c 'f[01]_')" -le 1024 ] ||
	fail "the tree is deeper than the 1024 frames kept"
echo "ok: a 200,000-frame stack: exit 0, cut to 1024 frames, one warning"

# 600 stacks of 100 KB names: names cut to 4 KiB, paths to 64 KiB.
for args in "" "--by stack" "--by stack --tree" "--folded" "--by function --format csv"; do
	# shellcheck disable=SC2086
	run 0 "report $args (wide)" report $args "$TMPD/wide.nsk"
	grep -q "name of 100000 bytes is past the limit of 4096" "$TMPD/out" "$TMPD/err" ||
		fail "report $args (wide): no warning: $(head -8 "$TMPD/out")"
done
run 0 "live --snapshot (wide)" live --snapshot "$TMPD/wide.nsk"
run 0 "info (wide)" info "$TMPD/wide.nsk"
echo "ok: 600 stacks of 100 KB names: exit 0, names and paths cut, one warning each"

# export and diff read the same files within the same limit.
for f in deep wide; do
	for fmt in pprof svg folded; do
		run 0 "export --format $fmt ($f)" export --format $fmt -o "$TMPD/$f.$fmt" "$TMPD/$f.nsk"
	done
	run 0 "diff ($f)" diff "$TMPD/$f.nsk" "$TMPD/$f.nsk"
done
echo "ok: export (pprof, svg, folded) and diff of the deep and wide files under the limit"

# The memory views of 400,000 allocations, 100,000 of them never freed:
# summed while loading (and read twice), and as rows (--since 0).
"$MKNSK" alloc "$TMPD/alloc.nsk" 300000 100000 || fail "mknsk alloc"
for v in alloc-site leaks memory-time; do
	run 0 "report --by $v (alloc)" report --by $v "$TMPD/alloc.nsk"
	run 0 "report --by $v --since 0 (alloc)" report --by $v --since 0 "$TMPD/alloc.nsk"
	NUSKU_ALLOC_ROWS=1 run 0 "report --by $v as rows (alloc)" report --by $v "$TMPD/alloc.nsk"
done
echo "ok: the memory views of 400,000 allocations under the limit"

# What once made the loader scan everything per record (quadratic: 5.5 s
# for 40,000 regions, 242 s for 10,000 exits beside a million live
# blocks): 200,000 regions and unmaps that end none of them; a million
# blocks one process holds while 50,000 others allocate and exit.  Each
# must finish (a timeout of 120 s where the old loader took hours; no
# timing is asserted) within the memory limit, with the right answer.
"$MKNSK" scan "$TMPD/scan.nsk" 200000 1000000 50000 || fail "mknsk scan"
for v in alloc-site leaks; do
	LIMIT="timeout 120 $LIMIT" run 0 "report --by $v (scan)" report --by $v --format csv "$TMPD/scan.nsk"
done
# main allocated every block: 200000 regions of 4 KiB stay mapped, the
# million blocks of 32 bytes stay live, the 50,000 of 64 bytes left with
# their processes
"$NUSKU" report --by alloc-site --format json "$TMPD/scan.nsk" | python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
want = {"live_bytes": 200000 * 4096 + 1000000 * 32, "exit_bytes": 50000 * 64}
got = {k: r[k] for k in want}
sys.exit(0 if got == want else "scan: %r, want %r" % (got, want))' || fail "scan: wrong sums"
echo "ok: 200,000 regions and unmaps, 50,000 exits beside a million live blocks: bounded and right"

# Past the live-block and live-region limits: exit 1 and one line.
"$MKNSK" scan "$TMPD/live.nsk" 0 1600000 0 || fail "mknsk scan (live)"
run 1 "report --by leaks (1.6M live blocks)" report --by leaks "$TMPD/live.nsk"
grep -q "more than 1572864 allocated blocks live at once: past nusku's limit" "$TMPD/err" ||
	fail "1.6M live blocks: $(cat "$TMPD/err")"
"$MKNSK" scan "$TMPD/regions.nsk" 1100000 0 0 || fail "mknsk scan (regions)"
run 1 "report --by leaks (1.1M regions)" report --by leaks "$TMPD/regions.nsk"
grep -q "more than 1048576 allocated regions live at once: past nusku's limit" "$TMPD/err" ||
	fail "1.1M regions: $(cat "$TMPD/err")"
echo "ok: past the live-block and live-region limits: exit 1, one line"

# Past the whole-file text limit: exit 1 and one line, for report and live.
run 1 "report (big)" report "$TMPD/big.nsk"
[ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q "^nusku report: .*big.nsk: more than 64 MiB of names and text: past nusku's limit$" "$TMPD/err" ||
	fail "report (big): $(cat "$TMPD/err")"
run 1 "live --snapshot (big)" live --snapshot "$TMPD/big.nsk"
grep -q "^nusku live: .*big.nsk: more than 64 MiB of names and text: past nusku's limit$" "$TMPD/err" ||
	fail "live (big): $(cat "$TMPD/err")"
run 0 "info (big)" info "$TMPD/big.nsk"
echo "ok: past the whole-file limit: report and live exit 1 with one line; info reads it"

# The text table streams past its first 2,000 rows: every row is there,
# and the streamed ones fit the 80 columns too.
"$MKNSK" bench "$TMPD/bench.nsk" 100000 20000 5000 || fail "mknsk bench"
"$NUSKU" report --by stack "$TMPD/bench.nsk" >"$TMPD/out" || fail "report --by stack (bench)"
rows=$(grep -v -e '^#' -e '^$' "$TMPD/out" | wc -l)
json=$("$NUSKU" report --by stack --format json "$TMPD/bench.nsk" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["rows"]))')
[ "$json" -gt 2000 ] && [ "$rows" = $((json + 1)) ] || fail "text rows $rows, JSON rows $json"
[ "$(awk 'length > 80' "$TMPD/out" | wc -l)" = 0 ] || fail "rows past 80 columns"
echo "ok: $json rows streamed in 80 columns"
