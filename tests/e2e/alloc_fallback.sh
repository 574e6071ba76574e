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
# ---- a process whose mount namespace hides the library -------------------------
# (a container): its loader cannot preload it, so it gets uprobes
command -v unshare >/dev/null || skip "unshare not installed"
# The program waits (--wait) until the recorder has said so, that is, until
# its uprobes are in: a process the recorder hears of only after it ended
# cannot be probed at all.
lib=$(dirname "$NUSKU")/preload
mkfifo "$TMPD/go"
"$NUSKU" record -e alloc --alloc-sample 1 -o "$TMPD/ns.nsk" -- unshare -m sh -c \
	"mount -t tmpfs none '$lib' && exec '$WORKLOADS/alloc_sites' 20 --wait" \
	<"$TMPD/go" >/dev/null 2>"$TMPD/ns.err" &
rec=$!
exec 3>"$TMPD/go"
i=0
until grep -q "alloc_sites (pid [0-9]*) cannot use the sampler (the sampler is not in its mount namespace)" \
	"$TMPD/ns.err"; do
	i=$((i + 1))
	[ $i -le 1800 ] || fail "no word of the hidden library: $(cat "$TMPD/ns.err")"
	sleep 0.1
done
printf x >&3
exec 3>&-
wait $rec || fail "record in a mount namespace exited $?: $(cat "$TMPD/ns.err")"
"$NUSKU" report "$TMPD/ns.nsk" --by alloc-site --format csv >"$TMPD/ns.csv" 2>/dev/null || fail "report"
assert_site "$TMPD/ns.csv" site_leak exit_bytes 200000
echo "ok: a process that cannot see the library is recorded through uprobes"
echo "alloc_fallback: ok"
