#!/bin/sh
# How many frames Nusku names on real programs nobody here wrote, for one
# or more builds side by side (e.g. before and after a change):
#
#   bench/named.sh BUILDDIR [BUILDDIR...]
#
# Each program is recorded with the default signals; every frame of every
# CPU sample counts (as tests/tools/nsk_dump prints them).  A frame is
# named when it has a function name: not "[unknown]+0x..", not
# "module+0x..", not a stripped function's range "module!0x.." (counted
# apart: grouped, not named).  Printed per program: named share
# of user frames, of all frames, and the distinct function rows of
# `report --by function` (a stripped binary shows one row per address).
# Environment: PROGS (a subset of the names below).
set -eu
[ $# -ge 1 ] || { echo "usage: named.sh BUILDDIR [BUILDDIR...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "named.sh: needs root" >&2; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/nusku-named.XXXXXX")
trap 'rm -rf "$T"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }
# one reader for all: the format is the same
DUMP=
for b in "$@"; do [ -x "$b/tests/tools/nsk_dump" ] && DUMP=$b/tests/tools/nsk_dump; done
[ -n "$DUMP" ] || { echo "named.sh: make tests/tools/nsk_dump in a build first" >&2; exit 2; }

seq 400000 >"$T/numbers"
cat >"$T/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
console.log(fib(30));
JS
CTE="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT sum(x) FROM c;"

program() {
	case $1 in
	sqlite3) have sqlite3 && echo "sqlite3 :memory: \"$CTE\"" ;;
	git) have git && [ -d "$(dirname "$0")/../.git" ] &&
		echo "git -C $(cd "$(dirname "$0")/.." && pwd) log -p -n 200" ;;
	gzip) have gzip && echo "gzip -9 -c $T/numbers" ;;
	make) have make && echo "make -s -C $T -f /dev/null -p" ;;
	node) have node && echo "node $T/fib.js" ;;
	python3) have python3 && echo "python3 -c \"import time; [time.time() for _ in range(300000)]\"" ;;
	rust) have rg && echo "rg -c zzz_never /usr/include" ;;
	go) have gofmt && [ -d /usr/lib/go/src/net ] && echo "gofmt -l /usr/lib/go/src/net" ;;
	esac
}

printf '%-8s %-20s %7s %7s %7s %7s %6s\n' program build frames user% range% all% rows
for prog in ${PROGS:-sqlite3 git gzip make node python3 rust go}; do
	cmd=$(program "$prog") || true
	[ -n "$cmd" ] || { echo "$prog: not here, skipped"; continue; }
	for b in "$@"; do
		out=$T/$prog.nsk
		sh -c "\"$b/nusku\" record -q -o $out -- $cmd >/dev/null 2>&1" || true
		[ -s "$out" ] || { echo "$prog: no recording with $b"; continue; }
		rows=$("$b/nusku" report "$out" --format csv 2>/dev/null | awk -F, 'NR > 1' | wc -l)
		"$DUMP" "$out" 2>/dev/null | awk -v p="$prog" -v b="$b" -v rows="$rows" '
			$1 == "sample" {
				n = split($NF, fr, ";")
				for (i = 1; i <= n; i++) {
					f = fr[i]; kern = f ~ /^k:/
					ranged = f ~ /!0x[0-9a-f]+$/
					named = f !~ /^(k:)?\[unknown\]/ && f !~ /\+0x[0-9a-f]+$/ && !ranged
					all++; if (named) alln++
					if (!kern) { u++; if (named) un++; if (ranged) ur++ }
				}
			}
			END { printf "%-8s %-20s %7d %6.1f%% %6.1f%% %6.1f%% %6d\n", p, substr(b, length(b) > 20 ? length(b) - 19 : 1), u,
				u ? 100 * un / u : 0, u ? 100 * ur / u : 0, all ? 100 * alln / all : 0, rows }'
	done
done
