#!/bin/sh
# A Rust program (tests/workloads/rust_hot.rs, built here with rustc -O and
# line tables) spends its time in one generic function and the hashbrown
# methods it instantiates.  The report must show them the Rust way: no
# legacy hash element (17h...), no $LT$ escapes, no ::h<hash> suffix, no
# raw _ZN/_R name; and the hot generic function named, it and the map's
# methods (their inlined frames included) with most of the samples.  Once with the default (legacy) mangling, once
# with v0.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
RUSTC=${RUSTC:-$(command -v rustc)} || skip "rustc is not installed (Debian's rustc)"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"

check() { # default|v0 (the default is legacy, asking for it needs -Z)
	bin=$TMPD/rust_hot_$1
	flag=; [ "$1" = default ] || flag="-C symbol-mangling-version=$1"
	# shellcheck disable=SC2086
	"$RUSTC" -C debuginfo=1 -O $flag -o "$bin" \
		"$TOP_SRCDIR/tests/workloads/rust_hot.rs" 2>"$TMPD/rustc.err" ||
		skip "rustc cannot build with $1 mangling: $(head -3 "$TMPD/rustc.err")"
	"$NUSKU" record -q -e cpu -o "$TMPD/$1.nsk" -- "$bin" 1 >/dev/null ||
		fail "record exited $?"
	"$NUSKU" report --format json -w 0 "$TMPD/$1.nsk" >"$TMPD/$1.json" ||
		fail "report exited $?"
	python3 - "$TMPD/$1.json" "$1" <<'PY' || fail "$1 names"
import json, re, sys
rows = json.load(open(sys.argv[1]))["rows"]
raw = re.compile(r"17h[0-9a-f]{16}|::h[0-9a-f]{16}\b|\$(LT|GT|C|u[0-9a-f]+)\$|^_ZN|^_R")
bad = [r["function"] for r in rows if r["function"] and raw.search(r["function"])]
assert not bad, "mangled names left: %s" % bad[:5]
fill = sum(r["total_pct"] for r in rows if re.fullmatch(r"rust_hot::fill(::<u64, u32>)?", r["function"]))
# fill calls the map's methods for each key; rustc inlines them into it,
# and the standard library's helpers into them (differently by each rustc:
# the self time lands in whichever inlined frame is innermost), so the
# map's share is the total of its busiest method, inlined frames included
hot = max([r["total_pct"] for r in rows if re.search(r"RawTable|HashMap", r["function"])] or [0])
assert fill >= 20, "the hot generic fill: %.1f%% of samples, wanted >= 20" % fill
assert hot >= 50, "the map under fill: %.1f%% of samples, wanted >= 50" % hot
table = [r["function"] for r in rows if "RawTable" in r["function"]]
assert table, "no hashbrown RawTable method named"
print("ok: %s: fill %.1f%%, the map %.1f%% of samples; e.g. %s" % (sys.argv[2], fill, hot, table[0]))
PY
}
check default
check v0
