#!/bin/sh
# Continuous mode's cost (issue 16 item 4): `nusku record --continuous`
# with its default rates against the bare program, runs alternating, RUNS
# pairs each, medians.  Rows:
#   cpu_work     bench/cpu_work ROUNDS: fixed CPU work, two threads
#   alloc_churn  tests/workloads/alloc_churn PAIRS: malloc/free pairs
#   + offcpu     the same recorded with -e cpu,offcpu
#   + alloc      the same recorded with -e cpu,alloc,offcpu
#   sqlite3      sqlite3 :memory:, a recursive CTE of ROWS rows
#   make -j2     tests/workloads' C files compiled
# Columns: the program's CPU time recorded / bare (bench/timed's third
# field: what other load on the machine disturbs least), the recorder's
# own CPU time per second of the run, as a share of one core.  Then a
# long run (LONG seconds of cpu_hot, and of alloc_churn, --segment SEG)
# sampling the recorder's RSS and CPU every SEG: RSS must stay flat.
#
#   bench/continuous.sh [BUILDDIR]
# Environment: RUNS (5), ROUNDS (20000), PAIRS (200000000), ROWS (5000000), SEG (10s),
# LONG (180; 0 skips the long runs).
set -eu
B=${1:-${B:-.}}
RUNS=${RUNS:-5}
. "$(dirname "$0")/lib.sh"
TIMED=$B/bench/timed
ROUNDS=${ROUNDS:-20000}
PAIRS=${PAIRS:-200000000}
ROWS=${ROWS:-5000000}
SEG=${SEG:-10s}
LONG=${LONG:-180}
for x in "$NUSKU" "$TIMED" "$B/bench/cpu_work" "$B/tests/workloads/alloc_churn" \
	 "$B/tests/workloads/cpu_hot"; do
	[ -x "$x" ] || die "build first: $x"
done
[ "$(id -u)" = 0 ] || { echo "continuous.sh: needs root" >&2; exit 77; }

# pairs NAME PROGRAM...: RUNS bare/recorded pairs, one row
pairs() {
	name=$1
	shift
	: >"$T/ratio"
	: >"$T/rec"
	for i in $(seq "$RUNS"); do
		"$TIMED" "$T/bare.t" "$@" >/dev/null
		rm -rf "$T/d"
		# shellcheck disable=SC2086
		measure /dev/null "$NUSKU" record -q --continuous "$T/d" --segment 2s $OPTS -- \
			"$TIMED" "$T/rec.t" "$@" >"$T/all"
		bare=$(cut -d' ' -f3 "$T/bare.t")
		rec=$(cut -d' ' -f3 "$T/rec.t")
		wall=$(cut -d' ' -f1 "$T/all")
		all=$(cut -d' ' -f2 "$T/all")
		echo "$rec $bare" | awk '{ printf "%.4f\n", $1 / $2 }' >>"$T/ratio"
		# the recorder: everything the run cost but the program
		echo "$all $rec $wall" | awk '{ printf "%.4f\n", 100 * ($1 - $2 / 1e9) / $3 }' >>"$T/rec"
	done
	printf "%-12s %8s x %10s%% %s\n" "$name" "$(median <"$T/ratio")" \
		"$(median <"$T/rec")" "($(ls "$T/d" | wc -l) segments)"
}

echo "program CPU recorded/bare (median of $RUNS), recorder CPU % of a core"
OPTS=
pairs cpu_work "$B/bench/cpu_work" "$ROUNDS"
pairs alloc_churn "$B/tests/workloads/alloc_churn" "$PAIRS"
# the same with the signals not in the defaults
OPTS="-e cpu,offcpu"
pairs "  + offcpu" "$B/tests/workloads/alloc_churn" "$PAIRS"
OPTS="-e cpu,alloc,offcpu"
pairs "  + alloc" "$B/tests/workloads/alloc_churn" "$PAIRS"

OPTS=
if command -v sqlite3 >/dev/null; then
	pairs sqlite3 sh -c "echo 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL
		SELECT x + 1 FROM c WHERE x < $ROWS) SELECT sum(x) FROM c;' |
		sqlite3 :memory:"
fi
# make -j2: the C workloads of tests/ compiled (cc -O2 -c, one file each)
mkdir -p "$T/proj"
cp "$B"/tests/workloads/cpu_hot.c "$B"/tests/workloads/alloc_churn.c \
   "$B"/tests/workloads/callchain.c "$B"/tests/workloads/blocking.c \
   "$B"/tests/workloads/forker.c "$B"/tests/workloads/syscalls.c "$T/proj/"
printf 'OBJS = %s\nall: $(OBJS)\n%%.o: %%.c\n\tcc -O2 -c $<\n' \
	"$(cd "$T/proj" && ls *.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >"$T/proj/Makefile"
pairs "make -j2" sh -c "rm -f $T/proj/*.o; make -s -j2 -C $T/proj"

[ "$LONG" -gt 0 ] || exit 0
# long NAME PROGRAM...: the recorder's RSS (kB) and CPU (% of a core over
# the last interval) every SEG
long() {
	name=$1
	shift
	rm -rf "$T/d"
	"$NUSKU" record -q --continuous "$T/d" --segment "$SEG" --keep 1m -- "$@" \
		>/dev/null 2>&1 &
	pid=$!
	step=${SEG%s}
	prev=0
	echo "$name: t(s) rss(kB) cpu(%) segments"
	t=0
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$LONG" ]; do
		sleep "$step"
		t=$((t + step))
		[ -r /proc/$pid/stat ] || break
		rss=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
		ticks=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
		hz=$(getconf CLK_TCK)
		echo "$t $rss $ticks $prev $hz $step $(ls "$T/d" | wc -l)" |
			awk '{ printf "  %4d %8d %6.2f %3d\n", $1, $2, 100 * ($3 - $4) / $5 / $6, $7 }'
		prev=$ticks
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
long cpu_hot "$B/tests/workloads/cpu_hot" "$((LONG + 30))"
long alloc_churn "$B/tests/workloads/alloc_churn" 100000000000
