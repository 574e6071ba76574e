#!/bin/sh
# Overhead of the off-CPU signal on a scheduler-heavy load: two threads pass
# a byte back and forth over two pipes (tests/workloads/blocking --pingpong:
# 2 blocks and 2 wakeups per round trip, a few us each), pinned to one CPU,
# measured by the workload itself as the CPU time it spent on the round
# trips (tracer start and stop are not counted), best of RUNS:
#
#   bare                      no tracer
#   floor                     bench/ss_count: tp_btf sched_switch and
#                             sched_waking that only count
#   floor+time                bench/ss_count -t: and time each interval
#   nusku -e offcpu           default --min-block (10 us): most blocks are
#                             shorter and are dropped in the kernel
#   nusku -e offcpu 1us       --min-block 1us: nearly every block recorded
#   bcc offcputime -p PID     /usr/sbin/offcputime-bpfcc (folded output)
#   perf sched record         every scheduler event, system-wide
#
# Prints a table: time, slowdown against bare, output size, and what each
# tool recorded.  A tool that cannot run here says why instead.
#
#   bench/offcpu.sh [BUILDDIR]        (default: the current directory)
#
# Environment: ROUNDS (default 100000), RUNS (default 3), BCC_DELAY (seconds
# the workload waits for bcc to compile and attach, default 10).
set -eu
B=${1:-.}
NUSKU=$B/nusku
W=$B/tests/workloads/blocking
FLOOR=$B/bench/ss_count
ROUNDS=${ROUNDS:-100000}
RUNS=${RUNS:-3}
BCC_DELAY=${BCC_DELAY:-10}
BCC=/usr/sbin/offcputime-bpfcc
[ -x "$NUSKU" ] && [ -x "$W" ] || { echo "offcpu.sh: build first (make && make check TESTS=)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "offcpu.sh: needs root" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

# The CPU time the workload spent on its round trips (probes run in the
# switching threads, so their cost is in it); wall time on this shared
# machine measures the neighbours' builds as much as the tool.
ns_of() { sed -n 's/^pingpong rounds=[0-9]* ns=[0-9]* cpu_ns=\([0-9]*\).*/\1/p' "$1"; }

# best_of NAME OUTFILE CMD...: the fastest of RUNS runs, in ns; the output
# file of the fastest run is kept as $T/NAME.best.
best_of() {
	name=$1 outf=$2
	shift 2
	best=
	for i in $(seq "$RUNS"); do
		rm -f "$outf"
		"$@" > "$T/$name.out" 2> "$T/$name.err" || {
			echo "offcpu.sh: $name failed: $(tail -n 1 "$T/$name.err")" >&2
			return 1
		}
		d=$(ns_of "$T/$name.out")
		[ -n "$d" ] || { echo "offcpu.sh: $name failed: $(tail -n 1 "$T/$name.err")" >&2; return 1; }
		if [ -z "$best" ] || [ "$d" -lt "$best" ]; then
			best=$d
			[ -e "$outf" ] && cp "$outf" "$T/$name.best"
		fi
	done
	echo "$best"
}

size_of() { [ -e "$1" ] && wc -c < "$1" | tr -d ' ' || echo 0; }

row() { # name ns size what
	awk -v n="$1" -v t="$2" -v b="$bare" -v s="$3" -v w="$4" -v r="$ROUNDS" 'BEGIN {
		printf "| %-26s | %9.1f | %6.2fx | %7.2f us | %10s | %s |\n", n, t / 1e6,
			t / b, (t - b) / (2 * r) / 1e3, s ? sprintf("%.1f KiB", s / 1024) : "-", w }'
}

# The load is pinned to one CPU: a pipe ping-pong across two CPUs is many
# times slower than on one and which one the scheduler picks changes from
# run to run; on one CPU every block is a context switch.
PIN="taskset -c 0"
bare=$(best_of bare "$T/bare.none" $PIN "$W" --pingpong "$ROUNDS")

