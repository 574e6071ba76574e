#!/bin/sh
# What the default recording costs on real programs, side by side in one
# run: bare, `nusku record` with its defaults, `perf record -g` and
# heaptrack, alternating tool by tool, RUNS times each (median).
#
#   bench/default.sh [BUILDDIR]
#
# For each program two figures, as ratios of the bare run: the program's
# own run time (bench/timed, from just before its exec to its exit, so a
# tool's start-up and shut-down are not in it; heaptrack's includes its
# own start, see run()) and the whole command's wall time (what a user
# waits for).  heaptrack follows no child: of make it traces make itself.  Then what an unrelated process pays while
# a recording runs: an allocation loop's time, and a getpid loop's per call
# beside the default and beside -e all (the syscall signal, not a default);
# and exact mode's cost per malloc/free pair against heaptrack's.
#
# Environment: RUNS (default 3), ROWS (the CTE's rows, default 1500000).
set -eu
B=${1:-.}
NUSKU=$B/nusku
TIMED=$B/bench/timed
CHURN=$B/tests/workloads/alloc_churn
RUNS=${RUNS:-3}
ROWS=${ROWS:-1500000}
[ -x "$NUSKU" ] && [ -x "$TIMED" ] && [ -x "$CHURN" ] ||
	{ echo "default.sh: build first (make, make bench/timed tests/workloads/alloc_churn)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "default.sh: needs root" >&2; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }
now() { date +%s%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# A small C project for make -j2: 11 files of some arithmetic.
mkdir -p "$T/proj"
for i in 0 1 2 3 4 5 6 7 8 9 10; do
	{
		echo "int f$i(int x);"
		echo "int f$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * $i; return s; }"
		for j in 0 1 2 3 4 5 6 7 8 9; do
			echo "static inline int g${i}_$j(int v) { return v * $j + $i; }"
			echo "int h${i}_$j(int v); int h${i}_$j(int v) { return g${i}_$j(v) + f$i(v); }"
		done
	} >"$T/proj/f$i.c"
done
printf 'int main(void) { return 0; }\n' >"$T/proj/main.c"
{
	printf 'OBJS = main.o'
	for i in 0 1 2 3 4 5 6 7 8 9 10; do printf ' f%s.o' $i; done
	printf '\nprog: $(OBJS)\n\tcc -o $@ $(OBJS)\n%%.o: %%.c\n\tcc -O2 -c $<\n'
} >"$T/proj/Makefile"
CTE="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $ROWS) SELECT sum(x) FROM c;"

# program NAME: the command line of each program
program() {
	case $1 in
	sqlite3) echo "sqlite3 :memory:" ;;
	ls) echo "ls -lR /usr/lib" ;;
	alloc_churn) echo "$CHURN 2000000" ;;
	make) echo "make -s -j2 -C $T/proj" ;;
	esac
}

