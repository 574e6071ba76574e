#!/bin/sh
# nusku live answers the questions of nusku report with the same rules:
# on the same recording, live's CPU view (self time per function, from the
# stacks' leaf functions and its running totals) and its memory view
# (bytes and calls per allocation site, report/alloc_site.c's rule) give
# report --by function's self share and --by alloc-site's bytes and
# allocations, to the precision live prints (a tenth of a percent, a
# tenth of a K or M, three digits of a count).  Every allocation is
# recorded, so alloc_sites' bytes are exact by construction.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf

# (each program launched itself: a sanitized build takes no preloaded
# sampler through a shell's environment)
C=$TMPD/cpu.nsk M=$TMPD/mem.nsk
"$NUSKU" record -q -e cpu -o "$C" -- "$WORKLOADS/cpu_hot" 1 >/dev/null ||
	fail "record cpu_hot exited $?"
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$M" -- "$WORKLOADS/alloc_sites" 5 >/dev/null ||
	fail "record alloc_sites exited $?"
"$NUSKU" live --snapshot -n 1 --top 40 --view cpu "$C" >"$TMPD/cpu.txt" ||
	fail "live --view cpu exited $?"
"$NUSKU" live --snapshot -n 1 --top 40 --view alloc "$M" >"$TMPD/alloc.txt" ||
	fail "live --view alloc exited $?"
"$NUSKU" report --by function --format csv --limit 1000 "$C" >"$TMPD/fn.csv" 2>/dev/null ||
	fail "report --by function exited $?"
"$NUSKU" report --by alloc-site --format csv --limit 1000 "$M" >"$TMPD/site.csv" 2>/dev/null ||
	fail "report --by alloc-site exited $?"

python3 - "$TMPD/cpu.txt" "$TMPD/alloc.txt" "$TMPD/fn.csv" "$TMPD/site.csv" <<'PY' ||
import csv, sys

def rows(path, header):
    lines = open(path).read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.split()[:len(header)] == header)
    out = []
    for l in lines[i + 1:]:
        if not l.startswith("   ") or l.startswith("--"):
            break
        out.append(l.split())
    return out

def human(s):
    mult = {"B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if s[-1] in mult:
        return float(s[:-1]) * mult[s[-1]], mult[s[-1]] * (0.05 if s[-1] != "B" else 0.5)
    return float(s), 0.5

def count(s):
    m = {"K": 1e3, "M": 1e6, "G": 1e9}
    if s[-1] in m:
        return float(s[:-1]) * m[s[-1]], m[s[-1]] * 0.05
    return float(s), 0.5

fail = []
# CPU: LAST% TOTAL% CPU FUNCTION; report: self_pct per function
fn = {r["function"]: float(r["self_pct"]) for r in csv.DictReader(open(sys.argv[3]))}
cpu = {r[3]: float(r[1].rstrip("%")) for r in rows(sys.argv[1], ["LAST%", "TOTAL%"])}
for f in ("hot_a", "hot_b", "hot_c"):
    if f not in cpu or abs(cpu[f] - fn.get(f, -1)) > 0.051:
        fail.append("cpu %s: live %s%%, report %s%%" % (f, cpu.get(f), fn.get(f)))
# memory: LIVE GROWTH ALLOCATED CALLS SITE; report: bytes, allocs per site
site = {r["site"]: r for r in csv.DictReader(open(sys.argv[4]))}
mem = {r[4]: r for r in rows(sys.argv[2], ["LIVE", "GROWTH"])}
for s in ("site_small", "site_calloc", "site_aligned", "site_thread", "site_mmap"):
    if s not in mem or s not in site:
        fail.append("site %s: live %s, report %s" % (s, s in mem, s in site))
        continue
    b, tb = human(mem[s][2])
    n, tn = count(mem[s][3])
    if abs(b - int(site[s]["bytes"])) > tb or abs(n - int(site[s]["allocs"])) > tn:
        fail.append("site %s: live %s bytes %s calls, report %s bytes %s allocs" %
                    (s, mem[s][2], mem[s][3], site[s]["bytes"], site[s]["allocs"]))
sys.exit("\n".join(fail) if fail else 0)
PY
	fail "live and report disagree:
$(cat "$TMPD/cpu.txt" "$TMPD/alloc.txt" | head -40)"
echo "live_agrees: ok (cpu_hot's functions and alloc_sites' five sites agree with report)"
