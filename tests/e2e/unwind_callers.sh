#!/bin/sh
# The default --call-graph auto loses no caller, and no walk invents a frame.
#
# tests/workloads/mixleaf is built with -O2 -fno-omit-frame-pointer, and its
# hot mix_leaf sets up no frame (gcc does not in leaves: checked below with
# objdump), so a frame-pointer walk from inside it skips its caller.
# caller_a makes 7 of every 10 calls and caller_b 3, the same work each: of
# the samples in mix_leaf, 70% +-5 must have caller_a for caller and 30% +-5
# caller_b, recorded with the default options.
#
# Then, in that recording and in recordings of real programs (ls -lR, a
# shell running /bin/true 100 times, sqlite3 when installed), no walk may
# give a frame no code can have: a zero return address (shown as
# [unknown]+0xffffffffffffffff), an address past the user half, or an
# unnamed caller of a named _dl_map_object (a word of ld.so's data the
# frame-pointer walk took for a return address).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
W="$WORKLOADS/mixleaf"
command -v objdump >/dev/null || skip "objdump (binutils) is not installed"

# The premise: the leaf keeps no frame, its callers do.
objdump -d --no-show-raw-insn "$W" | awk '
	/^[0-9a-f]+ <mix_leaf>:/ { f = "leaf" } /^[0-9a-f]+ <caller_a>:/ { f = "a" }
	/^$/ { f = "" }
	f != "" && /push +%rbp/ { pushed[f] = 1 }
	END { exit !(!pushed["leaf"] && pushed["a"]) }' ||
	fail "mix_leaf sets up a frame (or caller_a none): the test would not test"
echo "ok: mix_leaf keeps no frame, caller_a does"

"$NUSKU" record -q -o "$TMPD/mix.nsk" -- "$W" 1.5 || fail "record of mixleaf"
"$NUSKU" report "$TMPD/mix.nsk" --folded > "$TMPD/mix.folded" 2>/dev/null ||
	fail "report --folded of mixleaf"
# "samples a_pct b_pct": mix_leaf's samples, and the shares of its callers
set -- $(python3 - "$TMPD/mix.folded" <<'PY'
import sys
tot = a = b = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    fr = stack.split(';')
    if 'mix_leaf' not in fr:
        continue
    i = fr.index('mix_leaf')
    tot += int(n)
    a += int(n) if i and fr[i - 1] == 'caller_a' else 0
    b += int(n) if i and fr[i - 1] == 'caller_b' else 0
print(tot, 100.0 * a / tot if tot else 0, 100.0 * b / tot if tot else 0)
PY
)
[ "$1" -ge 500 ] || fail "only $1 samples in mix_leaf"
assert_near "$2" 70 5 "share of mix_leaf's $1 samples called from caller_a"
assert_near "$3" 30 5 "share of mix_leaf's $1 samples called from caller_b"

# no_garbage FILE WHAT: no impossible frame in the recording
no_garbage() {
	q() { "$NUSKU" report "$1" --sql "$2" 2>/dev/null | tail -n 1 | tr -d ' '; }
	n=$(q "$1" "SELECT count(*) FROM func WHERE name LIKE '%+0xffffffffffffffff'")
	[ "$n" = 0 ] || fail "$2: $n functions at a zero return address"
	n=$(q "$1" "SELECT count(*) FROM frame f JOIN func u ON u.id = f.func_id
		WHERE u.kernel = 0 AND (f.addr < 0 OR f.addr >= 140737488355328)")
	[ "$n" = 0 ] || fail "$2: $n user frames at impossible addresses"
	n=$(q "$1" "SELECT count(*) FROM stack WHERE chain LIKE '%_dl_map_object <- [unknown]%'")
	[ "$n" = 0 ] || fail "$2: $n stacks with an unnamed caller of _dl_map_object"
	n=$(q "$1" "SELECT count(*) FROM stack")
	[ "$n" -gt 0 ] || fail "$2: no stacks at all"
	echo "ok: $2: no impossible frame in $n stacks"
}
no_garbage "$TMPD/mix.nsk" mixleaf
"$NUSKU" record -q -o "$TMPD/ls.nsk" -- ls -lR /usr/lib/x86_64-linux-gnu > /dev/null ||
	fail "record of ls -lR"
no_garbage "$TMPD/ls.nsk" "ls -lR"
"$NUSKU" record -q -o "$TMPD/sh.nsk" -- sh -c 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done' ||
	fail "record of a shell loop"
no_garbage "$TMPD/sh.nsk" "100 runs of /bin/true"
if command -v sqlite3 >/dev/null; then
	"$NUSKU" record -q -o "$TMPD/sq.nsk" -- sqlite3 :memory: \
		"CREATE TABLE t(a); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) INSERT INTO t SELECT x FROM c; SELECT count(*) FROM t;" > /dev/null ||
		fail "record of sqlite3"
	no_garbage "$TMPD/sq.nsk" sqlite3
fi
