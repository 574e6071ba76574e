#!/bin/sh
# Allocation stacks without frame pointers against heaptrack:
# tests/workloads/allocchain_nofp (main -> outer -> inner -> leaf, built
# with -fomit-frame-pointer, allocating through malloc, strdup and fopen,
# ROUNDS rounds) under `nusku record -e alloc` (--call-graph auto, the
# default), under --call-graph fp, and under heaptrack (which unwinds in the
# process with libunwind).  Runs alternate, RUNS each, plus unrecorded runs.
# Medians.  Rows:
#   workload slowdown  the workload's own CPU time, recorded / bare
#   recorder CPU       user+sys of the run minus the workload's own
#   bytes per alloc    output size / allocations made in the loop
#   complete stacks    of the loop's allocations, the share charged to
#                      main;outer;inner;leaf and, for strdup and fopen, the
#                      function that called them
#
#   bench/unwind_alloc.sh [BUILDDIR]   Environment: RUNS (3), ROUNDS (100000)
set -eu
B=${1:-${B:-.}}
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-100000}
W=$B/tests/workloads/allocchain_nofp
[ -x "$W" ] && [ -x "$NUSKU" ] || die "build first: make && make tests/workloads/allocchain_nofp"
command -v heaptrack >/dev/null || die "heaptrack is not installed (apt-get install heaptrack)"
[ "$(id -u)" = 0 ] || { echo "bench/unwind_alloc.sh: needs root" >&2; exit 77; }

# complete: how many of the loop's allocations have their full path, from
# folded stacks on stdin ("a;b;c N"; frames may carry " (file)"); -b: N is
# bytes, turned into a count by each site's (fixed) size
complete() {
	python3 -c '
import re, sys
size = {"leaf": 200, "copy_name": 41, "open_file": 472, "keep_name": 41}
by_bytes = len(sys.argv) > 1
ok = 0
for line in sys.stdin:
    line = line.strip()
    if not line: continue
    stack, n = line.rsplit(" ", 1)
    fr = [re.sub(r" \(.*\)$", "", f) for f in stack.strip(";").split(";")]
    path = ";" + ";".join(fr) + ";"
    for site in ("copy_name", "open_file", "keep_name", "leaf"):
        want = ";main;outer;inner;leaf;" + ("" if site == "leaf" else site + ";")
        if site in fr:
            if want in path and (site != "leaf" or not
                                 any(s in fr for s in size if s != "leaf")):
                ok += int(n) / (size[site] if by_bytes else 1)
            break
print(int(round(ok)))' "$@"
}

allocs=$((ROUNDS + ROUNDS + ROUNDS / 10 + ROUNDS / 100))

one_run() { # TOOL I
	tool=$1 i=$2 file=
	case $tool in
	bare) set -- "$W" "$ROUNDS" ;;
	auto|fp) file=$T/$tool$i.nsk
		set -- "$NUSKU" record -q -e alloc --call-graph "$tool" -o "$file" -- "$W" "$ROUNDS" ;;
	heaptrack) file=$T/ht$i
		set -- heaptrack -o "$file" "$W" "$ROUNDS" ;;
	esac
	m=$(measure "$T/out" "$@")
	[ "$(echo "$m" | cut -d' ' -f3)" = 0 ] || die "$tool run failed: $*"
	wcpu=$(sed -n 's/^allocchain: cpu_us \([0-9]*\).*/\1/p' "$T/out")
	[ -n "$wcpu" ] || die "$tool: the workload printed nothing"
	rcpu=$(awk -v t="$(echo "$m" | cut -d' ' -f2)" -v w="$wcpu" 'BEGIN { printf "%.4f", t - w / 1e6 }')
	bytes=0 ok=0
	case $tool in
	auto|fp) bytes=$(wc -c <"$file")
		ok=$("$NUSKU" report "$file" --by alloc-site --folded 2>/dev/null | complete -b)
		rm -f "$file" ;;
	heaptrack) file=$(ls "$file".*) bytes=$(wc -c <"$file")
		heaptrack_print "$file" -F "$T/ht.folded" --flamegraph-cost-type allocations >/dev/null 2>&1
		ok=$(complete <"$T/ht.folded")
		rm -f "$file" "$T/ht.folded" ;;
	esac
	echo "$wcpu $rcpu $bytes $ok" >>"$T/$tool.tsv"
}

col() { cut -d' ' -f"$2" "$T/$1.tsv" | median; }

rm -f "$T"/*.tsv
for i in $(seq "$RUNS"); do
	for tool in bare auto heaptrack fp; do
		one_run $tool "$i"
	done
done
bare=$(col bare 1)
for tool in auto heaptrack fp; do
	eval "${tool}_slow=\$(awk -v a=\$(col $tool 1) -v b=$bare 'BEGIN { printf \"%.2f\", a / b }')"
	eval "${tool}_rcpu=\$(col $tool 2)"
	eval "${tool}_bpa=\$(awk -v b=\$(col $tool 3) -v n=$allocs 'BEGIN { printf \"%.2f\", b / n }')"
	eval "${tool}_share=\$(awk -v k=\$(col $tool 4) -v n=$allocs 'BEGIN { printf \"%.1f\", 100 * k / n }')"
done
# the "perf" column holds heaptrack here
row ualloc "workload CPU, recorded/bare (auto)" "${auto_slow}x" "${heaptrack_slow}x" "$(ratio "$auto_slow" "$heaptrack_slow")" "vs heaptrack"
row ualloc "recorder CPU s (auto)" "$auto_rcpu" "$heaptrack_rcpu" "$(ratio "$auto_rcpu" "$heaptrack_rcpu")" ""
row ualloc "bytes per allocation (auto)" "$auto_bpa" "$heaptrack_bpa" "$(ratio "$auto_bpa" "$heaptrack_bpa")" ""
row ualloc "complete stacks % (auto)" "$auto_share" "$heaptrack_share" "$(ratio "$auto_share" "$heaptrack_share")" ">= 99%"
row ualloc "workload CPU, recorded/bare (fp)" "${fp_slow}x" "${heaptrack_slow}x" "$(ratio "$fp_slow" "$heaptrack_slow")" ""
row ualloc "complete stacks % (fp)" "$fp_share" "$heaptrack_share" "$(ratio "$fp_share" "$heaptrack_share")" ""
