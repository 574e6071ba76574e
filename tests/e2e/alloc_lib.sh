# Helpers for the allocation tests: sourced after lib.sh.

# site_col CSV SITE COLUMN: the value of COLUMN in the row of SITE of a CSV
# report (`--format csv`), empty if there is no such row.
site_col() {
	awk -F, -v s="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["site"] == s { print $col[c]; exit }' "$1"
}

# assert_site CSV SITE COLUMN EXPECTED [TOLERANCE]
assert_site() {
	v=$(site_col "$1" "$2" "$3")
	[ -n "$v" ] || fail "$2: no $3 (no row for the site?)"
	assert_near "$v" "$4" "${5:-0}" "$2 $3"
}

# no_negative CSV: no number in the report is below zero.
no_negative() {
	awk -F, 'NR > 1 { for (i = 1; i <= NF; i++) if ($i ~ /^-[0-9]/) { print; bad = 1 } }
		END { exit bad }' "$1" || fail "negative numbers in $1"
}
