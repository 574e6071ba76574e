#!/bin/sh
# Stacks of code built without frame pointers (issue: --call-graph).
#
# tests/workloads/callchain runs main -> outer -> inner -> leaf, and leaf
# spends about half its time inside libc's memset (Debian's libc keeps no
# frame pointers).  It is built twice: callchain_fp (-fno-omit-frame-pointer)
# and callchain_nofp (-fomit-frame-pointer).  Of the samples taken in leaf
# or in memset, at least 99% must show the full path main;outer;inner;leaf
# in both builds under the default --call-graph auto and under dwarf.  The
# frame-pointer walk alone must get the build without frame pointers wrong
# (below 50%), or this test would not tell the methods apart.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf

# full_path_share FOLDED: percent of leaf/memset samples with the full path
full_path_share() {
	python3 - "$1" <<'PY'
import sys
tot = ok = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    frames = stack.split(';')
    if not any(f == 'leaf' or f.startswith('__memset') for f in frames):
        continue
    tot += int(n)
    if ';main;outer;inner;leaf;' in ';' + stack + ';':
        ok += int(n)
print('%.1f %d' % (100.0 * ok / tot if tot else 0, tot))
PY
}

check() { # MODE BUILD MIN_PCT MAX_PCT
	f="$TMPD/$1_$2"
	"$NUSKU" record -q -e cpu --call-graph "$1" -o "$f.nsk" -- \
		"$WORKLOADS/callchain_$2" 1.5 || fail "record --call-graph $1 of callchain_$2"
	"$NUSKU" report "$f.nsk" --folded > "$f.folded" 2>/dev/null ||
		fail "report --folded of $1/$2"
	set -- "$1" "$2" "$3" "$4" $(full_path_share "$f.folded")
	[ "$6" -ge 300 ] || fail "$1/$2: only $6 samples in leaf or memset"
	awk -v p="$5" -v lo="$3" -v hi="$4" 'BEGIN { exit !(p >= lo && p <= hi) }' ||
		fail "$1/$2: $5% of $6 samples have main;outer;inner;leaf (want $3..$4%)"
	echo "ok: --call-graph $1, build $2: $5% of $6 samples have the full path"
}

check auto fp 99 100
check auto nofp 99 100
check dwarf nofp 99 100
check fp nofp 0 50

# The recording says which method made each stack: under auto, the build
# with frame pointers keeps the fast path for samples in leaf itself, and
# DWARF serves those inside memset.
q() { "$NUSKU" report "$TMPD/$1.nsk" --sql "$2" 2>/dev/null | tail -n 1 | tr -d ' '; }
fp_stacks=$(q auto_fp "SELECT count(*) FROM stack WHERE flags & 2")
dw_stacks=$(q auto_fp "SELECT count(*) FROM stack WHERE flags & 4")
[ "${fp_stacks:-0}" -gt 0 ] || fail "auto on the fp build: no frame-pointer stacks"
[ "${dw_stacks:-0}" -gt 0 ] || fail "auto on the fp build: no DWARF stacks (memset)"
echo "ok: auto on the fp build: $fp_stacks frame-pointer stacks, $dw_stacks DWARF stacks"
