#!/bin/sh
# Every process's command line is recorded, however short it lived: the
# exec event carries the new program's arguments (bpf/proc.bpf.c), read
# from its stack at the exec, not from /proc after the fact.
#   1. 100 runs of /bin/true from a shell loop, each with its own argument:
#      each exec'd process has "/bin/true argN" (all 100, each once), each
#      forked child (before its exec) the shell's command line.
#   2. An argument of 3000 bytes comes whole; one of 5000 is cut (at 4096
#      bytes, NSK_PROC_ARGS_MAX), its start intact.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
need_bpf

N=100
cat >"$TMPD/loop.sh" <<EOS
i=0
while [ \$i -lt $N ]; do /bin/true arg\$i; i=\$((i + 1)); done
EOS
"$NUSKU" record -q -e net -o "$TMPD/loop.nsk" -- sh "$TMPD/loop.sh" 2>"$TMPD/err" ||
	fail "record of the loop: $(cat "$TMPD/err")"
"$NUSKU" report -q "SELECT how, replace(cmdline, char(0), ' ') FROM process" \
	-f csv "$TMPD/loop.nsk" >"$TMPD/procs.csv" 2>"$TMPD/err" || fail "report: $(cat "$TMPD/err")"
execs=$(grep -c -E '^execed,/bin/true arg[0-9]+ ?$' "$TMPD/procs.csv")
distinct=$(grep -E '^execed,/bin/true arg[0-9]+ ?$' "$TMPD/procs.csv" | sed 's/ $//' | sort -u | wc -l)
[ "$execs" = $N ] && [ "$distinct" = $N ] ||
	fail "$execs exec'd /bin/true with their arguments ($distinct distinct), expected $N: $(head -20 "$TMPD/procs.csv")"
echo "ok: $N short programs, each with its own command line"
forks=$(grep -c -F -x -e "forked,sh $TMPD/loop.sh" -e "forked,sh $TMPD/loop.sh " "$TMPD/procs.csv")
[ "$forks" = $N ] || fail "$forks forked children with the shell's command line, expected $N: $(grep '^forked' "$TMPD/procs.csv" | head)"
echo "ok: each forked child has its parent's command line"

# len BYTES: the exec'd /bin/true's command line length in the report
# (its NULs shown as spaces, trailing ones dropped; it keeps 4095 bytes)
len() {
	arg=$(head -c "$1" /dev/zero | tr '\0' 'x')
	"$NUSKU" record -q -e net -o "$TMPD/long.nsk" -- sh -c '/bin/true "$1"' sh "$arg" 2>"$TMPD/err" ||
		fail "record with a $1-byte argument: $(cat "$TMPD/err")"
	"$NUSKU" report -q "SELECT length(cmdline), substr(cmdline, 1, 9) FROM process WHERE how = 'execed' AND comm = 'true'" \
		-f csv "$TMPD/long.nsk" 2>"$TMPD/err" | sed -n 's/^\([0-9]*\),\/bin\/true$/\1/p'
}
got=$(len 3000)
[ "$got" = 3010 ] || fail "a 3000-byte argument: command line of $got bytes, expected 3010 (/bin/true, NUL, 3000 x)"
got=$(len 5000)
[ "$got" = 4095 ] || fail "a 5000-byte argument: command line of $got bytes, expected it cut (the report keeps 4095)"
echo "ok: a 3000-byte argument whole, a 5000-byte one cut"
