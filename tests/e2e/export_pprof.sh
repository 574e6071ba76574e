#!/bin/sh
# nusku export --format pprof, read back by a real reader (go tool pprof
# from Debian's golang-go).  cpu_hot burns 60/30/10 % of its CPU in
# hot_a/hot_b/hot_c by construction (hot_c through the always_inline
# dispatch_c): pprof's flat shares must be within 5 points, hot_c's traces
# must carry dispatch_c as an inline frame, samples must carry pid, tid and
# comm labels.  alloc_sites (scale 20, every allocation: --alloc-sample 1)
# allocates known bytes per site: pprof's alloc_space, alloc_objects and
# inuse_space must match them exactly.  Then the output file's rules: 0600,
# no writing through a symlink, no binary to a terminal, no replacing a
# file that is not an export.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
[ -x "$WORKLOADS/cpu_hot" ] || skip "tests/workloads/cpu_hot is not built"
[ -x "$WORKLOADS/alloc_sites" ] || skip "tests/workloads/alloc_sites is not built"
command -v go >/dev/null || skip "go tool pprof is needed (apt-get install golang-go)"
export HOME="${HOME:-$TMPD}" GOCACHE="$TMPD/gocache" GOFLAGS=-mod=mod
go tool pprof -h >/dev/null 2>&1 || skip "go tool pprof does not run here"

# pprof_flat FILE FUNCTION [ARGS]: FUNCTION's flat% in `pprof -top`
pprof_flat() {
	f=$1 fn=$2
	shift 2
	go tool pprof -top -nodecount=1000 "$@" "$f" 2>/dev/null |
		awk -v fn="$fn" '$NF == fn { sub("%", "", $2); s += $2 } END { print s + 0 }'
}
# pprof_bytes FILE FUNCTION INDEX: FUNCTION's flat value in bytes
pprof_bytes() {
	go tool pprof -top -nodecount=1000 -unit=B -sample_index="$3" "$1" 2>/dev/null |
		awk -v fn="$2" '$NF == fn { v = $1; sub("B$", "", v); s += v } END { print s + 0 }'
}

# --- CPU ------------------------------------------------------------------
"$NUSKU" record -q -e cpu -o "$TMPD/cpu.nsk" -- "$WORKLOADS/cpu_hot" 2 >/dev/null ||
	fail "record exited $?"
"$NUSKU" export --format pprof -o "$TMPD/cpu.pb.gz" "$TMPD/cpu.nsk" ||
	fail "export exited $?"
