#!/bin/sh
# A SIGINT ends a recording promptly however far behind the recorder is
# (#17): behind two allocation storms recorded call by call and a fork
# loop, the recorder stops, writes a complete file and exits while the
# storms, which would run for a minute, still run.  It once could not:
# draining a ring buffer that never emptied held a lock the session's
# thread waited for, until the program ended by itself.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf

pids="$TMPD/pids"
cleanup() {
	for p in $(cat "$pids" "$TMPD/sh" 2> /dev/null); do
		kill -TERM "$p" 2> /dev/null
	done
	rm -rf "$TMPD"
}
trap cleanup EXIT

: > "$pids"
"$NUSKU" record -q --alloc-sample 1 -o "$TMPD/s.nsk" -- sh -c "
	echo \$\$ > '$TMPD/sh'
	timeout 60 '$WORKLOADS/alloc_churn' 4000000000 > /dev/null & echo \$! >> '$pids'
	timeout 60 '$WORKLOADS/alloc_churn' 4000000000 > /dev/null & echo \$! >> '$pids'
	while :; do /bin/true; done" 2> "$TMPD/err" &
rec=$!
# the program runs (both storms started), then a backlog builds
n=0
while [ "$(wc -l < "$pids")" -lt 2 ]; do
	sleep 0.1
	n=$((n + 1))
	[ $n -lt 1200 ] || fail "the workload did not start: $(cat "$TMPD/err")"
done
sleep 2
kill -INT $rec
wait $rec
st=$?
alive=0
for p in $(cat "$pids"); do
	kill -0 "$p" 2> /dev/null && alive=$((alive + 1))
done
[ $alive = 2 ] || fail "the recorder ended only after the storms did ($alive of 2 alive)"
echo "ok: stopped while the storms still ran"
# it ended the program (SIGTERM), and says so as a shell would
[ $st = 143 ] || fail "exit status $st, not 143: $(cat "$TMPD/err")"
"$NUSKU" info "$TMPD/s.nsk" > "$TMPD/info" || fail "the file is not complete: $(cat "$TMPD/info")"
echo "ok: complete file, status 143"
