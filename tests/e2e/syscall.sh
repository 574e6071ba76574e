#!/bin/sh
# The syscall signal on tests/workloads/syscalls (see its header for what it
# does): exact counts and errors per thread and per syscall, the code that
# made each, the slow calls with their stack, file and duration, the JSON
# keys, and the counts of `strace -f` on the same workload.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
retry_once "a path first unwound before the maps of a fresh address space are read can skip the wrapper caller (issue 14)"
need_bpf

N=1000
K=$((N / 10))
out=$TMPD/run.nsk
# A code path is sampled per --syscall-sample of a thread's syscall time;
# the worker's N getpid take about 100 us in all, which the default 100 us
# interval may give no sample point (its caller is then "[no stack]").  At
# 10 us each call holds a point with probability about 1%: no point in
# 1,000 calls has probability 4e-5.
"$NUSKU" record -q -e syscall --syscall-sample 10us -o "$out" -- "$WORKLOADS/syscalls" $N ||
	fail "record exited $?"

# report VIEW FILE [options]: the view as CSV into FILE.
report() {
	view=$1
	file=$2
	shift 2
	"$NUSKU" report "$out" --by "$view" -f csv "$@" > "$file" 2>"$TMPD/err" ||
		fail "report --by $view: $(cat "$TMPD/err")"
}

# get FILE COLUMN KEY=VALUE...: COLUMN of the CSV rows matching every
# KEY=VALUE (one line per row).
get() {
	file=$1
	want=$2
	shift 2
	awk -F, -v want="$want" -v conds="$*" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{
			n = split(conds, c, " "); ok = 1
			for (i = 1; i <= n; i++) {
				split(c[i], kv, "=")
				if ($(col[kv[1]]) != kv[2]) ok = 0
			}
			if (ok) print $(col[want])
		}' "$file"
}

# expect WHAT GOT WANT
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
	echo "ok: $1: $2"
}

# ---- per thread: the worker's calls are exact ------------------------------
report syscall-thread "$TMPD/thread.csv"
w="comm=sc-worker"
expect "worker getpid count" "$(get "$TMPD/thread.csv" count $w syscall=getpid)" $N
expect "worker getpid caller" "$(get "$TMPD/thread.csv" caller $w syscall=getpid)" do_getpid
expect "worker read count" "$(get "$TMPD/thread.csv" count $w syscall=read)" $N
expect "worker read caller" "$(get "$TMPD/thread.csv" caller $w syscall=read)" do_read_zero
expect "worker write count" "$(get "$TMPD/thread.csv" count $w syscall=write)" $N
expect "worker write caller" "$(get "$TMPD/thread.csv" caller $w syscall=write)" do_write_null
expect "worker close count" "$(get "$TMPD/thread.csv" count $w syscall=close)" $K
expect "worker close errors" "$(get "$TMPD/thread.csv" errors $w syscall=close)" $K
expect "worker close errnos" "$(get "$TMPD/thread.csv" errnos $w syscall=close)" "EBADF:$K"

# ---- per syscall -------------------------------------------------------------
report syscall "$TMPD/sys.csv"
expect "getpid count" "$(get "$TMPD/sys.csv" count syscall=getpid)" $N
expect "getpid errors" "$(get "$TMPD/sys.csv" errors syscall=getpid)" 0
expect "close errors" "$(get "$TMPD/sys.csv" errors syscall=close)" $K
expect "fsync count" "$(get "$TMPD/sys.csv" count syscall=fsync)" 1
expect "fsync caller" "$(get "$TMPD/sys.csv" caller syscall=fsync)" slow_fsync
expect "exit_group count" "$(get "$TMPD/sys.csv" count syscall=exit_group)" 1
expect "exit count (two threads)" "$(get "$TMPD/sys.csv" count syscall=exit)" 2
# The sleeps: 2 x 20 ms in slow_nanosleep, 30 ms in the writer thread.
expect "clock_nanosleep count" "$(get "$TMPD/sys.csv" count syscall=clock_nanosleep)" 3
expect "main thread's clock_nanosleep caller" \
	"$(get "$TMPD/thread.csv" caller comm=syscalls syscall=clock_nanosleep)" slow_nanosleep
# Percentiles are ordered and within the largest call, for every syscall.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ p50 = $(c["p50_ns"]); p99 = $(c["p99_ns"]); mx = $(c["max_ns"])
	  if (p50 + 0 > p99 + 0 || p99 + 0 > mx + 0) { print $(c["syscall"]); bad = 1 } }
	END { exit bad }' "$TMPD/sys.csv" || fail "p50 <= p99 <= max does not hold"
