#!/bin/sh
# Overhead of the allocation signal against heaptrack and bcc's memleak on
# an allocation-heavy loop: alloc_churn's malloc/free pairs (sizes 16..1039
# bytes, 4096 live), timed by the workload itself so each tool's start-up
# and shutdown are not counted.  Best of RUNS each.  Prints one line per
# tool: loop time, cost per pair, slowdown against the bare loop, and what
# the tool wrote.
#
#   bench/alloc.sh [BUILDDIR]        (default: the current directory)
#
# Environment: PAIRS (default 200000), RUNS (default 3), SAMPLE (the
# --alloc-sample interval, default 512k), MEMLEAK (default
# /usr/sbin/memleak-bpfcc; empty to skip), HEAPTRACK (default heaptrack).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/alloc_churn
PAIRS=${PAIRS:-200000}
RUNS=${RUNS:-3}
SAMPLE=${SAMPLE:-512k}
MEMLEAK=${MEMLEAK-/usr/sbin/memleak-bpfcc}
HEAPTRACK=${HEAPTRACK-heaptrack}
[ -x "$NUSKU" ] && [ -x "$W" ] || { echo "alloc.sh: build first (make && make check TESTS=)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "alloc.sh: needs root" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# loop_us: the loop time a run printed ("alloc_churn: N pairs in T us").
loop_us() { sed -n 's/^alloc_churn: .* pairs in \([0-9]*\) us.*/\1/p' "$1" | tail -1; }

# best_of NAME OUTPUT CMD...: the fastest of RUNS runs; OUTPUT (a file or
# glob, may be empty) is measured after the last run.
best_of() {
	name=$1 outf=$2; shift 2
	best=
	for i in $(seq "$RUNS"); do
		rm -f $outf
		"$@" >"$T/out" 2>"$T/err" || true
		d=$(loop_us "$T/out")
		[ -n "$d" ] || { echo "alloc.sh: $name failed: $(tail -3 "$T/err")" >&2; return 0; }
		if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
	done
	size=-
	[ -z "$outf" ] || size=$(cat $outf 2>/dev/null | wc -c)
	line "$name" "$best" "$size"
}

line() {
	awk -v n="$1" -v d="$2" -v b="${bare:-$2}" -v s="$3" -v p="$PAIRS" 'BEGIN {
		if (s == "-") out = "-"
		else if (s >= 1048576) out = sprintf("%.1f MiB", s / 1048576)
		else out = sprintf("%.1f KiB", s / 1024)
		printf "%-44s %9.1f %9.3f %9.1fx  %s\n", n, d / 1e3, d / p, d / b, out }'
}

# bcc compiles memleak at run time against the kernel's headers.  A kernel
# without them (no /lib/modules/RELEASE/build, no CONFIG_IKHEADERS) gets
# Debian's linux-headers merged into one tree: memleak only probes user
# space, so the headers' kernel version does not matter.
memleak_headers() {
	[ -e "/lib/modules/$(uname -r)/build" ] && return 0
	[ -n "${BCC_KERNEL_SOURCE:-}" ] && return 0
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -1)
	arch=$(ls -d "${common%-common}"-amd64 "${common%-common}"-arm64 2>/dev/null | head -1)
	[ -n "$common" ] && [ -n "$arch" ] || {
		echo "alloc.sh: memleak needs kernel headers (apt-get install linux-headers-amd64)" >&2
		return 1
	}
	mkdir -p "$T/kernel"
	cp -rs "$common/." "$T/kernel/" 2>/dev/null || true
	cp -rsf "$arch/." "$T/kernel/" 2>/dev/null || true
	BCC_KERNEL_SOURCE=$T/kernel
	export BCC_KERNEL_SOURCE
}

# memleak attaches with -p to a process waiting on a fifo; it compiles its
# BPF program first, then attaches, then we let the loop go.
memleak_run() {
	mkfifo "$T/go"
	"$W" "$PAIRS" --wait <"$T/go" >"$T/mout" &
	w=$!
	exec 3>"$T/go"
	"$MEMLEAK" -p "$w" 60 >"$T/memleak.out" 2>&1 &
	m=$!
	i=0
	until grep -q Attaching "$T/memleak.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -le 600 ] || break; sleep 0.1
	done
	sleep 3 # it prints "Attaching" before it attaches its ten probes
	printf x >&3
	exec 3>&-
	wait $w || true
	kill -TERM $m 2>/dev/null || true # SIGINT is ignored in & jobs
	wait $m 2>/dev/null || true
	rm -f "$T/go"
	cat "$T/mout"
}

printf "alloc_churn, %d malloc/free pairs, best of %d\n" "$PAIRS" "$RUNS"
printf "%-44s %9s %9s %10s  %s\n" "tool" "loop ms" "us/pair" "slowdown" "output"
bare=
best_of "bare" "" "$W" "$PAIRS"
bare=$best
best_of "nusku record -e alloc" "$T/u.nsk" \
	"$NUSKU" record -q -e alloc -o "$T/u.nsk" -- "$W" "$PAIRS"
best_of "nusku record -e alloc --alloc-sample $SAMPLE" "$T/s.nsk" \
	"$NUSKU" record -q -e alloc --alloc-sample "$SAMPLE" -o "$T/s.nsk" -- "$W" "$PAIRS"
best_of "nusku record (cpu,alloc defaults)" "$T/d.nsk" \
	"$NUSKU" record -q -o "$T/d.nsk" -- "$W" "$PAIRS"
if command -v "$HEAPTRACK" >/dev/null 2>&1; then
	best_of "heaptrack" "$T/ht.*" "$HEAPTRACK" -o "$T/ht" "$W" "$PAIRS"
else
	echo "heaptrack: not installed" >&2
fi
if [ -n "$MEMLEAK" ] && [ -x "$MEMLEAK" ] && memleak_headers; then
	RUNS=1 best_of "memleak-bpfcc -p (1 run)" "$T/memleak.out" memleak_run
else
	echo "memleak-bpfcc: not installed" >&2
fi
