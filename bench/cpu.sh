#!/bin/sh
# CPU profiling against perf: the same workload (bench/cpu_work: fixed work,
# two threads, ~25-frame stacks) recorded by `nusku record -e cpu` and by
# `perf record -g`, at the same frequency, runs alternating, RUNS each, and
# unrecorded runs for the baseline.  Medians.  Rows:
#   workload slowdown  recorded / bare, of the workload's own CPU time and of
#                      its elapsed time (it measures both itself)
#   recorder CPU       user+sys of the recorder (all CPU of the run minus the
#                      workload's own)
#   bytes per sample   output file size / samples in it
#   report time        `nusku report --by function` vs `perf report --stdio`
#                      on those files
#   million samples    both tools at MHZ (20 kHz) on a run of about a
#                      million samples: report time; plus a synthetic .nsk
#                      of 1e6 samples (tests/report/mknsk) for nusku alone
#
#   bench/cpu.sh [BUILDDIR]
# Environment: RUNS (3), HZ (999), ROUNDS (4000), MHZ (20000),
# MILLION (1000000; 0 skips the million-sample rows).
set -eu
B=${1:-${B:-.}}
. "$(dirname "$0")/lib.sh"
HZ=${HZ:-999}
ROUNDS=${ROUNDS:-4000}
MHZ=${MHZ:-20000}
MILLION=${MILLION:-1000000}
W=$B/bench/cpu_work
[ -x "$W" ] && [ -x "$NUSKU" ] || die "build first: make && make bench/cpu_work"
command -v perf >/dev/null || die "perf is not installed (apt-get install linux-perf)"
[ "$(id -u)" = 0 ] || { echo "bench/cpu.sh: needs root" >&2; exit 77; }

nsk_samples() {
	"$NUSKU" report --format csv --sql "SELECT count(*) FROM sample" "$1" 2>/dev/null | tail -1
}
perf_samples() {
	perf script -i "$1" -G -F tid 2>/dev/null | wc -l
}
# field NAME FILE: a number the workload printed ("cpu_work: elapsed_us N cpu_us N")
field() {
	sed -n "s/.* $1 \([0-9]*\).*/\1/p" "$2"
}

# one_run TOOL I: records (or not) one run, appends to $T/TOOL.tsv:
# workload_cpu_us workload_elapsed_us recorder_cpu_s bytes samples
one_run() {
	tool=$1 i=$2 rounds=$3 hz=$4 keep=${5:-}
	case $tool in
	bare) set -- "$W" "$rounds"; file= ;;
	nusku) file=$T/run$i.nsk
		set -- "$NUSKU" record -q -e cpu -F "$hz" -o "$file" -- "$W" "$rounds" ;;
	perf) file=$T/perf$i.data
		set -- perf record -q -g -e cpu-clock -F "$hz" -o "$file" -- "$W" "$rounds" ;;
	esac
	m=$(measure "$T/out" "$@")
	[ "$(echo "$m" | cut -d' ' -f3)" = 0 ] || die "$tool run failed: $*"
	wcpu=$(field cpu_us "$T/out")
	wall=$(field elapsed_us "$T/out")
	[ -n "$wcpu" ] || die "$tool: the workload printed nothing"
	rcpu=$(awk -v t="$(echo "$m" | cut -d' ' -f2)" -v w="$wcpu" 'BEGIN { printf "%.4f", t - w / 1e6 }')
	bytes=0 samples=0
	if [ -n "$file" ]; then
		bytes=$(wc -c <"$file")
		if [ $tool = nusku ]; then samples=$(nsk_samples "$file"); else samples=$(perf_samples "$file"); fi
	fi
	echo "$wcpu $wall $rcpu $bytes $samples $file" >>"$T/$tool.tsv"
	[ -n "$keep" ] || [ -z "$file" ] || [ "$i" = 1 ] || rm -f "$file"
}

col() { # col TOOL N: median of column N
	cut -d' ' -f"$2" "$T/$1.tsv" | median
}

