#!/bin/sh
# Stripped Go binaries are named from the Go runtime's own table
# (.gopclntab; record/stacks/gosym.c): no .symtab, no DWARF, no .eh_frame.
#   1. tests/workloads/go_spin.go built by Debian's go with -ldflags='-s -w'
#      (and again position-independent): main.main calls main.spin (never
#      inlined), which burns the CPU for 1 s; main.spin holds most of the
#      samples and main.main is its caller.
#   2. Debian's own gofmt over the Go sources of net: most user frames
#      named (the share is printed).
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf
command -v go >/dev/null 2>&1 || skip "no go (Debian's golang-go)"
command -v readelf >/dev/null 2>&1 || skip "no readelf"

# Go's caches, in the scratch directory; no network
gobuild() {
	env HOME="$TMPD" GOCACHE="$TMPD/cache" GOPATH="$TMPD/gopath" GO111MODULE=off \
		GOTOOLCHAIN=local GOPROXY=off GOFLAGS= CGO_ENABLED=0 go build "$@" ||
		fail "go build $*"
}
gobuild -ldflags='-s -w' -o "$TMPD/spin" "$TOP_SRCDIR/tests/workloads/go_spin.go"
gobuild -buildmode=pie -ldflags='-s -w' -o "$TMPD/spin_pie" "$TOP_SRCDIR/tests/workloads/go_spin.go"
chmod -R u+w "$TMPD" # Go's module cache is read-only; the trap removes it
# the answer must come from .gopclntab: nothing else names the code
for b in spin spin_pie; do
	! readelf -SW "$TMPD/$b" | grep -E ' \.(symtab|debug_info|eh_frame) ' ||
		fail "$b is not stripped"
done

# spin NAME: record the build NAME and check main.spin <- main.main
spin() {
	"$NUSKU" record -q -e cpu -o "$TMPD/$1.nsk" -- "$TMPD/$1" 1 >/dev/null ||
		fail "$1: record exited $?"
	dump "$TMPD/$1.nsk" "$TMPD/$1.dump"
	self=$(self_share "$TMPD/$1.dump" main.spin)
	awk -v s="$self" 'BEGIN { exit !(s >= 80) }' ||
		fail "$1: main.spin holds $self% of the samples, expected 80% or more" \
			"(top frames: $(awk '$1 == "sample" { print $NF }' "$TMPD/$1.dump" |
				sort | uniq -c | sort -rn | head -3))"
	echo "ok: $1: main.spin holds $self% of the samples"
	main=$(total_share "$TMPD/$1.dump" main.main)
	awk -v s="$main" -v t="$self" 'BEGIN { exit !(s >= t) }' ||
		fail "$1: main.main on $main% of the stacks, fewer than main.spin's $self%"
	"$NUSKU" report "$TMPD/$1.nsk" --by stack --format csv >"$TMPD/$1.csv" 2>"$TMPD/err" ||
		fail "$1: report --by stack: $(cat "$TMPD/err")"
	grep -q 'main\.spin <- main\.main' "$TMPD/$1.csv" ||
		fail "$1: no main.spin <- main.main: $(head -5 "$TMPD/$1.csv")"
	# the function view: main.spin first, in the module it came from
	"$NUSKU" report "$TMPD/$1.nsk" --format csv 2>/dev/null | sed -n 2p |
		grep -q ",main\.spin,$1\$" || fail "$1: main.spin is not the top row of the report"
	echo "ok: $1: main.spin <- main.main ($main% under main.main)"
	# named from its own table, so not listed as a module without symbols
	"$NUSKU" report "$TMPD/$1.nsk" 2>&1 | grep "^# no symbols: .*/$1 " &&
		fail "$1: listed as a module without symbols"
	echo "ok: $1: not listed as lacking symbols"
}
spin spin
spin spin_pie

# Debian's gofmt, as packaged (stripped)
GOFMT=$(readlink -f "$(command -v gofmt)" 2>/dev/null)
if [ -x "$GOFMT" ] && [ -d /usr/lib/go/src/net ] &&
	! readelf -SW "$GOFMT" | grep -q ' \.symtab '; then
	"$NUSKU" record -q -e cpu -o "$TMPD/gofmt.nsk" -- "$GOFMT" -l /usr/lib/go/src/net >/dev/null ||
		fail "gofmt: record exited $?"
	dump "$TMPD/gofmt.nsk" "$TMPD/gofmt.dump"
	# a frame is named unless it is [unknown]+0x.. or module+0x..
	share=$(awk '$1 == "sample" {
		n = split($NF, fr, ";")
		for (i = 1; i <= n; i++) {
			if (fr[i] ~ /^k:/) continue
			u++; if (fr[i] !~ /^\[unknown\]/ && fr[i] !~ /\+0x[0-9a-f]+$/) named++
		}
	} END { printf "%.1f %d\n", u ? 100 * named / u : 0, u }' "$TMPD/gofmt.dump")
	frames=${share#* } share=${share% *}
	[ "$frames" -ge 100 ] || fail "gofmt: only $frames user frames sampled"
	awk -v s="$share" 'BEGIN { exit !(s >= 90) }' ||
		fail "gofmt: $share% of $frames user frames named, expected 90% or more"
	grep -q 'main\.main' "$TMPD/gofmt.dump" || fail "gofmt: main.main never seen"
	"$NUSKU" report "$TMPD/gofmt.nsk" 2>&1 | grep "^# no symbols: .*/gofmt " &&
		fail "gofmt: listed as a module without symbols"
	echo "ok: gofmt: $share% of $frames user frames named"
else
	echo "note: no stripped Debian gofmt here; that part is skipped"
fi
