#!/bin/sh
# No process but the target pays for the allocation signal.
#
# A bystander that uses the same libc waits while another program is
# recorded, first through allocator uprobes (--alloc-uprobes), then through
# the sampler.  The proof is in memory: a uprobe is an int3 (or, once the
# kernel optimizes it, a call) written over the probed instruction in each
# address space it is installed in.  So while the recording runs, the
# target's code at the probe points differs from its file, and the
# bystander's malloc and free are byte for byte the file's.  Then the
# bystander allocates in a loop during a recording: none of its allocations
# are in it.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 not installed"

# same PID OBJECT SYMBOL...: "same" when the first 16 bytes of each SYMBOL
# of OBJECT (a path as the maps of PID name it) are in PID's memory as in
# the file, else "differs SYMBOL".
same() {
	python3 - "$@" <<'PY'
import struct, sys
pid, obj, syms = sys.argv[1], sys.argv[2], sys.argv[3:]
def dynsyms(path):
    d = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
    sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for s in sh:
        if s[1] != 11:  # SHT_DYNSYM
            continue
        strtab = sh[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", d, off)
            if shndx and value:
                n = d[strtab[4] + name:d.index(b"\0", strtab[4] + name)].decode()
                out.setdefault(n, value)
    return d, out
data, table = dynsyms(obj)
maps = []
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5] == obj and "x" in f[1]:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        maps.append((lo, hi, int(f[2], 16)))
bad = []
with open(f"/proc/{pid}/mem", "rb") as mem:
    for s in syms:
        v = table[s]
        for lo, hi, pg in maps:
            if pg <= v < pg + (hi - lo):
                mem.seek(lo + v - pg)
                if mem.read(32) != data[v:v + 32]:
                    bad.append(s)
                break
        else:
            bad.append(s + "(unmapped)")
print("differs " + " ".join(bad) if bad else "same")
PY
}

libc_of() { awk '$6 ~ /\/libc\.so/ && $2 ~ /x/ { print $6; exit }' "/proc/$1/maps"; }

mkfifo "$TMPD/by" "$TMPD/tg"
"$WORKLOADS/alloc_churn" 300000 --wait <"$TMPD/by" >"$TMPD/by.out" &
by=$!
exec 3>"$TMPD/by"
i=0
until [ -n "$(libc_of $by)" ]; do
	i=$((i + 1)); [ $i -le 100 ] || fail "bystander has no libc"; sleep 0.1
done
libc=$(libc_of $by)

# uprobes: on the target's libc, not on the bystander's
"$WORKLOADS/alloc_churn" 1000 --wait <"$TMPD/tg" >/dev/null &
tg=$!
exec 4>"$TMPD/tg"
"$NUSKU" record -q -e alloc --alloc-uprobes -o "$TMPD/u.nsk" -p $tg 2>"$TMPD/err" 3>&- 4>&- &
rec=$!
wait_for_meta "$TMPD/u.nsk" alloc.allocator
r=$(same $tg "$libc" malloc free)
[ "$r" != same ] || fail "the target's malloc and free carry no probe (the check cannot see them)"
r=$(same $by "$libc" malloc free calloc realloc)
[ "$r" = same ] || fail "the bystander's libc carries the target's probes: $r"
echo "ok: uprobes in the target ($(same $tg "$libc" malloc free)), none in the bystander"
printf x >&4
exec 4>&-
wait $tg
wait $rec || fail "record -p exited $?: $(cat "$TMPD/err")"

# the sampler: its probe points are in the library, which only the target
# loads; while it runs, the bystander allocates and is not recorded
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/s.nsk" -- "$WORKLOADS/alloc_churn" 1000 --wait \
	<"$TMPD/tg" 2>"$TMPD/err" 3>&- &
rec=$!
exec 4>"$TMPD/tg"
wait_for_meta "$TMPD/s.nsk" alloc.mode
i=0
until tg=$(pgrep -x -P $rec alloc_churn) && grep -q libnusku_alloc "/proc/$tg/maps"; do
	i=$((i + 1)); [ $i -le 300 ] || fail "the target did not load the sampler"; sleep 0.1
done
lib=$(awk '$6 ~ /libnusku_alloc/ { print $6; exit }' "/proc/$tg/maps")
r=$(same $tg "$lib" nusku_sampler_probe nusku_sampler_probe_trap)
[ "$r" != same ] || fail "the sampler's probe points carry no probe"
grep -q libnusku_alloc "/proc/$by/maps" && fail "the bystander loaded the sampler"
r=$(same $by "$libc" malloc free calloc realloc)
[ "$r" = same ] || fail "the bystander's libc carries probes under the sampler: $r"
printf x >&3 # the bystander's 300,000 pairs run now
exec 3>&-
wait $by || fail "bystander exited $?"
printf x >&4
exec 4>&-
wait $rec || fail "record exited $?: $(cat "$TMPD/err")"
n=$("$NUSKU" report "$TMPD/s.nsk" --format csv --sql "SELECT count(*) FROM alloc WHERE pid = $by" 2>/dev/null | tail -1)
[ "$n" = 0 ] || fail "$n allocations of the bystander recorded"
n=$("$NUSKU" report "$TMPD/s.nsk" --format csv --sql "SELECT count(*) FROM alloc WHERE pid = $tg" 2>/dev/null | tail -1)
[ "$n" -ge 1000 ] || fail "$n allocations of the target recorded, expected at least 1000"
echo "ok: sampler probes in the target only; $n target allocations, none of the bystander's"
echo "alloc_confined: ok"
