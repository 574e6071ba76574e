#!/bin/sh
# The network signal follows a socket's owner from thread to thread and
# back: bpf/net.bpf.c lets a thread's repeated sends on its socket pass on
# a per-CPU hint without the socket-storage lookup, and an owner change
# must retire the old owner's hint on every CPU, or the owner's return
# would go unseen.  Known answer: two threads take turns on one
# connection (A, B, A, B, A, B: each turn 20 sends, then it hands over;
# a third thread drains the other end), pinned to one CPU so that each
# thread finds its own hint again: six owners in that order on the
# connection.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/net_lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 is needed for the workload"
netns_up 0

cat > "$TMPD/turns.py" <<'PY'
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname()); conn, _ = srv.accept()
def drain():
    while conn.recv(4096):
        pass
go = {"A": threading.Semaphore(1), "B": threading.Semaphore(0)}
order = []
def worker(me, other):
    for _ in range(3):
        go[me].acquire()
        order.append(threading.get_native_id())
        for _ in range(20):
            cli.sendall(b"x" * 64)
        go[other].release()
d = threading.Thread(target=drain); d.start()
ts = [threading.Thread(target=worker, args=("A", "B")),
      threading.Thread(target=worker, args=("B", "A"))]
for t in ts: t.start()
for t in ts: t.join()
cli.close(); d.join()
print("turns", " ".join(map(str, order)))
PY
out=$TMPD/run.nsk
ip netns exec "$NETNS" "$NUSKU" record -q -e net -o "$out" -- taskset -c 0 \
	python3 "$TMPD/turns.py" > "$TMPD/answer" || fail "record exited $?"
want=$(sed -n 's/^turns //p' "$TMPD/answer")
[ -n "$want" ] || fail "workload: $(cat "$TMPD/answer")"
in=$(echo $want | tr ' ' ',')
conn=$("$NUSKU" report "$out" -f csv --sql "SELECT conn_id FROM conn_owner \
	WHERE tid IN ($in) ORDER BY time LIMIT 1" 2>/dev/null | tail -n 1)
[ -n "$conn" ] || fail "no connection owned by the turns' threads"
# the owners in time order, each run of one owner once (a state change or
# the first receive repeats a record)
got=$("$NUSKU" report "$out" -f csv --sql "SELECT tid FROM conn_owner \
	WHERE conn_id = $conn AND tid IN ($in) ORDER BY time" 2>/dev/null |
	tail -n +2 | awk '$1 != last { printf "%s%s", n++ ? " " : "", $1 } { last = $1 }')
echo "owners wanted: $want"
echo "owners seen:   $got"
[ "$got" = "$want" ] || fail "owners of the client's connection: $got, expected $want"
echo "net_owner: ok"