rm -f "$T"/*.tsv
for i in $(seq "$RUNS"); do
	for tool in bare nusku perf; do
		one_run $tool "$i" "$ROUNDS" "$HZ"
	done
done
for tool in bare nusku perf; do
	eval "${tool}_wcpu=\$(col $tool 1) ${tool}_wall=\$(col $tool 2)"
	eval "${tool}_rcpu=\$(col $tool 3) ${tool}_bytes=\$(col $tool 4) ${tool}_samples=\$(col $tool 5)"
done
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%\n", 100 * (a / b - 1) }'; }
row cpu "samples per run ($HZ Hz, median)" "$nusku_samples" "$perf_samples" \
	"$(ratio "$nusku_samples" "$perf_samples")" "-"
row cpu "workload CPU time vs bare" "$(pct "$nusku_wcpu" "$bare_wcpu")" \
	"$(pct "$perf_wcpu" "$bare_wcpu")" "$(ratio "$(awk -v a="$nusku_wcpu" -v b="$bare_wcpu" 'BEGIN{print a-b}')" "$(awk -v a="$perf_wcpu" -v b="$bare_wcpu" 'BEGIN{print a-b}')")" \
	"<= perf's"
row cpu "workload elapsed time vs bare" "$(pct "$nusku_wall" "$bare_wall")" \
	"$(pct "$perf_wall" "$bare_wall")" "-" "<= perf's"
row cpu "recorder CPU, s (user+sys)" "$nusku_rcpu" "$perf_rcpu" \
	"$(ratio "$nusku_rcpu" "$perf_rcpu")" "-"
nbps=$(awk -v b="$nusku_bytes" -v s="$nusku_samples" 'BEGIN { printf "%.1f", b / s }')
pbps=$(awk -v b="$perf_bytes" -v s="$perf_samples" 'BEGIN { printf "%.1f", b / s }')
row cpu "bytes per sample" "$nbps" "$pbps" "$(ratio "$nbps" "$pbps")" "<= 0.20"
# report time on the first run's files, alternating
: >"$T/rn"; : >"$T/rp"
nf=$(cut -d' ' -f6 "$T/nusku.tsv" | head -1)
pf=$(cut -d' ' -f6 "$T/perf.tsv" | head -1)
for i in $(seq "$RUNS"); do
	measure /dev/null "$NUSKU" report --by function "$nf" | cut -d' ' -f1 >>"$T/rn"
	measure /dev/null perf report --stdio -i "$pf" | cut -d' ' -f1 >>"$T/rp"
done
rn=$(sec "$(median <"$T/rn")") rp=$(sec "$(median <"$T/rp")")
row cpu "report time, s ($nusku_samples/$perf_samples samples)" "$rn" "$rp" "$(ratio "$rn" "$rp")" "-"

[ "$MILLION" -gt 0 ] || exit 0
# About a million samples from each tool: rounds scaled from the bare
# run's CPU time per round, plus 10% for the recorders' own overhead.
mrounds=$(awk -v m="$MILLION" -v hz="$MHZ" -v c="$bare_wcpu" -v r="$ROUNDS" \
	'BEGIN { printf "%d", 1.1 * m / hz / (c / 1e6 / r) }')
rm -f "$T"/*.tsv
one_run nusku M "$mrounds" "$MHZ" keep
one_run perf M "$mrounds" "$MHZ" keep
ns=$(col nusku 5) ps=$(col perf 5)
nf=$T/runM.nsk pf=$T/perfM.data
: >"$T/rn"; : >"$T/rp"
for i in $(seq "$RUNS"); do
	measure /dev/null "$NUSKU" report --by function "$nf" | cut -d' ' -f1 >>"$T/rn"
	measure /dev/null perf report --stdio -i "$pf" | cut -d' ' -f1 >>"$T/rp"
done
rn=$(sec "$(median <"$T/rn")") rp=$(sec "$(median <"$T/rp")")
nbps=$(awk -v b="$(col nusku 4)" -v s="$ns" 'BEGIN { printf "%.1f", b / s }')
pbps=$(awk -v b="$(col perf 4)" -v s="$ps" 'BEGIN { printf "%.1f", b / s }')
row cpu "samples at $MHZ Hz (million run)" "$ns" "$ps" "$(ratio "$ns" "$ps")" "~1e6"
row cpu "bytes per sample (million run)" "$nbps" "$pbps" "$(ratio "$nbps" "$pbps")" "<= 0.20"
row cpu "report time, s (million run)" "$rn" "$rp" "$(ratio "$rn" "$rp")" "<= 0.33"
rm -f "$nf" "$pf"
if [ -x "$B/tests/report/mknsk" ]; then
	"$B/tests/report/mknsk" bench "$T/synth.nsk" "$MILLION" "$MHZ" 3000
	: >"$T/rn"
	for i in $(seq "$RUNS"); do
		measure /dev/null "$NUSKU" report --by function "$T/synth.nsk" | cut -d' ' -f1 >>"$T/rn"
	done
	row cpu "report time, s (synthetic 1e6 .nsk)" "$(sec "$(median <"$T/rn")")" "-" "-" "-"
fi
