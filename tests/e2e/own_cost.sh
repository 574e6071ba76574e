#!/bin/sh
# Nusku's own cost is never the program's: a recording of alloc_churn
# (CPU-bound, every malloc and free through the allocator uprobes, attached
# with -p so the uprobe path is what runs) with every signal shows the
# samples taken inside our probes as one [nusku] row, no probe frame
# anywhere, their share and the BPF run time in the header; and CPU
# samples inside malloc while its uretprobe is pending keep their caller
# (the trampoline's address is replaced by the real return address).
# A CPU-bound program without probe hits (cpu_hot, launched, every
# signal) still gets both header lines.  The launcher's work before the
# program's exec (a long PATH search) is [nusku] too.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
[ -x "$WORKLOADS/alloc_churn" ] || skip "tests/workloads/alloc_churn is not built"

"$WORKLOADS/alloc_churn" 1000000000 >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$TMPD"' EXIT
out=$TMPD/run.nsk
"$NUSKU" record -q -e cpu,alloc,offcpu,syscall,net -d 2 -o "$out" -p "$pid" ||
	fail "record -p exited $?"
kill $pid

"$NUSKU" report --by stack --format csv "$out" >"$TMPD/stack.csv" 2>/dev/null ||
	fail "report --by stack exited $?"
# a program's own frame is bpf_prog_TAG_NAME (16 hex digits); the kernel's
# bpf_prog_put_deferred & co. are not probes: an earlier recording's
# programs freed in a softirq that interrupts the program (seen in CI)
probe='bpf_prog_[0-9a-f]{16}|uprobe|bpf_trace_run|__bpf_trace_|asm_exc_int3|\[uprobes\]'
if grep -E "$probe" "$TMPD/stack.csv" >"$TMPD/bad"; then
	fail "probe frames in --by stack: $(head -c 600 "$TMPD/bad")"
fi
n=$(grep -c '^[0-9]*,[0-9.]*,\[nusku\],' "$TMPD/stack.csv")
[ "$n" = 1 ] || fail "$n [nusku] rows in --by stack, expected 1"
"$NUSKU" report --by function --format csv "$out" >"$TMPD/func.csv" 2>/dev/null ||
	fail "report --by function exited $?"
n=$(grep -c ',\[nusku\],' "$TMPD/func.csv")
[ "$n" = 1 ] || fail "$n [nusku] rows in --by function, expected 1"
echo "ok: [nusku] is one row, no probe frame in any stack"

"$NUSKU" report "$out" >"$TMPD/text" 2>/dev/null || fail "report exited $?"
line=$(grep "^# nusku's own probes: " "$TMPD/text") || fail "no share line: $(head -14 "$TMPD/text")"
pct=$(echo "$line" | sed 's/^# nusku.s own probes: \([0-9.]*\)% of CPU samples.*/\1/')
awk -v p="$pct" 'BEGIN { exit !(p > 0 && p <= 100) }' || fail "share line: $line"
echo "ok: $line"
line=$(grep '^# recording cost: ' "$TMPD/text") || fail "no cost line: $(head -14 "$TMPD/text")"
echo "$line" | awk '{ if (!($4 > 0 && $10 > 0)) exit 1 }' &&
	echo "$line" | grep -Eq ' ms of BPF program time over [0-9]+ runs \([0-9]+ ns/run(; estimated from [0-9.]+% of the time)?\)$' ||
	fail "cost line: $line"
echo "ok: $line"
"$NUSKU" info "$out" | grep -q '^recording cost: [0-9.]* ms of BPF program time over [1-9][0-9]* runs' ||
	fail "nusku info has no cost line"

# malloc's caller survives a pending uretprobe: no trampoline address, and
# the frame above malloc is churn_alloc (its only caller in the loop)
if grep -E '0x7fffffffdfff|\[unknown\]' "$TMPD/stack.csv" | grep malloc >"$TMPD/bad"; then
	fail "malloc stacks through the trampoline: $(head -c 600 "$TMPD/bad")"
fi
grep -q 'malloc <- churn_alloc <- main' "$TMPD/stack.csv" ||
	fail "no CPU sample inside malloc with its caller churn_alloc"
echo "ok: stacks inside malloc keep their caller"

# a launched CPU-bound program with every signal: the same header lines
"$NUSKU" record -q -e all -o "$out" -- "$WORKLOADS/cpu_hot" 1 >/dev/null || fail "record exited $?"
"$NUSKU" report "$out" >"$TMPD/text" 2>/dev/null || fail "report exited $?"
grep -q "^# nusku's own probes: [0-9.]*% of CPU samples" "$TMPD/text" ||
	fail "no share line for cpu_hot"
grep -q '^# recording cost: [0-9.]* ms of BPF program time over [1-9]' "$TMPD/text" ||
	fail "no cost line for cpu_hot"
"$NUSKU" report --by stack --format csv "$out" 2>/dev/null | grep -E "$probe" >"$TMPD/bad" &&
	fail "probe frames in cpu_hot's stacks: $(head -c 600 "$TMPD/bad")"

# the launcher's work before the program's exec is ours too: a PATH search
# through 6,000 directories that do not exist (an execve each, ~20 ms here)
# is [nusku], not the program's; the program found at the end is its own
P=$(awk 'BEGIN { for (i = 0; i < 6000; i++) printf "/nonexistent/d%d:", i }')
PATH="$P$WORKLOADS:$PATH" "$NUSKU" record -q -e cpu -F 4999 -o "$TMPD/launch.nsk" -- cpu_hot 1 \
	>/dev/null || fail "record of cpu_hot through PATH exited $?"
"$NUSKU" report --by stack --format csv "$TMPD/launch.nsk" >"$TMPD/launch.csv" 2>/dev/null ||
	fail "report of the PATH search exited $?"
grep -q '^[1-9][0-9]*,[0-9.]*,\[nusku\],' "$TMPD/launch.csv" ||
	fail "the PATH search is not [nusku]: $(head -5 "$TMPD/launch.csv")"
grep -E 'child_go|execvp|__execvpe' "$TMPD/launch.csv" >"$TMPD/bad" &&
	fail "the launcher's frames are the program's: $(head -c 600 "$TMPD/bad")"
grep -q ',hot_a,cpu_hot,' "$TMPD/launch.csv" || fail "cpu_hot's hot_a not its own: $(head -5 "$TMPD/launch.csv")"
echo "ok: the launcher's PATH search is [nusku], cpu_hot's samples its own"
echo "own_cost: ok"