[ "$(stat -c %a "$TMPD/cpu.pb.gz")" = 600 ] || fail "the profile is not 0600"
[ "$(head -c 2 "$TMPD/cpu.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
	fail "the profile is not gzipped"
go tool pprof -top "$TMPD/cpu.pb.gz" >"$TMPD/top" 2>&1 || fail "pprof -top: $(head -3 "$TMPD/top")"
grep -q '^Type: cpu$' "$TMPD/top" || fail "default sample type is not cpu: $(head -8 "$TMPD/top")"
grep -q '^File: cpu_hot$' "$TMPD/top" || fail "the first mapping is not the program"
grep -q '^lost events: ' "$TMPD/top" || fail "no loss summary in the comments"
assert_near "$(pprof_flat "$TMPD/cpu.pb.gz" hot_a)" 60 5 "pprof hot_a flat %"
assert_near "$(pprof_flat "$TMPD/cpu.pb.gz" hot_b)" 30 5 "pprof hot_b flat %"
assert_near "$(pprof_flat "$TMPD/cpu.pb.gz" hot_c)" 10 5 "pprof hot_c flat %"
assert_near "$(pprof_flat "$TMPD/cpu.pb.gz" hot_a -sample_index=samples)" 60 5 \
	"pprof hot_a flat % of samples"
go tool pprof -traces "$TMPD/cpu.pb.gz" >"$TMPD/traces" 2>&1 || fail "pprof -traces"
awk '/hot_c$/ { getline n; if (n ~ /dispatch_c \(inline\)$/) { getline w; if (w ~ / worker$/) ok = 1 } }
	END { exit !ok }' "$TMPD/traces" || fail "no trace hot_c <- dispatch_c (inline) <- worker"
grep -q '^ *comm: *cpu_hot$' "$TMPD/traces" || fail "no comm label"
grep -q '^ *pid: *[0-9][0-9]*$' "$TMPD/traces" || fail "no pid label"
grep -q '^ *tid: *[0-9][0-9]*$' "$TMPD/traces" || fail "no tid label"
# the period: 1 s / the sampling frequency
go tool pprof -raw "$TMPD/cpu.pb.gz" 2>/dev/null | grep -q '^PeriodType: cpu nanoseconds$' ||
	fail "no period type"
echo "ok: cpu profile"

# filters apply as in report: --comm of nothing leaves no samples
"$NUSKU" export --comm no-such-thread -o "$TMPD/none.pb.gz" "$TMPD/cpu.nsk" ||
	fail "export --comm exited $?"
go tool pprof -raw "$TMPD/none.pb.gz" 2>/dev/null | grep -q 'hot_a' &&
	fail "--comm no-such-thread still has hot_a"
echo "ok: filters"

# --- allocations ----------------------------------------------------------
S=20
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/alloc.nsk" -- "$WORKLOADS/alloc_sites" $S ||
	fail "record -e alloc exited $?"
"$NUSKU" export --by alloc -o "$TMPD/alloc.pb.gz" "$TMPD/alloc.nsk" || fail "export --by alloc exited $?"
go tool pprof -top "$TMPD/alloc.pb.gz" 2>/dev/null | grep -q '^Type: alloc_space$' ||
	fail "--by alloc does not show alloc_space first"
# check FUNCTION INDEX EXPECTED
check() {
	v=$(pprof_bytes "$TMPD/alloc.pb.gz" "$1" "$2")
	[ "$v" = "$3" ] || fail "$1 $2: got $v, expected $3"
	echo "ok: $1 $2 = $3"
}
check site_small alloc_space $((64000 * S + 8000 * S))
check site_calloc alloc_space $((300000 * S))
check site_aligned alloc_space $((102400 * S))
check site_leak alloc_space $((10000 * S))
check site_thread alloc_space $((2 * 128000 * S))
check site_leak inuse_space $((10000 * S))
check site_small inuse_space 0
# objects are counts, not bytes: -unit leaves them alone
n=$(go tool pprof -top -nodecount=1000 -sample_index=alloc_objects "$TMPD/alloc.pb.gz" 2>/dev/null |
	awk '$NF == "site_small" { print $1 }')
[ "$n" = $((1000 * S + 1)) ] || fail "site_small alloc_objects: got $n, expected $((1000 * S + 1))"
n=$(go tool pprof -top -nodecount=1000 -sample_index=inuse_objects "$TMPD/alloc.pb.gz" 2>/dev/null |
	awk '$NF == "site_leak" { print $1 }')
[ "$n" = $((10 * S)) ] || fail "site_leak inuse_objects: got $n, expected $((10 * S))"
"$NUSKU" export --by live -o "$TMPD/live.pb.gz" "$TMPD/alloc.nsk" || fail "export --by live"
go tool pprof -top "$TMPD/live.pb.gz" 2>/dev/null | grep -q '^Type: inuse_space$' ||
	fail "--by live does not show inuse_space first"
echo "ok: allocation profile"

# --- off-CPU: reason and waker labels -----------------------------------
if [ -x "$WORKLOADS/blocking" ]; then
	"$NUSKU" record -q -e offcpu -o "$TMPD/off.nsk" -- "$WORKLOADS/blocking" "$TMPD" >/dev/null ||
		fail "record -e offcpu exited $?"
	"$NUSKU" export --by offcpu -o "$TMPD/off.pb.gz" "$TMPD/off.nsk" 2>/dev/null ||
		fail "export --by offcpu exited $?"
	go tool pprof -top "$TMPD/off.pb.gz" 2>/dev/null | grep -q '^Type: off_cpu$' ||
		fail "--by offcpu does not show off_cpu first"
	# lock_victim waits 5 x 40 ms for lock_holder (tests/e2e/offcpu.sh)
	go tool pprof -traces -tagfocus=reason=lock "$TMPD/off.pb.gz" >"$TMPD/off.traces" 2>/dev/null ||
		fail "pprof -traces -tagfocus=reason=lock"
	grep -q ' lock_victim$' "$TMPD/off.traces" || fail "no lock_victim under reason=lock"
	grep -q '^ *waker: *lock_holder\[[0-9]*\]$' "$TMPD/off.traces" ||
		fail "no waker label lock_holder[pid]: $(grep waker "$TMPD/off.traces" | head -3)"
	echo "ok: off-CPU profile"
fi

# --- the output -----------------------------------------------------------
ln -s "$TMPD/victim" "$TMPD/link"
"$NUSKU" export -o "$TMPD/link" "$TMPD/cpu.nsk" 2>"$TMPD/err" && fail "wrote through a symlink"
[ -e "$TMPD/victim" ] && fail "the symlink's target was created"
grep -q 'symbolic link' "$TMPD/err" || fail "symlink refusal: $(cat "$TMPD/err")"
echo "precious" >"$TMPD/notes.txt"
"$NUSKU" export -o "$TMPD/notes.txt" "$TMPD/cpu.nsk" 2>/dev/null && fail "replaced a file that is no export"
grep -q precious "$TMPD/notes.txt" || fail "the file was changed"
"$NUSKU" export -o "$TMPD/cpu.nsk" "$TMPD/cpu.nsk" 2>/dev/null && fail "replaced the recording"
# a profile is replaced by the next one
"$NUSKU" export -o "$TMPD/cpu.pb.gz" "$TMPD/cpu.nsk" || fail "did not replace its own profile"
# stdout: through a pipe yes, to a terminal no (script(1) gives one)
"$NUSKU" export "$TMPD/cpu.nsk" | cmp -s - "$TMPD/cpu.pb.gz" || fail "-o - differs from -o FILE"
if command -v script >/dev/null; then
	script -qec "$NUSKU export $TMPD/cpu.nsk" /dev/null >"$TMPD/tty" 2>&1
	grep -q 'not writing it to a terminal' "$TMPD/tty" || fail "wrote binary to a terminal"
fi
"$NUSKU" export --format nope "$TMPD/cpu.nsk" 2>/dev/null; [ $? = 2 ] || fail "--format nope is not a usage error"
"$NUSKU" export --by retransmit "$TMPD/cpu.nsk" 2>/dev/null; [ $? = 2 ] || fail "--by retransmit is not a usage error"
echo "ok: output rules"
echo "export_pprof: ok"