echo "ok: p50 <= p99 <= max"
# The text table at 80 columns: the top caller's first frame (<= 64 bytes;
# here: slow_pipe_read, slow_nanosleep...) and comm are whole in every row,
# not cut to "s...read" to save a few columns of a row that the numbers
# already push past 80 (a chain of callers may end in " ..." after whole
# frames); --width 0 the same.
for v in syscall:sys syscall-thread:thread; do
	for w in 80 0; do
		"$NUSKU" report "$out" --by "${v%:*}" -w $w >"$TMPD/t.txt" 2>/dev/null ||
			fail "report --by ${v%:*} -w $w"
		python3 - "$TMPD/t.txt" "$TMPD/${v#*:}.csv" "${v%:*}" $w <<'PY' || fail "--by ${v%:*} -w $w: a name cut"
import csv, re, sys
want = {(r.get('comm', ''), r['syscall']): r['caller'] for r in csv.DictReader(open(sys.argv[2]))}
lines = [l.rstrip('\n') for l in open(sys.argv[1]) if not l.startswith('#') and l.strip()]
head = re.split(r'  +', lines[0].strip())
n = 0
for l in lines[1:]:
    c = re.split(r'  +', l.strip())
    comm = c[head.index('comm')] if 'comm' in head else ''
    key = (comm, c[head.index('syscall')])
    assert key in want, 'a row not in the CSV (a comm cut?): %r' % l
    # whole, or cut after whole frames ("a <- b ..."), the first (up to
    # 64 bytes) always kept
    full, got = want[key], c[-1]
    frames = full.split(' <- ')
    if got != full and len(frames[0]) <= 64:
        kept = got[:-4].split(' <- ') if got.endswith(' ...') else None
        assert kept and kept == frames[:len(kept)], 'caller %r, not %r' % (got, full)
    n += 1
print("ok: --by %s -w %s: %d rows, first callers and comms whole" % (sys.argv[3], sys.argv[4], n))
PY
	done
done
# Every call is in its histogram: the buckets of each aggregate add up to
# its count, and the worker's getpid histogram holds exactly N calls.
"$NUSKU" report "$out" -f csv --sql "SELECT count(*) AS bad FROM syscall_stat s
	LEFT JOIN (SELECT stat_id, sum(count) AS n FROM syscall_hist GROUP BY stat_id) h
	ON h.stat_id = s.id WHERE COALESCE(h.n, 0) <> s.count" > "$TMPD/hist.csv" 2>/dev/null ||
	fail "--sql over syscall_hist"
expect "aggregates whose histogram does not add up to their count" "$(tail -1 "$TMPD/hist.csv")" 0
"$NUSKU" report "$out" -f csv --sql "SELECT sum(h.count) AS n FROM syscall_hist h
	JOIN syscall_stat s ON s.id = h.stat_id JOIN comm c ON c.id = s.comm_id
	WHERE c.name = 'sc-worker' AND s.nr = (SELECT nr FROM syscall_name
	WHERE name = 'getpid')" > "$TMPD/hist.csv" 2>/dev/null || fail "--sql over syscall_hist"
expect "worker getpid calls in the histograms" "$(tail -1 "$TMPD/hist.csv")" $N

# ---- slow calls (>= 1 ms): who made them, on what, how long ------------------
report syscall-slow "$TMPD/slow.csv"
n=$(get "$TMPD/slow.csv" duration_ns syscall=clock_nanosleep caller=slow_nanosleep | wc -l)
expect "slow nanosleeps from slow_nanosleep" "$n" 2
for d in $(get "$TMPD/slow.csv" duration_ns syscall=clock_nanosleep caller=slow_nanosleep); do
	assert_near "$d" 520000000 500000000 "slow_nanosleep duration (>= 20 ms)"
done
d=$(get "$TMPD/slow.csv" duration_ns syscall=clock_nanosleep caller=sleep_ms)
assert_near "$d" 530000000 500000000 "writer's sleep_ms duration (>= 30 ms)"
get "$TMPD/slow.csv" stack syscall=clock_nanosleep caller=sleep_ms | grep -q "pipe_writer" ||
	fail "writer nanosleep stack lacks pipe_writer"
# The main thread's read (comm=syscalls): under load a read of /dev/zero
# by sc-worker can take a millisecond too.
expect "pipe read caller" "$(get "$TMPD/slow.csv" caller syscall=read comm=syscalls)" slow_pipe_read
get "$TMPD/slow.csv" target syscall=read comm=syscalls | grep -q '^pipe:\[[0-9]*\]$' ||
	fail "pipe read target: $(get "$TMPD/slow.csv" target syscall=read comm=syscalls)"
