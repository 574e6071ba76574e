#!/bin/sh
# A stripped program whose debug file only a debuginfod server has: a
# local server (debuginfod -F) on a free localhost port serves the
# unstripped build; the recording of the stripped copy, with DEBUGINFOD_URLS
# pointing there and a private cache, names hot_a, hot_b, hot_c at 60/30/10.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/stripped_lib.sh"
need_bpf
command -v debuginfod > /dev/null || skip "debuginfod not installed (apt-get install debuginfod)"
command -v debuginfod-find > /dev/null || skip "debuginfod-find not installed (apt-get install debuginfod)"

BIN=$WORKLOADS/cpu_hot_bid2
BID=$(build_id "$BIN")
mkdir "$TMPD/srv" && cp "$BIN" "$TMPD/srv/" || fail "copy"
S=$TMPD/cpu_hot_s
objcopy --strip-all "$BIN" "$S" || fail "objcopy --strip-all"

# A free port: a server that cannot bind exits, then the next one is tried.
# Ready when it serves the file (each probe its own cache: libdebuginfod
# remembers a miss).
srv=
trap '[ -n "$srv" ] && kill $srv 2> /dev/null; wait; rm -rf "$TMPD"' EXIT
for try in 1 2 3 4 5; do
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
	debuginfod -F "$TMPD/srv" -p $port -d "$TMPD/db$try.sqlite" -t0 -g0 \
		> "$TMPD/server.log" 2>&1 &
	srv=$!
	ready=
	for i in $(seq 150); do
		kill -0 $srv 2> /dev/null || break
		if DEBUGINFOD_URLS=http://127.0.0.1:$port \
			DEBUGINFOD_CACHE_PATH=$TMPD/probe$try.$i \
			debuginfod-find debuginfo "$BID" > /dev/null 2>&1; then
			ready=1
			break
		fi
		sleep 0.2
	done
	[ -n "$ready" ] && break
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	srv=
done
[ -n "$srv" ] || fail "no debuginfod server came up: $(tail -3 "$TMPD/server.log")"
echo "ok: debuginfod on port $port serves $BID"

DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMPD/cache \
	record_hot "$S" "$TMPD/s.nsk"
assert_named "$TMPD/s.nsk.dump"
[ -s "$TMPD/cache/$BID/debuginfo" ] || fail "nothing fetched into the private cache"
"$NUSKU" report "$TMPD/s.nsk" > "$TMPD/report" 2>&1 || fail "report exited $?"
! grep -F "no symbols: $S" "$TMPD/report" || fail "named, yet listed as without symbols"
echo "ok: the stripped copy named from debuginfod"

# A server that takes the connection and never answers: the recording
# still ends (its waits are bounded), with the functions by their ranges.
if command -v python3 > /dev/null; then
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
s.settimeout(1)
end = time.time() + 300
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except OSError:
        pass
' > "$TMPD/silent.port" &
	srv=$!
	for i in $(seq 50); do [ -s "$TMPD/silent.port" ] && break; sleep 0.1; done
	sport=$(cat "$TMPD/silent.port")
	[ -n "$sport" ] || fail "the silent server did not start"
	# without the answers the named run kept for this build-id
	# (record/stacks/symcache.h): they would name it with no server
	rm -rf "$NUSKU_CACHE_DIR/symbols"
	DEBUGINFOD_URLS=http://127.0.0.1:$sport DEBUGINFOD_CACHE_PATH=$TMPD/cache2 \
		record_hot "$S" "$TMPD/silent.nsk" 1
	a=$(fde_name "$BIN" hot_a cpu_hot_s)
	assert_near "$(self_share "$TMPD/silent.nsk.dump" "$a")" 60 10 "$a self share, silent server"
	"$NUSKU" report "$TMPD/silent.nsk" > "$TMPD/silent" 2>&1 || fail "report exited $?"
	grep -qF "# no symbols: $S (build-id $BID)" "$TMPD/silent" ||
		fail "silent server: no 'no symbols' line"
	echo "ok: a silent server holds nothing up for good"
else
	echo "note: python3 not installed: the silent server not tried"
fi
echo "stripped_debuginfod: ok"
