#!/bin/sh
# Reading recordings made to hurt their reader (issue 17), no BPF needed:
# names holding terminal escapes never reach the terminal raw (report text,
# CSV, folded, JSON, live --snapshot); an empty string and times past 2^63
# load (under --enable-asan, UBSan stops the process if they overflow);
# --since refuses nan, inf and wrapping values; a FIFO with no writer gives
# a message instead of a hang; report on corrupt chunks exits 1 like info;
# --sql is read-only and says when it would drop rows.
. "$TOP_SRCDIR/tests/e2e/lib.sh"

MKNSK=$(dirname "$NUSKU")/tests/report/mknsk
GEN=$(dirname "$NUSKU")/tests/unit/nsk_gen
H=$TMPD/hostile.nsk
"$MKNSK" hostile "$H" || fail "mknsk hostile"

# No ESC (0x1b) or BEL (0x07) byte in FILE.
no_ctl() {
	! LC_ALL=C grep -q "$(printf '[\033\007]')" "$1" || fail "$2: raw control bytes: $(cat -v "$1" | head -5)"
}

for args in "" "--by thread" "--by stack" "--by alloc-site" "--by memory-time" \
	"--format csv" "--format csv --by thread" "--folded" "--tree"; do
	# shellcheck disable=SC2086
	"$NUSKU" report $args "$H" >"$TMPD/out" 2>"$TMPD/err" || fail "report $args: exit $?: $(cat -v "$TMPD/err")"
	no_ctl "$TMPD/out" "report $args (stdout)"
	no_ctl "$TMPD/err" "report $args (stderr)"
done
"$NUSKU" report --by thread "$H" 2>/dev/null | grep -qF '\x1b]0;pwned\x07\x1b[2J' ||
	fail "the escaped name is not shown as \\x1b...: $("$NUSKU" report --by thread "$H" 2>/dev/null | tail -2)"
echo "ok: report text, CSV, folded, tree: escapes shown as \\x1b, none raw"

