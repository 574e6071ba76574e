# Helpers for the record tests: sourced after lib.sh.
# NSK_DUMP prints a recording one record per line (tests/tools/nsk_dump.c).
NSK_DUMP=${NSK_DUMP:-$(dirname "$NUSKU")/tests/tools/nsk_dump}

# dump FILE > TEXT; fails the test when the file does not read back whole.
dump() {
	"$NSK_DUMP" "$1" > "$2" || fail "$1 does not read back complete (nsk_dump exit $?)"
	grep -q '^end ' "$2" || fail "$1 has no END record"
	! grep '^problem' "$2" || fail "$1: the reader reported problems"
}

# self_share DUMP FUNCTION [PID]: percent of sampled CPU whose innermost user
# frame is FUNCTION (of PID's samples only, if given).
self_share() {
	awk -v f="$2" -v p="${3:-}" '
		$1 == "sample" && (p == "" || $2 == p) {
			n = split($6, fr, ";"); leaf = ""
			for (i = 1; i <= n; i++) if (fr[i] !~ /^k:/) { leaf = fr[i]; break }
			tot += $4; if (leaf == f) w += $4
		}
		END { printf "%.1f\n", tot ? 100 * w / tot : 0 }' "$1"
}

# total_share DUMP FRAME: percent of sampled CPU with FRAME anywhere in the stack.
total_share() {
	awk -v f="$2" '
		$1 == "sample" {
			tot += $4; n = split($6, fr, ";")
			for (i = 1; i <= n; i++) if (fr[i] == f) { w += $4; break }
		}
		END { printf "%.1f\n", tot ? 100 * w / tot : 0 }' "$1"
}

# pid_share DUMP FUNCTION PID: percent of FUNCTION's self samples that are
# PID's (where a function's samples are attributed).
pid_share() {
	awk -v f="$2" -v p="$3" '
		$1 == "sample" {
			n = split($6, fr, ";"); leaf = ""
			for (i = 1; i <= n; i++) if (fr[i] !~ /^k:/) { leaf = fr[i]; break }
			if (leaf != f) next
			tot += $4; if ($2 == p) w += $4
		}
		END { printf "%.1f\n", tot ? 100 * w / tot : 0 }' "$1"
}

# wait_for_meta FILE KEY: until a recording being written holds META KEY
# (a signal writes its META once attached), at most 180 s (an ASan build
# of the recorder takes a minute to start).
wait_for_meta() {
	i=0
	until "$NSK_DUMP" "$1" 2>/dev/null | grep -q "^meta $2 "; do
		i=$((i + 1))
		[ $i -le 1800 ] || fail "no META $2 in $1 after 180 s"
		sleep 0.1
	done
}
