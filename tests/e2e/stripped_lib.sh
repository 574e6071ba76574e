# Helpers for the stripped-code tests: sourced after lib.sh and record_lib.sh.

command -v objcopy > /dev/null || skip "objcopy not installed (apt-get install binutils)"
command -v nm > /dev/null || skip "nm not installed (apt-get install binutils)"

# build_id FILE: the file's GNU build-id, in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# fde_name BIN FUNCTION MODULE: the name a stripped copy MODULE of BIN gives
# FUNCTION, MODULE!0xSTART: FDE ranges start where the symbols do.
fde_name() {
	addr=$(nm "$1" | awk -v f="$2" '$3 == f { print $1 }')
	[ -n "$addr" ] || fail "no symbol $2 in $1"
	printf '%s!0x%x\n' "$3" "0x$addr"
}

# record_hot BIN OUT [SECONDS]: a CPU recording of BIN, dumped to OUT.dump
record_hot() {
	"$NUSKU" record -q -e cpu -o "$2" -- "$1" "${3:-2}" > /dev/null ||
		fail "record of $1 exited $?"
	dump "$2" "$2.dump"
}

# assert_named DUMP: hot_a, hot_b, hot_c by name, at 60/30/10.
assert_named() {
	assert_near "$(self_share "$1" hot_a)" 60 5 "hot_a self share (named)"
	assert_near "$(self_share "$1" hot_b)" 30 5 "hot_b self share (named)"
	assert_near "$(self_share "$1" hot_c)" 10 5 "hot_c self share (named)"
}