echo "ok: pipe read target $(get "$TMPD/slow.csv" target syscall=read comm=syscalls)"
# The read waits for a writer that sleeps 30 ms first; how much of that
# the reader sees depends on scheduling, so only its bounds are known.
assert_near "$(get "$TMPD/slow.csv" duration_ns syscall=read comm=syscalls)" 1000500000 999500000 \
	"pipe read duration (1 ms .. 2 s)"

# ---- JSON has the documented keys -------------------------------------------
"$NUSKU" report "$out" --by syscall -f json > "$TMPD/sys.json" || fail "json report"
for k in syscall count errors total_ns p50_ns p99_ns max_ns stack; do
	grep -q "\"$k\": " "$TMPD/sys.json" || fail "JSON rows lack \"$k\""
done
grep -q '"syscall": "getpid", "count": '$N', "errors": 0' "$TMPD/sys.json" ||
	fail "JSON getpid row"
echo "ok: JSON keys"

# ---- a read interrupted by a signal and restarted (SA_RESTART) -------------
# It returns -ERESTARTSYS (counted as a call, not an error; its errno is
# kept), the handler returns through rt_sigreturn, and the read is made
# again.  Callers are not checked here: the run is short.
out=$TMPD/restart.nsk
"$NUSKU" record -q -e syscall -o "$out" -- "$WORKLOADS/syscalls" --restart ||
	fail "record --restart exited $?"
report syscall-thread "$TMPD/rthread.csv"
expect "restarted read: errors" "$(get "$TMPD/rthread.csv" errors comm=syscalls syscall=read)" 0
expect "restarted read: errnos" "$(get "$TMPD/rthread.csv" errnos comm=syscalls syscall=read)" \
	"ERESTARTSYS:1"
expect "rt_sigreturn count" "$(get "$TMPD/rthread.csv" count comm=syscalls syscall=rt_sigreturn)" 1
report syscall-slow "$TMPD/rslow.csv"
assert_near "$(get "$TMPD/rslow.csv" duration_ns syscall=read errno=ERESTARTSYS)" \
	1002500000 997500000 "interrupted read duration (5 ms .. 2 s)"
# The writer writes 20 ms after the signal; the restarted read begins a
# little after it (the handler runs first).
assert_near "$(get "$TMPD/rslow.csv" duration_ns syscall=read errno=)" \
	1007500000 992500000 "restarted read duration (15 ms .. 2 s)"
out=$TMPD/run.nsk

# ---- strace -f on the same workload counts the same ---------------------------
# The full trace is counted here: Debian 12's strace 6.1 often crashes
# printing its -c summary of this (threaded) workload.  Left out: futex
# (whether a pthread_join waits depends on timing), getrandom (mkstemp
# draws its random name from it or not, from run to run).  The launcher's
# own calls in the child before its exec (closing its start pipe) are not
# the program's, and strace -f of the program does not see them either.
command -v strace >/dev/null || skip "strace not installed"
strace -f -o "$TMPD/strace.txt" "$WORKLOADS/syscalls" $N >/dev/null 2>"$TMPD/strace.err" ||
	fail "strace -f syscalls exited $?: $(cat "$TMPD/strace.err")"
awk '
	match($0, /<\.\.\. [a-z0-9_]+ resumed>/) {
		name = substr($0, RSTART + 5, RLENGTH - 14)
		if ($0 ~ / = -1 E[A-Z]+/) err[name]++
		next
	}
	match($0, /^[0-9]+ +[a-z0-9_]+\(/) {
		name = substr($0, RSTART, RLENGTH - 1); sub(/^[0-9]+ +/, "", name)
		calls[name]++
		if ($0 !~ /<unfinished/ && $0 ~ / = -1 E[A-Z]+/) err[name]++
	}
	END { for (n in calls) print n, calls[n], err[n] + 0 }' "$TMPD/strace.txt" |
	sort > "$TMPD/s.txt"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ print $(c["syscall"]), $(c["count"]), $(c["errors"]) }' "$TMPD/sys.csv" |
	sort > "$TMPD/n.txt"
join -a1 -a2 -e - -o 0,1.2,2.2,1.3,2.3 "$TMPD/s.txt" "$TMPD/n.txt" > "$TMPD/both.txt"
awk '$1 == "futex" || $1 == "getrandom" { next }
	$2 != $3 || $4 != $5 { print "differs (strace nusku, errors strace nusku):", $0; bad = 1 }
	END { exit bad }' "$TMPD/both.txt" || fail "counts differ from strace"
echo "ok: $(wc -l < "$TMPD/both.txt") syscalls counted as strace counts them"
echo "syscall: ok"
