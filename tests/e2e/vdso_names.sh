#!/bin/sh
# tests/workloads/vdso_clock reads CLOCK_MONOTONIC in a loop for a second:
# most of its CPU time is in the vdso, code with no file behind it.  The
# report must name that code from the vdso's own symbol table
# (__vdso_clock_gettime, or its alias clock_gettime), with the share it has
# by construction (~75% here; asserted >= 40), in module [vdso]; and leave
# no [vdso]+0x... row.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
[ -x "$WORKLOADS/vdso_clock" ] || skip "tests/workloads/vdso_clock is not built"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

"$NUSKU" record -q -e cpu -o "$TMPD/v.nsk" -- "$WORKLOADS/vdso_clock" 1 >/dev/null ||
	fail "record exited $?"
"$NUSKU" report --format json -w 0 "$TMPD/v.nsk" >"$TMPD/v.json" || fail "report exited $?"
python3 - "$TMPD/v.json" <<'PY' || fail "vdso names"
import json, re, sys
rows = json.load(open(sys.argv[1]))["rows"]
vd = [r for r in rows if re.fullmatch(r"(__vdso_)?clock_gettime", r["function"])
      and r["module"] == "[vdso]"]
share = sum(r["self_pct"] for r in vd)
raw = [r["function"] for r in rows if r["function"].startswith("[vdso]+0x")]
assert share >= 40, "vdso clock_gettime: %.1f%% of samples, wanted >= 40 (%s)" % (
    share, [(r["function"], r["module"], r["self_pct"]) for r in rows[:5]])
assert not raw, "unnamed vdso rows: %s" % raw[:5]
print("ok: %s %.1f%% of samples" % (vd[0]["function"], share))
PY
