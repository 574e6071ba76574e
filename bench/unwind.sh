#!/bin/sh
# Stacks without frame pointers against perf: tests/workloads/callchain_nofp
# (main -> outer -> inner -> leaf, half the time in libc's memset; built
# with -fomit-frame-pointer) under `nusku record -e cpu --call-graph dwarf`
# and `perf record --call-graph dwarf` (8 KiB copies, perf's default, as
# nusku's), same frequency, runs alternating, RUNS each, plus unrecorded
# runs.  Medians.  Rows:
#   workload slowdown  the workload's own CPU time, recorded / bare
#   recorder CPU       user+sys of the run minus the workload's own
#   bytes per sample   output size / samples
#   complete stacks    of the samples in leaf or memset, the share whose
#                      stack has main;outer;inner;leaf
#   nusku auto         the same rows for --call-graph auto (the default)
#   ns per walk        bench/unwind_speed: one unwind of a 22-frame copy with
#                      the cached CFI rules, against libdw (the perf column)
#
#   bench/unwind.sh [BUILDDIR]       Environment: RUNS (3), HZ (999), ROUNDS (400)
set -eu
B=${1:-${B:-.}}
. "$(dirname "$0")/lib.sh"
HZ=${HZ:-999}
ROUNDS=${ROUNDS:-400}
W=$B/tests/workloads/callchain_nofp
[ -x "$W" ] && [ -x "$NUSKU" ] || die "build first: make && make tests/workloads/callchain_nofp"
command -v perf >/dev/null || die "perf is not installed (apt-get install linux-perf)"
[ "$(id -u)" = 0 ] || { echo "bench/unwind.sh: needs root" >&2; exit 77; }

# complete FILE: "share samples" of leaf/memset samples with the full path,
# from folded stacks on stdin
complete() {
	python3 -c '
import sys
tot = ok = 0
for line in sys.stdin:
    line = line.strip()
    if not line: continue
    stack, n = line.rsplit(" ", 1)
    fr = stack.split(";")
    if not any(f == "leaf" or f.startswith("__memset") for f in fr): continue
    tot += int(n)
    ok += int(n) * (";main;outer;inner;leaf;" in ";" + stack + ";")
print("%.1f %d" % (100.0 * ok / tot if tot else 0, tot))'
}

# perf script output to folded stacks (root first)
perf_folded() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | python3 -c '
import sys
st = []
def flush():
    if st: print(";".join(reversed(st)) + " 1")
for line in sys.stdin:
    if not line.strip():
        flush(); st = []; continue
    if line.startswith((" ", "\t")):
        parts = line.split()
        st.append(parts[1].split("+")[0] if len(parts) > 1 else "?")
flush()'
}

one_run() { # TOOL I
	tool=$1 i=$2 file=
	case $tool in
	bare) set -- "$W" -n "$ROUNDS" ;;
	dwarf|auto) file=$T/$tool$i.nsk
		set -- "$NUSKU" record -q -e cpu --call-graph "$tool" -F "$HZ" -o "$file" -- "$W" -n "$ROUNDS" ;;
	perf) file=$T/perf$i.data
		set -- perf record -q --call-graph dwarf,8192 -e cpu-clock -F "$HZ" -o "$file" -- "$W" -n "$ROUNDS" ;;
	esac
	m=$(measure "$T/out" "$@")
	[ "$(echo "$m" | cut -d' ' -f3)" = 0 ] || die "$tool run failed: $*"
	wcpu=$(sed -n 's/.*cpu_us \([0-9]*\).*/\1/p' "$T/out")
	[ -n "$wcpu" ] || die "$tool: the workload printed nothing"
	rcpu=$(awk -v t="$(echo "$m" | cut -d' ' -f2)" -v w="$wcpu" 'BEGIN { printf "%.4f", t - w / 1e6 }')
	bytes=0 share=0 samples=0
	if [ -n "$file" ]; then
		bytes=$(wc -c <"$file")
		case $tool in
		perf) set -- $(perf_folded "$file" | complete)
		      samples=$(perf script -i "$file" -F tid 2>/dev/null | wc -l) ;;
		*) set -- $("$NUSKU" report "$file" --folded 2>/dev/null | complete)
		   samples=$("$NUSKU" report --format csv --sql "SELECT count(*) FROM sample" "$file" 2>/dev/null | tail -1) ;;
		esac
		share=$1
		rm -f "$file"
	fi
	echo "$wcpu $rcpu $bytes $samples $share" >>"$T/$tool.tsv"
}

col() { cut -d' ' -f"$2" "$T/$1.tsv" | median; }

rm -f "$T"/*.tsv
for i in $(seq "$RUNS"); do
	for tool in bare dwarf perf auto; do
		one_run $tool "$i"
	done
done
bare=$(col bare 1)
for tool in dwarf perf auto; do
	eval "${tool}_slow=\$(awk -v a=\$(col $tool 1) -v b=$bare 'BEGIN { printf \"%.3f\", a / b }')"
	eval "${tool}_rcpu=\$(col $tool 2)"
	eval "${tool}_bps=\$(awk -v b=\$(col $tool 3) -v s=\$(col $tool 4) 'BEGIN { printf \"%.1f\", s ? b / s : 0 }')"
	eval "${tool}_share=\$(col $tool 5)"
done
row unwind "workload CPU, recorded/bare (dwarf)" "${dwarf_slow}x" "${perf_slow}x" "$(ratio "$dwarf_slow" "$perf_slow")" "<= perf"
row unwind "recorder CPU s (dwarf)" "$dwarf_rcpu" "$perf_rcpu" "$(ratio "$dwarf_rcpu" "$perf_rcpu")" ""
row unwind "bytes per sample (dwarf)" "$dwarf_bps" "$perf_bps" "$(ratio "$dwarf_bps" "$perf_bps")" "smaller"
row unwind "complete stacks % (dwarf)" "$dwarf_share" "$perf_share" "$(ratio "$dwarf_share" "$perf_share")" ">= 99%"
row unwind "workload CPU, recorded/bare (auto)" "${auto_slow}x" "${perf_slow}x" "$(ratio "$auto_slow" "$perf_slow")" ""
row unwind "bytes per sample (auto)" "$auto_bps" "$perf_bps" "$(ratio "$auto_bps" "$perf_bps")" ""
row unwind "complete stacks % (auto)" "$auto_share" "$perf_share" "$(ratio "$auto_share" "$perf_share")" ""
if [ -x "$B/bench/unwind_speed" ]; then
	set -- $("$B/bench/unwind_speed" | sed -n 's/.* libdw \([0-9]*\) ns.* rules \([0-9]*\) ns.*/\2 \1/p')
	if [ $# = 2 ]; then
		row unwind "ns per 22-frame unwind (rules vs libdw)" "$1" "$2" "$(ratio "$1" "$2")" ""
	fi
fi
