#!/bin/sh
# The program's own mappings under the preloaded sampler: the library tells
# its mmap, munmap and mprotect calls itself, so the kernel-side syscall
# probe (which runs for every syscall of the machine) is not attached at
# all while every process is the sampler's; it is attached once a process
# the sampler cannot reach (a static binary) is recorded, and then the
# sampler's processes are not counted twice.  alloc_sites' site_mmap makes
# 3 anonymous mappings of 1 MiB and unmaps 2, by construction.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
[ -x "$WORKLOADS/alloc_sites_static" ] || skip "no static build of alloc_sites"

# runs COST_KEY FILE: the run count nusku info gives a program's cost
runs() {
	"$NUSKU" info "$2" | awk -v k="cost.bpf.$1" '$1 == k { print $3 }'
}

out=$TMPD/dyn.nsk
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -- "$WORKLOADS/alloc_sites" 20 ||
	fail "record exited $?"
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/dyn.csv" 2>/dev/null || fail "report"
assert_site "$TMPD/dyn.csv" site_mmap allocs 3
assert_site "$TMPD/dyn.csv" site_mmap bytes 3145728
assert_site "$TMPD/dyn.csv" site_mmap frees 2
n=$(runs alloc_sys_exit "$out") # none: the kernel kept its statistics off
[ -z "$n" ] || [ "$n" = 0 ] || fail "the syscall probe ran $n times under the sampler alone"
echo "ok: the sampler alone tells site_mmap's mappings; the syscall probe never ran"

# A fork is its parent's copy, sampler and all, even while it is already in
# an exec whose image has no environment yet: a shell that forks and execs
# 200 times never brings the syscall probe in.  The kernel's statistics are
# kept on for this run, so the count is whole, not estimated from windows.
stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$TMPD"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
"$NUSKU" record -q -e alloc -o "$TMPD/sh.nsk" -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done' 2>"$TMPD/sh.err" ||
	fail "record of the shell exited $?"
echo "$stats" >/proc/sys/kernel/bpf_stats_enabled
! grep -q 'cannot use the sampler' "$TMPD/sh.err" || fail "a fallback: $(cat "$TMPD/sh.err")"
# (with the statistics on, the cost of every program is written: a
# missing line is a failure too)
n=$(runs alloc_sys_exit "$TMPD/sh.nsk")
[ "$n" = 0 ] || fail "the syscall probe ran '$n' times for a shell's forks and execs"
echo "ok: 200 forks and execs stay the sampler's; the syscall probe never ran"

out=$TMPD/mix.nsk
# The static binary waits (--wait) until the recorder has said it falls
# back, that is, until its probes (and the syscall probe) are in: what a
# process does before the recorder hears of it is not seen (alloc_fallback.sh).
mkfifo "$TMPD/go"
"$NUSKU" record -e alloc --alloc-sample 1 -o "$out" -- sh -c \
	"'$WORKLOADS/alloc_sites_static' 20 --wait >/dev/null && '$WORKLOADS/alloc_sites' 20" \
	<"$TMPD/go" >/dev/null 2>"$TMPD/err" &
rec=$!
exec 3>"$TMPD/go"
i=0
until grep -q "alloc_sites_static (pid [0-9]*) cannot use the sampler" "$TMPD/err"; do
	i=$((i + 1))
	[ $i -le 1800 ] || fail "no word of the static binary's fallback: $(cat "$TMPD/err")"
	sleep 0.1
done
printf x >&3
exec 3>&-
wait $rec || fail "record of both exited $?: $(cat "$TMPD/err")"
"$NUSKU" report "$out" --by leaks --format csv >"$TMPD/mix.csv" 2>/dev/null || fail "report --by leaks"
# the dynamic one: once, from the sampler (the syscall probe saw it too)
rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["process"] == "alloc_sites" && $c["site"] == "site_mmap" { print $c["exit_bytes"] }' "$TMPD/mix.csv")
[ "$rows" = 1048576 ] || fail "alloc_sites' site_mmap live at exit: '$rows', want 1048576 once"
# the static one: its mappings come from the syscall probe, attached for it
# (its run count is an estimate from windows that may miss a short process);
# by its stack: the site may be its mmap wrapper, the static binary being
# the allocator object of its process too
rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["process"] != "alloc_sites" && $c["stack"] ~ /(^| )site_mmap( |$)/ { print $c["exit_bytes"] }' "$TMPD/mix.csv")
[ "$rows" = 1048576 ] || fail "the static binary's site_mmap live at exit: '$rows', want 1048576: $(grep site_mmap "$TMPD/mix.csv")"
"$NUSKU" report "$out" --format csv -q "SELECT count(*) FROM alloc WHERE fn = 'mmap' AND
	size = 1048576 AND pid IN (SELECT pid FROM process WHERE comm = 'alloc_sites')" \
	>"$TMPD/n.csv" 2>/dev/null ||
	fail "--sql"
[ "$(tail -1 "$TMPD/n.csv")" = 3 ] || fail "alloc_sites' 1 MiB mappings: $(tail -1 "$TMPD/n.csv"), want 3"
echo "alloc_mappings: ok"