# run TOOL PROGRAM: one run; prints "program_ns wall_ns"
run() {
	tool=$1 prog=$2
	rm -f "$T/proj"/*.o "$T/proj/prog" "$T/rt" "$T"/ht.* "$T/p.data" "$T/n.nsk"
	set -- $(program "$prog")
	case $tool in
	bare) set -- "$TIMED" "$T/rt" "$@" ;;
	nusku) set -- "$NUSKU" record -q -o "$T/n.nsk" -- "$TIMED" "$T/rt" "$@" ;;
	perf) set -- perf record -q -g -o "$T/p.data" -- "$TIMED" "$T/rt" "$@" ;;
	# heaptrack traces the program it starts, not that one's children
	# (its library takes itself out of LD_PRELOAD): started under timed
	# it would time an untraced program (alloc_churn: 32 ms, against
	# 542 under heaptrack).  So timed starts heaptrack, and its program
	# time includes heaptrack's own start (its script, its interpreter).
	heaptrack) set -- "$TIMED" "$T/rt" heaptrack -o "$T/ht" "$@" ;;
	esac
	t0=$(now)
	if [ "$prog" = sqlite3 ]; then
		echo "$CTE" | "$@" >/dev/null 2>&1 || true
	else
		"$@" >/dev/null 2>&1 </dev/null || true
	fi
	t1=$(now)
	[ -s "$T/rt" ] || { echo "- -"; return; }
	echo "$(cut -d' ' -f1 "$T/rt") $((t1 - t0))"
}

tools="bare nusku"
have perf && tools="$tools perf" || echo "default.sh: perf not installed (apt-get install linux-perf)" >&2
have heaptrack && tools="$tools heaptrack" || echo "default.sh: heaptrack not installed" >&2
programs="alloc_churn ls make"
have sqlite3 && programs="sqlite3 $programs" || echo "default.sh: sqlite3 not installed" >&2

echo "default recording, median of $RUNS, as ratios of the bare run (program's own time / whole command's wall time)"
printf '%-12s %16s' program "bare (s)"
for t in $tools; do [ $t = bare ] || printf ' %22s' "$t"; done
echo
for p in $programs; do
	run bare $p >/dev/null # warm the page cache (ls -lR reads a tree)
	for i in $(seq "$RUNS"); do
		for t in $tools; do run $t $p >>"$T/$p.$t"; done
	done
	bp=$(cut -d' ' -f1 "$T/$p.bare" | median)
	bw=$(cut -d' ' -f2 "$T/$p.bare" | median)
	printf '%-12s %16s' "$p" "$(awk -v a="$bp" -v b="$bw" 'BEGIN { printf "%.3f / %.3f", a / 1e9, b / 1e9 }')"
	for t in $tools; do
		[ $t = bare ] && continue
		tp=$(cut -d' ' -f1 "$T/$p.$t" | grep -v - | median)
		tw=$(cut -d' ' -f2 "$T/$p.$t" | grep -v - | median)
		printf ' %22s' "$(awk -v a="$tp" -v b="$bp" -v c="$tw" -v d="$bw" 'BEGIN {
			if (a == "" || c == "") print "failed"; else printf "%.2fx / %.2fx", a / b, c / d }')"
	done
	echo
done

# ---- an unrelated process while a recording runs --------------------------------
# beside EVENTS CMD...: CMD's output while nusku records sleep with EVENTS
# ("" for the default set); the recording is a second old when CMD starts
beside() {
	ev=$1
	shift
	"$NUSKU" record -q ${ev:+-e "$ev"} -o "$T/idle.nsk" -- sleep 3 2>/dev/null &
	rec=$!
	sleep 1
	"$@"
	wait $rec || true
}
loop_us() { sed -n 's/^alloc_churn: .* pairs in \([0-9]*\) us.*/\1/p'; }
# four loops of 1000000 pairs a run, alone and beside in turn: one loop is
# ~17 ms here and moves by more than the 2% looked for from one to the next
four() { for k in 1 2 3 4; do "$CHURN" 1000000 | loop_us; done; }
alone= by=
for i in $(seq "$RUNS"); do
	alone="$alone $(four)"
	by="$by $(beside "" four)"
done
a=$(echo $alone | tr ' ' '\n' | median); b=$(echo $by | tr ' ' '\n' | median)
echo "unrelated alloc_churn 1000000 (4 x RUNS loops) while nusku records sleep: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f ms alone, %.1f ms beside: %.2fx", a / 1e3, b / 1e3, b / a }')"

# The default set has no syscall tracepoint (docs/syscall.md): a getpid loop of
# another process pays nothing; -e all puts every task on the slow path.
SC_LOOP=$B/bench/sc_loop
if [ -x "$SC_LOOP" ]; then
	ns() { sed -n 's/^ns_per_call \([0-9.]*\).*/\1/p'; }
	sa= sd= se=
	for i in $(seq "$RUNS"); do
		sa="$sa $("$SC_LOOP" 1000000 | ns)"
		sd="$sd $(beside "" "$SC_LOOP" 1000000 | ns)"
		se="$se $(beside all "$SC_LOOP" 1000000 | ns)"
	done
	a=$(echo $sa | tr ' ' '\n' | median); d=$(echo $sd | tr ' ' '\n' | median); e=$(echo $se | tr ' ' '\n' | median)
	echo "unrelated getpid loop while nusku records sleep: $(awk -v a="$a" -v d="$d" -v e="$e" 'BEGIN {
		printf "%.1f ns a call alone, %.1f beside the default (%.2fx), %.1f beside -e all (%.2fx)", a, d, d / a, e, e / a }')"
else
	echo "default.sh: no $SC_LOOP (make bench/sc_loop): the unrelated syscall loop is skipped" >&2
fi

# ---- exact mode, per malloc/free pair ------------------------------------------
n=200000
ex= ht= bare=
for i in $(seq "$RUNS"); do
	bare="$bare $("$CHURN" $n | loop_us)"
	ex="$ex $("$NUSKU" record -q -e alloc --alloc-sample 1 -o "$T/x.nsk" -- "$CHURN" $n 2>/dev/null | loop_us)"
	have heaptrack && ht="$ht $(heaptrack -o "$T/ht" "$CHURN" $n 2>/dev/null | loop_us)"
	rm -f "$T"/ht.*
done
b=$(echo $bare | tr ' ' '\n' | median); e=$(echo $ex | tr ' ' '\n' | median)
h=$(echo ${ht:-0} | tr ' ' '\n' | median)
echo "exact mode, alloc_churn $n pairs: bare $(awk -v b="$b" -v n=$n 'BEGIN { printf "%.3f", b / n }') us/pair," \
	"nusku --alloc-sample 1 $(awk -v e="$e" -v n=$n 'BEGIN { printf "%.3f", e / n }') us/pair," \
	"heaptrack $(awk -v h="$h" -v n=$n 'BEGIN { printf "%.3f", h / n }') us/pair"