echo "offcpu bench: $ROUNDS round trips (2 blocks each) on one CPU, best of $RUNS; kernel $(uname -r), $(nproc) CPUs"
echo
echo "| tool                       |    cpu ms | slowdown | cost/block |     output | recorded |"
echo "|----------------------------|-----------|----------|------------|------------|----------|"
row "bare" "$bare" 0 "-"
# the floors: tp_btf sched_switch + sched_waking that only count (and with
# -t time each thread's intervals), the least an off-CPU tracer can cost
if [ -x "$FLOOR" ]; then
	t=$(best_of floor "$T/none" "$FLOOR" -- $PIN "$W" --pingpong "$ROUNDS") &&
		row "floor: count" "$t" 0 "switches and wakeups counted"
	t=$(best_of floor_t "$T/none" "$FLOOR" -t -- $PIN "$W" --pingpong "$ROUNDS") &&
		row "floor+time: + interval" "$t" 0 "+ time off CPU per thread" &&
		floor_t=$t
fi

for mb in 10us 1us; do
	f=$T/run.nsk
	t=$(best_of "nusku$mb" "$f" "$NUSKU" record -q -e offcpu --min-block "$mb" \
		-o "$f" -- $PIN "$W" --pingpong "$ROUNDS") || continue
	n=$("$NUSKU" report "$T/nusku$mb.best" -f csv --sql \
		"SELECT count(*) FROM offcpu" 2>/dev/null | tail -n 1)
	lost=$("$NUSKU" report "$T/nusku$mb.best" -f csv --sql \
		"SELECT coalesce(sum(count), 0) FROM loss WHERE source LIKE 'offcpu.%'" \
		2>/dev/null | tail -n 1)
	row "nusku -e offcpu ($mb)" "$t" "$(size_of "$T/nusku$mb.best")" \
		"$n intervals >= $mb, $lost lost"
done

# bcc compiles offcputime against the kernel's headers; a kernel without
# them gets Debian's merged into one tree (as bench/alloc.sh does), so that
# what stops it, if anything, is the kernel itself: offcputime needs a
# kprobe on finish_task_switch.
bcc_headers() {
	[ -e "/lib/modules/$(uname -r)/build" ] && return 0
	[ -n "${BCC_KERNEL_SOURCE:-}" ] && return 0
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -1)
	arch=$(ls -d "${common%-common}"-amd64 "${common%-common}"-arm64 2>/dev/null | head -1)
	[ -n "$common" ] && [ -n "$arch" ] || return 0
	mkdir -p "$T/kernel"
	cp -rs "$common/." "$T/kernel/" 2>/dev/null || true
	cp -rsf "$arch/." "$T/kernel/" 2>/dev/null || true
	BCC_KERNEL_SOURCE=$T/kernel
	export BCC_KERNEL_SOURCE
}

# bcc attaches to a running pid: the workload waits BCC_DELAY s first.
if [ -x "$BCC" ]; then
	bcc_headers
	bcc_run() {
		$PIN "$W" --pingpong "$ROUNDS" "$BCC_DELAY" &
		wp=$!
		"$BCC" -f -p "$wp" > "$T/bcc.folded" 2> "$T/bcc.stderr" &
		bp=$!
		wait "$wp"
		kill -INT "$bp" 2>/dev/null || true
		wait "$bp" 2>/dev/null || true
		# it worked if it printed folded stacks ("a;b;c N")
		grep -q ';' "$T/bcc.folded"
	}
	if t=$(best_of bcc "$T/bcc.folded" bcc_run 2>/dev/null); then
		row "bcc offcputime -p" "$t" "$(size_of "$T/bcc.best")" \
			"$(grep -c ';' "$T/bcc.best") folded stacks"
	else
		why=$(cat "$T/bcc.folded" "$T/bcc.stderr" 2>/dev/null |
			grep -m1 -o -i "unable to find kernel headers\|failed to compile[^<]*\|kprobes/blacklist\|cannot attach kprobe[^,]*" || true)
		case $why in
		*kprobe*) why="needs kprobes (finish_task_switch): none on this kernel" ;;
		esac
		echo "| bcc offcputime -p          |       n/a |          |            |            | ${why:-failed} |"
	fi
else
	echo "| bcc offcputime -p          |       n/a |          |            |            | $BCC not installed |"
fi

if command -v perf >/dev/null; then
	if t=$(best_of perf "$T/perf.data" perf sched record -q -o "$T/perf.data" -- \
		$PIN "$W" --pingpong "$ROUNDS"); then
		row "perf sched record" "$t" "$(size_of "$T/perf.best")" \
			"every sched event, system-wide"
	else
		echo "| perf sched record          |       n/a |          |            |            | $(tail -n 1 "$T/perf.err") |"
	fi
fi
