#!/bin/sh
# A stripped program (no .symtab, .eh_frame kept, as Debian ships them):
# one row per function, named module!0xSTART from its FDE range, at the
# shares of the unstripped build (60/30/10 by construction); the report
# names the module that lacked symbols, with its build-id; frames without
# a name are not lost events.  Several runs of the program in one
# recording are one row per function.  Then MiniDebugInfo (.gnu_debugdata)
# gives full names, and so does its debug file, put where a -dbgsym package
# puts it (/usr/lib/debug/.build-id/).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/stripped_lib.sh"
need_bpf

BIN=$WORKLOADS/cpu_hot_bid1
BID=$(build_id "$BIN")
[ -n "$BID" ] || fail "$BIN has no build-id"
# The build-id is this test's alone (Makefile.am): a file there is ours,
# left by a run that was killed.
DBG=/usr/lib/debug/.build-id/$(echo "$BID" | cut -c1-2)/$(echo "$BID" | cut -c3-).debug
rm -f "$DBG"
trap 'rm -f "$DBG"; rm -rf "$TMPD"' EXIT
S=$TMPD/cpu_hot_s
objcopy --strip-all "$BIN" "$S" || fail "objcopy --strip-all"
[ "$(build_id "$S")" = "$BID" ] || fail "the stripped copy lost its build-id"

# The copy keeps the original's build-id, so the answers the recorder kept
# for the original (record/stacks/symcache.h) would name it: this test is
# about what the stripped file alone gives, so none are kept.
export NUSKU_CACHE_DIR=off
record_hot "$BIN" "$TMPD/full.nsk"
record_hot "$S" "$TMPD/s.nsk"
D=$TMPD/s.nsk.dump
for f in hot_a hot_b hot_c; do
	full=$(self_share "$TMPD/full.nsk.dump" $f)
	assert_near "$(self_share "$D" "$(fde_name "$BIN" $f cpu_hot_s)")" "$full" 10 \
		"$f self share as $(fde_name "$BIN" $f cpu_hot_s), unstripped $full"
done
! grep -q '^sample.*hot_a' "$D" || fail "stripped binary: a name from nowhere"
# one row per function: no leaf of the module is a bare address
leaves=$(awk '$1 == "sample" { n = split($6, fr, ";")
	for (i = 1; i <= n; i++) if (fr[i] !~ /^k:/) { print fr[i]; break } }' "$D" |
	grep '^cpu_hot_s' | sort -u)
echo "$leaves" | grep -q '^cpu_hot_s+0x' && fail "a leaf without a function: $(echo "$leaves" | grep '+0x' | head -3)"
n=$(echo "$leaves" | wc -l)
[ "$n" -le 8 ] || fail "$n leaf functions in cpu_hot_s, expected the 3 hot ones and a few"
echo "ok: $n leaf functions in the stripped module"

# the module without symbols, named with its build-id; not lost events
"$NUSKU" report "$TMPD/s.nsk" > "$TMPD/report" 2>&1 || fail "report exited $?"
grep -qF "# no symbols: $S (build-id $BID): " "$TMPD/report" ||
	fail "no 'no symbols' line for $S: $(grep '^#' "$TMPD/report")"
! grep '^# lost events:.*symbols' "$TMPD/report" || fail "frames counted as lost events"
! grep -q '^loss symbols\.' "$D" || fail "LOSS records for frames"
grep -q '^meta symbols.unresolved [0-9]' "$D" || fail "no META symbols.unresolved"
"$NUSKU" report --format json "$TMPD/s.nsk" | grep -qF "\"no_symbols\": [{\"path\": \"$S\", \"build_id\": \"$BID\"}" ||
	fail "JSON: no no_symbols entry"
echo "ok: the report names $S as without symbols, nothing lost"

# five runs, one recording: one row per function, not one per process
"$NUSKU" record -q -e cpu -o "$TMPD/runs.nsk" -- sh -c \
	"for i in 1 2 3 4 5; do '$S' 0.3; done" > /dev/null || fail "record of 5 runs exited $?"
"$NUSKU" report "$TMPD/runs.nsk" > "$TMPD/runs" || fail "report exited $?"
a=$(fde_name "$BIN" hot_a cpu_hot_s)
rows=$(grep -cF " $a " "$TMPD/runs")
[ "$rows" = 1 ] || fail "$rows rows for $a in 5 runs, expected 1"
echo "ok: 5 runs, one row for $a"

# MiniDebugInfo (Fedora's way): the function symbols, xz-compressed, in
# .gnu_debugdata of the stripped file; libdwfl reads them
if command -v xz > /dev/null; then
	M=$TMPD/cpu_hot_m
	nm --format=posix --defined-only "$BIN" | awk '$2 ~ /^[TtWw]$/ { print $1 }' > "$TMPD/funcs"
	objcopy --only-keep-debug "$BIN" "$TMPD/full.debug" &&
		objcopy -S --remove-section .comment --keep-symbols="$TMPD/funcs" \
			"$TMPD/full.debug" "$TMPD/mini.debug" &&
		xz -f "$TMPD/mini.debug" && objcopy --strip-all "$BIN" "$M" &&
		objcopy --add-section .gnu_debugdata="$TMPD/mini.debug.xz" "$M" ||
		fail "making a MiniDebugInfo copy"
	record_hot "$M" "$TMPD/mini.nsk"
	assert_named "$TMPD/mini.nsk.dump"
	"$NUSKU" report "$TMPD/mini.nsk" > "$TMPD/mini" 2>&1 || fail "report exited $?"
	! grep -F "no symbols: $M" "$TMPD/mini" || fail "MiniDebugInfo, yet listed as without symbols"
	echo "ok: MiniDebugInfo names the stripped copy"
else
	echo "note: xz not installed: MiniDebugInfo not tried"
fi

# the debug file where the -dbgsym package would put it: full names
if mkdir -p "$(dirname "$DBG")" 2> /dev/null &&
	objcopy --only-keep-debug "$BIN" "$DBG" 2> /dev/null; then
	record_hot "$S" "$TMPD/dbg.nsk"
	assert_named "$TMPD/dbg.nsk.dump"
	"$NUSKU" report "$TMPD/dbg.nsk" > "$TMPD/dbg" 2>&1 || fail "report exited $?"
	! grep -F "no symbols: $S" "$TMPD/dbg" || fail "named, yet listed as without symbols"
	echo "ok: the debug file by build-id names the stripped copy"
else
	echo "note: $(dirname "$DBG") not writable: debug file by build-id not tried"
fi
echo "stripped: ok"
