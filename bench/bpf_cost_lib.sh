# What bench/offcpu.sh and bench/net.sh share (sourced, not run): cases run
# in turn under bench/bpf_cost, and the awk that reads their results.
#
# A results file holds "run CASE ROUND FIGURES..." per case and round and
# "prog CASE ROUND NAME RUNS NS" per BPF program of the case's tracer.

# bench_ready NAME FILE...: exits unless every FILE is built and we are root.
bench_ready() {
	name=$1
	shift
	[ -f "$B/Makefile" ] && make -C "$B" -s bench/ss_count bench/bpf_cost >/dev/null 2>&1
	for f in "$@"; do
		[ -x "$f" ] || { echo "$name: build first (make && make check TESTS=)" >&2; exit 2; }
	done
	[ "$(id -u)" = 0 ] || { echo "$name: needs root" >&2; exit 77; }
}

# bench_header TEXT [KEEP]: the table's title, with the machine it ran on;
# and a copy of $T/results to KEEP, when given.
bench_header() {
	[ -n "${2:-}" ] && cp "$T/results" "$2"
	echo "$1 ($(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
	echo
}

# awk functions: median(LIST) of a space-separated list; add_prog() on a
# "prog" line; per_event(CASE, DEN) the median run time per event;
# prog_rows(CASES, PER, UNIT) prints each program's ns per run
# and runs per PER units (programs that ran under PER/100 times left out).
BPF_COST_AWK='
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		if (!n) return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function add_prog(   pk) {
		tot[$2 SUBSEP $3] += $6
		pk = $2 SUBSEP $4
		if (!(pk in pruns)) names[$2] = names[$2] " " $4
		pns[pk] = pns[pk] " " ($5 ? $6 / $5 : 0)
		pruns[pk] = pruns[pk] " " $5
	}
	# the median over the rounds of case k of the run time of its programs over
	# den[k, round] (the runs of the programs that count the events)
	function per_event(k, den,   r, l) {
		for (r = 1; r <= 1000; r++)
			if ((k SUBSEP r) in den && den[k SUBSEP r] > 0)
				l = l " " tot[k SUBSEP r] / den[k SUBSEP r]
		return median(l)
	}
	function prog_rows(cases, per, unit,   c, n, i, k, m, nm, j, pk, runs) {
		print ""
		print "ns per run (median), runs per " unit ", of each program:"
		n = split(cases, c, " ")
		for (i = 1; i <= n; i++) {
			k = c[i]
			m = split(names[k], nm, " ")
			for (j = 1; j <= m; j++) {
				pk = k SUBSEP nm[j]
				runs = median(pruns[pk])
				if (runs < per / 100) continue
				printf "  %-12s %-16s %7.1f ns  %5.2f runs\n", k, nm[j],
					median(pns[pk]), runs / per
			}
		}
	}
'
