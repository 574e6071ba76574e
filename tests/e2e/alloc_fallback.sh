#!/bin/sh
# Where the sampler cannot go, and where preloading is hard.
#
# A statically linked program cannot load the sampler: the recorder says so
# once and probes its allocator with uprobes, with the same exact answers.
# A #! script that starts two copies of alloc_sites (one in the background),
# recorded with every signal (-e all): the sampler passes from the shell to both
# children through the environment, and each child's allocations are its
# own (site_leak holds 10000 * scale bytes, scales 20 and 10).  A process in
# a mount namespace where the library's path is hidden gets uprobes.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
retry_once "seen once under ASan: part of a static program leak was attributed elsewhere, not reproduced since"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf

# Records "$@" in the background, its stdin a fifo, until its stderr ($1)
# says the fallback ($2, a grep pattern); then lets the program that waits
# on its stdin (--wait) go, and waits for the recording.
record_until_said() {
	err=$1 said=$2
	shift 2
	rm -f "$TMPD/go"
	mkfifo "$TMPD/go"
	"$NUSKU" record "$@" <"$TMPD/go" >/dev/null 2>"$err" &
	rec=$!
	exec 3>"$TMPD/go"
	i=0
	until grep -q "$said" "$err"; do
		i=$((i + 1))
		[ $i -le 1800 ] || fail "no word of '$said': $(cat "$err")"
		sleep 0.1
	done
	printf x >&3
	exec 3>&-
	wait $rec || fail "record exited $?: $(cat "$err")"
}

# ---- static: uprobes, said once ---------------------------------------------
[ -x "$WORKLOADS/alloc_sites_static" ] || skip "no static build of alloc_sites"
"$NUSKU" record -e alloc --alloc-sample 1 -o "$TMPD/st.nsk" -- "$WORKLOADS/alloc_sites_static" 20 \
	>/dev/null 2>"$TMPD/st.err" || fail "record of the static program exited $?: $(cat "$TMPD/st.err")"
grep -q "cannot use the sampler (statically linked)" "$TMPD/st.err" ||
	fail "no word of the fallback: $(cat "$TMPD/st.err")"
[ "$(grep -c 'cannot use the sampler' "$TMPD/st.err")" = 1 ] || fail "the fallback said more than once"
dump "$TMPD/st.nsk" "$TMPD/st.dump"
grep -q '^meta alloc.mode uprobes' "$TMPD/st.dump" || fail "static program not recorded through uprobes"
"$NUSKU" report "$TMPD/st.nsk" --by alloc-site --format csv >"$TMPD/st.csv" 2>/dev/null || fail "report"
assert_site "$TMPD/st.csv" site_leak exit_bytes 200000
assert_site "$TMPD/st.csv" site_calloc allocs 6000
echo "ok: static program through uprobes"

# ---- a #! script and its children, every signal --------------------------------
cat >"$TMPD/wrap.sh" <<EOS
#!/bin/sh
"$WORKLOADS/alloc_sites" 20 &
"$WORKLOADS/alloc_sites" 10
wait
EOS
chmod +x "$TMPD/wrap.sh"
"$NUSKU" record -q -e all --alloc-sample 1 -o "$TMPD/sh.nsk" -- "$TMPD/wrap.sh" >/dev/null 2>"$TMPD/sh.err" ||
	fail "record of a #! script exited $?: $(cat "$TMPD/sh.err")"
dump "$TMPD/sh.nsk" "$TMPD/sh.dump"
grep -q '^meta alloc.mode sampler' "$TMPD/sh.dump" || fail "the script was not recorded through the sampler"
"$NUSKU" report "$TMPD/sh.nsk" --format csv --sql "SELECT DISTINCT pid FROM alloc ORDER BY pid" \
	2>/dev/null | tail -n +2 >"$TMPD/pids"
found=
for p in $(cat "$TMPD/pids"); do
	"$NUSKU" report "$TMPD/sh.nsk" --by alloc-site --pid "$p" --format csv >"$TMPD/p.csv" 2>/dev/null ||
		fail "report --pid $p"
	v=$(site_col "$TMPD/p.csv" site_leak exit_bytes)
	[ -n "$v" ] && found="$found $v"
done
found=$(echo $found | tr ' ' '\n' | sort -n | tr '\n' ' ')
[ "$found" = "100000 200000 " ] || fail "site_leak per child: '$found', expected 100000 and 200000"
echo "ok: each child of the script holds its own leak:$found"
# ---- the same program again, its environment stripped ------------------------------
# The kernel side lets an exec pass the sampler check without the watcher
# when its file passed before and its environment still preloads the
# library (bpf/proc.bpf.c exec_wakes): alloc_sites passes once, then runs
# with LD_PRELOAD taken out and must get uprobes all the same (it waits
# until the recorder has said so), then runs again with the sampler.
cat >"$TMPD/strip.sh" <<EOS
#!/bin/sh
"$WORKLOADS/alloc_sites" 10
sleep 0.2
env -u LD_PRELOAD "$WORKLOADS/alloc_sites" 20 --wait
"$WORKLOADS/alloc_sites" 5
EOS
chmod +x "$TMPD/strip.sh"
record_until_said "$TMPD/strip.err" \
	"alloc_sites (pid [0-9]*) cannot use the sampler (its environment does not preload the sampler)" \
	-e alloc --alloc-sample 1 -o "$TMPD/strip.nsk" -- "$TMPD/strip.sh"
[ "$(grep -c 'cannot use the sampler' "$TMPD/strip.err")" = 1 ] ||
	fail "more than the stripped run fell back: $(cat "$TMPD/strip.err")"
found=
for p in $("$NUSKU" report "$TMPD/strip.nsk" --format csv \
	--sql "SELECT pid FROM alloc GROUP BY pid ORDER BY min(time)" 2>/dev/null | tail -n +2); do
	"$NUSKU" report "$TMPD/strip.nsk" --by alloc-site --pid "$p" --format csv >"$TMPD/p.csv" 2>/dev/null ||
		fail "report --pid $p"
	v=$(site_col "$TMPD/p.csv" site_leak exit_bytes)
	[ -n "$v" ] && found="$found $v"
done
[ "$found" = " 100000 200000 50000" ] || fail "site_leak per run: '$found', expected 100000 200000 50000"
echo "ok: a program that passed once still falls back without the library:$found"

# ---- a process whose mount namespace hides the library -------------------------
# (a container): its loader cannot preload it, so it gets uprobes
command -v unshare >/dev/null || skip "unshare not installed"
# The program waits (--wait) until the recorder has said so, that is, until
# its uprobes are in: a process the recorder hears of only after it ended
# cannot be probed at all.
lib=$(dirname "$NUSKU")/preload
record_until_said "$TMPD/ns.err" \
	"alloc_sites (pid [0-9]*) cannot use the sampler (the sampler is not in its mount namespace)" \
	-e alloc --alloc-sample 1 -o "$TMPD/ns.nsk" -- unshare -m sh -c \
	"mount -t tmpfs none '$lib' && exec '$WORKLOADS/alloc_sites' 20 --wait"
"$NUSKU" report "$TMPD/ns.nsk" --by alloc-site --format csv >"$TMPD/ns.csv" 2>/dev/null || fail "report"
assert_site "$TMPD/ns.csv" site_leak exit_bytes 200000
echo "ok: a process that cannot see the library is recorded through uprobes"
echo "alloc_fallback: ok"
