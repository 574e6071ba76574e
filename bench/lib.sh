# Helpers for the benchmark scripts (sourced, not run).  Each bench/<signal>.sh
# prints rows with `row`; bench/run prints the header once and runs them all.
#
#   B      the build directory (nusku, tests/, bench/cpu_work)
#   T      a scratch directory, removed at exit
#   RUNS   runs per tool and case (alternating nusku, perf, nusku, ...)

B=${B:-.}
NUSKU=$B/nusku
RUNS=${RUNS:-3}
T=${T:-$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")}
trap 'rm -rf "$T"' EXIT

die() { echo "bench: $*" >&2; exit 1; }

# measure OUT CMD...: runs CMD with stdout to OUT, stderr dropped, and
# prints "wall_s cpu_s status": wall time, and user+sys CPU of CMD and
# everything it waited for (a recorder and its launched workload).
measure() {
	out=$1
	shift
	python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "w") as out:
    p = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
w = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{w:.6f} {r.ru_utime + r.ru_stime:.6f} {p.returncode}")
PY
}

# sec N: seconds with 3 decimals
sec() {
	awk -v s="$1" 'BEGIN { printf "%.3f\n", s }'
}

# median of the numbers on stdin
median() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with 2 decimals ("-" when B is 0 or missing)
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# row SIGNAL WHAT NUSKU PERF NUSKU/PERF GOAL: one line of the table
row() {
	printf '%-6s %-38s %12s %12s %8s  %s\n' "$@"
}

header() {
	row signal measure nusku perf ratio goal
	row ------ -------------------------------------- ------------ ------------ -------- ----
}