"$NUSKU" report --format json --by thread "$H" >"$TMPD/json" 2>/dev/null || fail "report --format json"
no_ctl "$TMPD/json" "json"
python3 - "$TMPD/json" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"][0]["comm"] == "\x1b]0;pwned\x07\x1b[2J", d["rows"]
assert d["time_span"]["end_ns"] >= 2**63, d["time_span"]
print("ok: JSON valid, the name intact as \\u001b")
PY

"$NUSKU" live --snapshot "$H" >"$TMPD/live" 2>&1
no_ctl "$TMPD/live" "live --snapshot"
grep -qF '\x1b]0;pwned' "$TMPD/live" || fail "live --snapshot does not show the escaped name"
echo "ok: live --snapshot: escapes shown as \\x1b, none raw"

# Times past 2^63: the span is end - start, not an overflow.
"$NUSKU" report "$H" 2>/dev/null | head -1 | grep -q ': 9223372035\.855 s$' ||
	fail "span: $("$NUSKU" report "$H" 2>/dev/null | head -1)"
echo "ok: a time past 2^63: span 9223372035.855 s"

# --since and --until: finite numbers that fit, or a usage error.
"$GEN" -n 2000 "$TMPD/run.nsk" || fail "nsk_gen"
for v in nan inf -inf 9300000000 1e300 -1 x; do
	"$NUSKU" report --since "$v" "$TMPD/run.nsk" >/dev/null 2>"$TMPD/err"
	st=$?
	[ $st = 2 ] || fail "--since $v: exit $st, expected 2"
	grep -q "since wants seconds" "$TMPD/err" || fail "--since $v: $(cat "$TMPD/err")"
	"$NUSKU" report --until "$v" "$TMPD/run.nsk" >/dev/null 2>&1
	[ $? = 2 ] || fail "--until $v accepted"
done
"$NUSKU" report --min-pct nan --tree "$TMPD/run.nsk" >/dev/null 2>&1
[ $? = 2 ] || fail "--min-pct nan accepted"
n=$("$NUSKU" report --since 9000000000 "$TMPD/run.nsk" 2>/dev/null | awk '/^# CPU samples/ { print $0 }')
echo "$n" | grep -q '(0 selected)' || fail "--since 9000000000 selects: $n"
echo "ok: --since/--until: nan, inf, too large refused; the largest selects nothing"

# A FIFO with no writer: a clear message within the wait, for each reader.
mkfifo "$TMPD/fifo"
for cmd in info report "live --snapshot"; do
	# shellcheck disable=SC2086
	timeout 20 "$NUSKU" $cmd "$TMPD/fifo" >/dev/null 2>"$TMPD/err"
	st=$?
	[ $st = 1 ] || fail "$cmd on a FIFO with no writer: exit $st (124: it hung)"
	grep -q "FIFO.*no writer" "$TMPD/err" || fail "$cmd on a FIFO: $(cat "$TMPD/err")"
done
# ... and a FIFO whose writer comes is read.
("$GEN" -n 500 "$TMPD/fifo" &)
"$NUSKU" report "$TMPD/fifo" >"$TMPD/out" 2>&1 || fail "report on a FIFO with a writer: $(cat "$TMPD/out")"
grep -q '^# CPU samples: 500' "$TMPD/out" || fail "FIFO: $(head -3 "$TMPD/out")"
# ... stdin still is, for live too.
"$GEN" -n 500 - | "$NUSKU" live --snapshot - >"$TMPD/out" 2>&1 || fail "live - from a pipe"
"$NUSKU" report /dev/zero >/dev/null 2>"$TMPD/err"; st=$?
[ $st = 1 ] && grep -q "not a regular file or a FIFO" "$TMPD/err" || fail "report /dev/zero: $st $(cat "$TMPD/err")"
echo "ok: FIFO without a writer: one line, exit 1; with one, read; devices refused"

# Corrupt chunks: report prints what it could read, then exits 1 as info does.
cp "$TMPD/run.nsk" "$TMPD/bad.nsk"
off=$("$NUSKU" info --chunks "$TMPD/run.nsk" | awk '$3 == "records" && $1 == 0 { print $2 }')
printf '\377' | dd of="$TMPD/bad.nsk" bs=1 seek=$((off + 64 + 100)) conv=notrunc 2>/dev/null
"$NUSKU" info "$TMPD/bad.nsk" >/dev/null 2>&1; ist=$?
"$NUSKU" report "$TMPD/bad.nsk" >"$TMPD/out" 2>"$TMPD/err"; rst=$?
[ $ist = 1 ] && [ $rst = 1 ] || fail "corrupt chunk: info exits $ist, report $rst (both should be 1)"
grep -q 'corrupt' "$TMPD/out" || fail "the report does not say the file is damaged"
grep -q '^# CPU samples' "$TMPD/out" || fail "the report of what could be read is missing"
grep -q 'damaged' "$TMPD/err" || fail "no message on stderr: $(cat "$TMPD/err")"
"$NUSKU" report --format csv "$TMPD/bad.nsk" >/dev/null 2>&1
[ $? = 1 ] || fail "report --format csv on a corrupt file exits 0"
echo "ok: corrupt chunk: report and info both exit 1, the report printed"

# --sql is read-only.
cd "$TMPD" || fail "cd"
for q in "ATTACH '$TMPD/made.db' AS x" "VACUUM INTO '$TMPD/made.db'" \
	"DELETE FROM sample" "DROP TABLE sample" "UPDATE recording SET value = 0" \
	"CREATE TABLE t(a)" "PRAGMA writable_schema = 1"; do
	"$NUSKU" report --sql "$q" "$TMPD/run.nsk" >/dev/null 2>"$TMPD/err"
	st=$?
	[ $st = 1 ] || fail "--sql \"$q\": exit $st"
	[ "$(wc -l < "$TMPD/err")" = 1 ] || fail "--sql \"$q\": $(cat "$TMPD/err")"
done
[ ! -e "$TMPD/made.db" ] || fail "--sql created a file"
"$NUSKU" report --sql "SELECT 1; SELECT 2" "$TMPD/run.nsk" >/dev/null 2>"$TMPD/err"
[ $? = 1 ] && grep -q 'statement 1 returns rows' "$TMPD/err" || fail "two SELECTs: $(cat "$TMPD/err")"
"$NUSKU" report --format csv --sql "CREATE TEMP TABLE n AS SELECT count(*) AS c FROM sample; SELECT c FROM n" \
	"$TMPD/run.nsk" 2>/dev/null | tail -1 | grep -qx 2000 || fail "TEMP tables no longer work in --sql"
"$NUSKU" report --sql "PRAGMA table_info(sample)" "$TMPD/run.nsk" >/dev/null 2>&1 || fail "PRAGMA table_info refused"
echo "ok: --sql: no ATTACH, no writes, no pragmas set, TEMP tables allowed, two result sets refused"

# A real program that names itself with escapes, recorded: the same.
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$NUSKU" record -q -e cpu -o "$TMPD/evil.nsk" -- sh -c \
		'printf "\033]0;pwned\007\033[2J" > /proc/self/comm; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' ||
		fail "record of the self-naming program"
	"$NUSKU" report --by thread "$TMPD/evil.nsk" >"$TMPD/out" 2>&1 || fail "report --by thread"
	no_ctl "$TMPD/out" "recorded: report --by thread"
	grep -qF '\x1b]0;pwned\x07\x1b[2J' "$TMPD/out" || fail "recorded: the name is not shown escaped: $(cat -v "$TMPD/out")"
	"$NUSKU" live --snapshot "$TMPD/evil.nsk" >"$TMPD/out" 2>&1
	no_ctl "$TMPD/out" "recorded: live --snapshot"
	echo "ok: a recorded program named \\x1b]0;pwned\\x07\\x1b[2J: shown escaped"
else
	echo "skip: recording the self-naming program needs root and BTF"
fi
echo "report_hostile: ok"
