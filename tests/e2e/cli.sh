#!/bin/sh
# The command table: help, version, unknown commands and exit statuses.
. "$TOP_SRCDIR/tests/e2e/lib.sh"

"$NUSKU" --version | grep -q '^nusku [0-9]' || fail "--version"
"$NUSKU" --help | grep -q 'record' || fail "--help lists commands"
"$NUSKU" bogus 2>"$TMPD/err"; st=$?
[ $st = 2 ] || fail "unknown command exits $st, expected 2"
grep -q "not a command" "$TMPD/err" || fail "unknown command message"
"$NUSKU" 2>/dev/null; [ $? = 2 ] || fail "no command must exit 2"
for c in record report live info; do
	"$NUSKU" $c --help >/dev/null 2>&1
	st=$?
	[ $st = 0 ] || [ $st = 2 ] || fail "$c --help exits $st"
done
echo "cli: ok"
