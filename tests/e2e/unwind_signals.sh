#!/bin/sh
# Allocation, blocking and syscall stacks of code built without frame
# pointers (--call-graph); tests/e2e/unwind.sh does CPU samples.
#
# tests/workloads/allocchain allocates at the end of main -> outer -> inner
# -> leaf: in leaf itself (malloc), through strdup in copy_name and
# keep_name, and through fopen in open_file.  strdup and fopen allocate
# inside libc, which keeps no frame pointers, so a frame-pointer walk skips
# their callers.  In its last round read_pipe blocks ~100 ms in libc's read
# on a pipe a child fills.  Built with and without frame pointers, under the default
# --call-graph auto each site must have its exact count and bytes (1% slack
# for copies the recorder could not take, which it counts), and at least
# 99% of the bytes of each must show main;outer;inner;leaf[;caller]; the
# blocking read must be charged to main;outer;inner;leaf;read_pipe;read for
# 100 ms (+-30%: a loaded machine adds runqueue time), and so must the read
# syscall's time.  On the build without frame pointers, the frame-pointer
# walk alone must lose copy_name and read_pipe's callers, or this test would
# not tell the methods apart.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

R=20000

# path_share FOLDED SITE PATH: percent of the bytes allocated with SITE as
# the innermost program frame whose stack holds PATH
path_share() {
	python3 - "$@" <<'PY'
import sys
folded, site, path = sys.argv[1:]
tot = ok = 0
for line in open(folded):
    stack, n = line.rsplit(' ', 1)
    frames = stack.split(';')
    if site not in frames:
        continue
    tot += int(n)
    if ';' + path + ';' in ';' + stack + ';':
        ok += int(n)
print('%.1f' % (100.0 * ok / tot if tot else 0))
PY
}

check() { # BUILD
	f="$TMPD/$1"
	"$NUSKU" record -q -e alloc,offcpu,syscall --alloc-sample 1 -o "$f.nsk" -- "$WORKLOADS/allocchain_$1" $R ||
		fail "record of allocchain_$1"
	"$NUSKU" report "$f.nsk" --by alloc-site --format csv > "$f.csv" 2>/dev/null ||
		fail "report --by alloc-site of allocchain_$1"
	"$NUSKU" report "$f.nsk" --by alloc-site --folded > "$f.folded" 2>/dev/null ||
		fail "report --folded of allocchain_$1"
	# A stack copy the kernel could not send (the consumer behind, on a
	# loaded machine) leaves that allocation with its frame-pointer
	# walk, wrong in code without frame pointers: counted as alloc.ustack,
	# and allowed for on top of 1%.
	lost=$("$NUSKU" report "$f.nsk" --format csv --sql \
		"SELECT coalesce(sum(count), 0) FROM loss WHERE source = 'alloc.ustack'" 2>/dev/null | tail -n 1)
	slack=$((R / 100 + ${lost:-0}))
	min_share=$(awk -v l="${lost:-0}" -v r=$R 'BEGIN { m = 99 - 100 * l / r; print (m < 0 ? 0 : m) }')
	assert_site "$f.csv" leaf allocs $R $slack
	assert_site "$f.csv" leaf bytes $((R * 200)) $((slack * 200))
	assert_site "$f.csv" copy_name allocs $R $slack
	assert_site "$f.csv" copy_name bytes $((R * 41)) $((slack * 41))
	# the lost stack copies may fall on any site, the small ones too
	assert_site "$f.csv" open_file allocs $((R / 10)) $((R / 1000 + ${lost:-0}))
	assert_site "$f.csv" keep_name exit_allocs $((R / 100)) $((R / 10000 + ${lost:-0}))
	assert_site "$f.csv" keep_name exit_bytes $((R / 100 * 41)) $(((R / 10000 + ${lost:-0}) * 41))
	for site in leaf copy_name open_file keep_name; do
		want="main;outer;inner;leaf"
		[ $site = leaf ] || want="$want;$site"
		p=$(path_share "$f.folded" $site "$want")
		awk -v p="$p" -v m="$min_share" 'BEGIN { exit !(p >= m) }' ||
			fail "$1: $p% of the bytes allocated in $site have $want (want >= $min_share%)"
		echo "ok: build $1: $p% of the bytes allocated in $site have $want"
	done
	"$NUSKU" report "$f.nsk" --by blocking --folded > "$f.blocking" 2>/dev/null ||
		fail "report --by blocking --folded of allocchain_$1"
	us=$(awk '/;main;outer;inner;leaf;read_pipe;[^;]*read;/ { t += $NF }
		END { print t + 0 }' "$f.blocking")
	# at least the writer's 100 ms sleep (less 30 for the timer); a loaded
	# machine only adds to it
	assert_near "$us" 1035000 965000 "$1: us blocked in read under main;outer;inner;leaf;read_pipe (70 ms .. 2 s)"
	"$NUSKU" report "$f.nsk" --by syscall-path --folded > "$f.syscalls" 2>/dev/null ||
		fail "report --by syscall-path --folded of allocchain_$1"
	ms=$(awk '/;main;outer;inner;leaf;read_pipe;[^; ]*read / { t += $2 }
		END { print int(t / 1000000) }' "$f.syscalls")
	[ "$ms" -gt 0 ] || grep read "$f.syscalls" >&2
	assert_near "$ms" 1035 965 "$1: ms in the read syscall under main;outer;inner;leaf;read_pipe (70 ms .. 2 s)"
	p=$(path_share "$f.syscalls" read_pipe "main;outer;inner;leaf;read_pipe")
	awk -v p="$p" 'BEGIN { exit !(p >= 99) }' ||
		fail "$1: $p% of read_pipe's syscall time has main;outer;inner;leaf;read_pipe"
	# which method: the DWARF walks are marked in the recording
	dw=$("$NUSKU" report "$f.nsk" --sql "SELECT count(*) FROM stack WHERE flags & 4" 2>/dev/null |
		tail -n 1 | tr -d ' ')
	[ "${dw:-0}" -gt 0 ] || fail "$1: no stack is marked as unwound with DWARF"
}

check fp
check nofp

# The control: frame pointers alone lose copy_name, read_pipe, and the
# callers of read_pipe's syscalls.
"$NUSKU" record -q -e alloc,offcpu,syscall --alloc-sample 1 --call-graph fp -o "$TMPD/ctl.nsk" -- \
	"$WORKLOADS/allocchain_nofp" 2000 || fail "record --call-graph fp"
"$NUSKU" report "$TMPD/ctl.nsk" --by alloc-site --format csv > "$TMPD/ctl.csv" 2>/dev/null ||
	fail "report of the control"
[ -z "$(site_col "$TMPD/ctl.csv" copy_name allocs)" ] ||
	fail "--call-graph fp found copy_name: the workload does not tell the methods apart"
! "$NUSKU" report "$TMPD/ctl.nsk" --by blocking --folded 2>/dev/null | grep -q 'read_pipe;[^;]*read;' ||
	fail "--call-graph fp found read_pipe: the workload does not tell the methods apart"
! "$NUSKU" report "$TMPD/ctl.nsk" --by syscall-path --folded 2>/dev/null |
	grep -q ';main;outer;inner;leaf;read_pipe;' ||
	fail "--call-graph fp found read_pipe's syscall callers: no control"
echo "ok: --call-graph fp loses copy_name, read_pipe and its callers, as expected"
