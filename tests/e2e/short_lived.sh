#!/bin/sh
# Programs gone about a millisecond after their exec are named in full:
# every address space comes from the kernel's mapping records as it is
# made, not from /proc after the fact (tests/workloads/short_lived.c).
#   1. N runs in a row from a shell loop: the three allocation sites with
#      their counts (every allocation: --alloc-sample 1; an allocation
#      whose stack was lost is counted as lost, so a site holds between
#      expected - lost and expected), each called from main, and the hot
#      function burn named with its caller; no allocation of the program
#      at an unnamed site.
#   2. Each run from a copy of the binary deleted as soon as it exited.
#   3. Each run from a copy that exists only in another mount namespace
#      (unshare -m, a private tmpfs): the recorder cannot see its path.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
retry_once "the recorder's watcher thread, on a loaded machine, can wake after a 1 ms program and the rm of its binary (or the end of its mount namespace): that process's frames are then unnamed"

N=30
W=$WORKLOADS/short_lived

# check NAME: the recording $TMPD/NAME.nsk of N runs, program named PROG
check() {
	out=$TMPD/$1.nsk prog=$2
	dump "$out" "$TMPD/$1.dump"
	grep -q '^meta proc.maps kernel' "$TMPD/$1.dump" ||
		fail "$1: address spaces not from the kernel's mapping records: $(grep '^meta proc.maps' "$TMPD/$1.dump")"
	lost=$(awk '$1 == "loss" && $2 ~ /^alloc\./ { n += $3 } END { print n + 0 }' "$TMPD/$1.dump")
	"$NUSKU" report "$out" --comm "$prog" --by alloc-site --format csv >"$TMPD/$1.csv" 2>"$TMPD/err" ||
		fail "$1: report --by alloc-site: $(cat "$TMPD/err")"
	c=$TMPD/$1.csv
	for site in site_small:64:48 site_medium:16:4000 site_large:4:100000; do
		name=${site%%:*} per=${site#*:}; per=${per%%:*} size=${site##*:}
		want=$((N * per))
		got=$(site_col "$c" "$name" allocs)
		[ -n "$got" ] || fail "$1: no row for $name: $(cat "$c")"
		[ "$got" -le "$want" ] && [ "$got" -ge $((want - lost)) ] ||
			fail "$1: $name: $got allocations, expected $want (minus at most $lost lost)"
		echo "ok: $1: $name $got allocations (expected $want, $lost lost)"
		[ "$(site_col "$c" "$name" bytes)" = $((got * size)) ] ||
			fail "$1: $name: bytes $(site_col "$c" "$name" bytes), expected $((got * size))"
		case $(site_col "$c" "$name" stack) in
		"$name <- main <- "*) ;;
		*) fail "$1: $name's caller is not main: $(site_col "$c" "$name" stack)" ;;
		esac
	done
	! grep -i 'unknown' "$c" || fail "$1: an allocation of $prog at an unnamed site"
	# nothing else of the program: no allocation counted twice (sampler
	# and uprobes), none charged to the profiler (the shell's own, in the
	# child before its exec, have the shell's frames)
	total=$(awk -F, -v sh="$(basename "$(readlink -f /bin/sh)")" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["module"] != sh { n += $2 } END { print n + 0 }' "$c")
	[ "$total" -le $((N * 84)) ] ||
		fail "$1: $total allocations of $prog recorded, it made $((N * 84)): $(cat "$c")"
	"$NUSKU" report "$out" --comm "$prog" --by stack --format csv >"$TMPD/$1.cpu" 2>/dev/null ||
		fail "$1: report --by stack"
	grep -q 'burn <- main' "$TMPD/$1.cpu" || fail "$1: burn <- main not in the CPU profile: $(head "$TMPD/$1.cpu")"
	echo "ok: $1: burn <- main in the CPU profile"
}

"$NUSKU" record -q -e cpu,alloc --alloc-sample 1 -o "$TMPD/loop.nsk" -- \
	sh -c "for i in \$(seq $N); do $W; done" || fail "record exited $?"
check loop short_lived

mkdir "$TMPD/bin"
"$NUSKU" record -q -e cpu,alloc --alloc-sample 1 -o "$TMPD/deleted.nsk" -- \
	sh -c "for i in \$(seq $N); do cp $W $TMPD/bin/gone && $TMPD/bin/gone; rm -f $TMPD/bin/gone; done" ||
	fail "record exited $?"
check deleted gone

if unshare -m true 2>/dev/null; then
	mkdir "$TMPD/ns"
	"$NUSKU" record -q -e cpu,alloc --alloc-sample 1 -o "$TMPD/ns.nsk" -- \
		unshare -m sh -c "mount -t tmpfs tmpfs $TMPD/ns && cp $W $TMPD/ns/inside &&
			for i in \$(seq $N); do $TMPD/ns/inside; done" || fail "record exited $?"
	[ ! -e "$TMPD/ns/inside" ] || fail "the copy is visible outside its namespace"
	check ns inside
else
	echo "note: no unshare -m here; the mount namespace part is skipped"
fi
