#!/bin/sh
# A Go program (tests/workloads/go_heap, built here with Debian's golang-go,
# std only, no network) keeping about 50 MB live: Go's address-space
# reservations (hundreds of MB of PROT_NONE) are not heap, what it maps
# writable is (50 MB at least, well under the reservations), and the
# report says that the Go heap itself is not traced.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
command -v go >/dev/null || skip "go not installed (Debian's golang-go)"

cp -r "$TOP_SRCDIR/tests/workloads/go_heap" "$TMPD/src"
(cd "$TMPD/src" && GOCACHE=$TMPD/cache GOPATH=$TMPD/gopath GOPROXY=off GOFLAGS=-mod=mod \
	GOTOOLCHAIN=local go build -o "$TMPD/go_heap" .) >"$TMPD/build.err" 2>&1 ||
	fail "go build: $(cat "$TMPD/build.err")"

out=$TMPD/go.nsk
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -- "$TMPD/go_heap" 2>"$TMPD/rec.err" ||
	fail "record exited $?: $(cat "$TMPD/rec.err")"
dump "$out" "$TMPD/dump"
grep -q "^meta alloc.go $TMPD/go_heap" "$TMPD/dump" || fail "no META alloc.go naming the program"

"$NUSKU" report "$out" --by leaks >"$TMPD/leaks.txt" 2>&1 || fail "report --by leaks"
grep -qx "# Go heap not traced: allocations inside the Go runtime are not visible; only cgo malloc and mmap ($TMPD/go_heap)" \
	"$TMPD/leaks.txt" || fail "no Go note: $(cat "$TMPD/leaks.txt")"
"$NUSKU" report "$out" --by leaks --format csv >"$TMPD/leaks.csv" 2>"$TMPD/leaks.err" ||
	fail "report --by leaks csv"
no_negative "$TMPD/leaks.csv"
# nothing is live at the end (the program exited); what it held at its
# exit is what it mapped writable
sum() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ s += $col[c] } END { print s + 0 }' "$1"; }
assert_near "$(sum "$TMPD/leaks.csv" live_bytes)" 0 0 "bytes live at the end"
held=$(sum "$TMPD/leaks.csv" exit_bytes)
echo "held at exit: $held bytes"
[ "$held" -ge 52428800 ] || fail "held at exit $held < the 50 MiB the program keeps"
[ "$held" -le 268435456 ] || fail "held at exit $held: reservations counted as heap?"
biggest=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["exit_bytes"] + $col["live_bytes"] > m { m = $col["exit_bytes"] + $col["live_bytes"] }
	END { print m + 0 }' "$TMPD/leaks.csv")
[ "$biggest" -le 268435456 ] || fail "a site holds $biggest bytes"
# the reservations are said apart, and are more than the heap
r=$(sed -n 's/.*note: reserved address space, not heap: \([0-9]*\) bytes.*/\1/p' "$TMPD/leaks.err")
[ -n "$r" ] || fail "no reservation note: $(cat "$TMPD/leaks.err")"
[ "$r" -gt "$held" ] || fail "reserved $r not more than held $held"
echo "ok: reserved $r bytes apart, $held bytes held"
echo "alloc_go: ok"
