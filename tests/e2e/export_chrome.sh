#!/bin/sh
# nusku export --format chrome: the Trace Event Format JSON, parsed by
# python3, against answers known by construction:
#   structure  every event has ph and name; "ts" is the second key of
#              every timed event and no event holds an array (what older
#              Perfetto tokenizers need); ts and dur are multiples of
#              1/1024 us (exact doubles: a reader's ts + dur is exact); per track (pid, tid) the X slices come sorted and nest:
#              each starts at or after its parent and ends at or before it;
#              every track is named by a thread_name M event, every pid by
#              a process_name one
#   blocking   (tests/workloads/blocking) the sleeper thread's track holds
#              exactly 5 off-CPU slices named "sleep" (ROUNDS nanosleeps),
#              whose durations sum to the workload's own measure -15%..+15%;
#              lock_victim's slices on its own lock name lock_holder; the
#              off-CPU slices of the file are the recording's offcpu rows
#              (the same count, by --sql); a track has on-CPU frame slices;
#              the sleeper's process is named blocking (not after another
#              process: its children are forked as pipe_reader)
#   syscalls   (tests/workloads/syscalls) the main thread's syscall track
#              holds the 2 slow clock_nanosleeps of slow_nanosleep and the
#              pipe read, whose target is pipe:[N]; the file's syscall
#              slices are the recording's syscall_slow rows
#   heap       (tests/workloads/alloc_exit fork, every allocation) child A's
#              counter climbs to exactly 3000000 bytes without a step down,
#              then 0 at its exit; child B's to 5000000; the parent's peak
#              is 100000
#   filters    --tid of the sleeper: only its tracks; --until: no event past
#              it
#   net        (when a network namespace can be made) retransmit instants
#              are the recording's retransmit rows
#   hostile    names made to hurt (tests/report/mknsk): escaped, still JSON
# Perfetto's trace_processor, when installed, must load the file and count
# the same slices.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
command -v python3 >/dev/null || skip "python3 is needed to parse the JSON"
for w in blocking syscalls alloc_exit; do
	[ -x "$WORKLOADS/$w" ] || skip "tests/workloads/$w is not built"
done

# check FILE [python assertions on d (the JSON) and tracks]: the structure
# checks, then the given ones.
check() {
	file=$1
	shift
	python3 - "$file" "$@" <<'PY'
import json, sys
from decimal import Decimal
path = sys.argv[1]
raw = open(path, encoding='utf-8').read()
d = json.loads(raw, parse_float=Decimal)
ev = d['traceEvents']
assert isinstance(ev, list) and ev, 'no events'
# the raw text: each event on its line, "ts" second, no arrays
for line in raw.split('\n')[1:]:
    if not line.startswith('{"ph"'):
        continue
    if not line.startswith('{"ph":"M"'):
        assert line.startswith('{"ph":"', 0) and line[9:15] == ',"ts":', line[:80]
def ns(v):
    # microseconds on a grid of 1/1024 us (exact doubles), as ns
    t = Decimal(v) * 1024
    assert t == t.to_integral_value(), 'not on the 1/1024 us grid: %s' % v
    return Decimal(v) * 1000
names, procs, tracks = {}, {}, {}
for e in ev:
    assert 'ph' in e and isinstance(e.get('name'), str), e
    assert not any(isinstance(v, list) for v in e.values()), e
    assert not any(isinstance(v, list) for v in e.get('args', {}).values()), e
    if e['ph'] == 'M':
        (names if e['name'] == 'thread_name' else procs)[(e['pid'], e['tid']) if e['name'] == 'thread_name' else e['pid']] = e['args']['name']
        continue
    e['t0'] = ns(e['ts'])
    assert e['t0'] >= 0, 'before the start: %s' % e
    if e['ph'] == 'X':
        e['t1'] = e['t0'] + ns(e['dur'])
        assert e['t1'] > e['t0'], 'empty slice %s' % e
    tracks.setdefault((e['pid'], e['tid']), []).append(e)
nslices = 0
for key, es in tracks.items():
    if es[0]['ph'] != 'C':
        assert key in names, 'track %s without a thread name' % (key,)
    assert key[0] in procs, 'pid %s without a process name' % key[0]
    stack = []
    last = None
    for e in es:
        if e['ph'] != 'X':
            continue
        nslices += 1
        assert last is None or e['t0'] >= last, 'unsorted track %s' % (key,)
        last = e['t0']
        while stack and stack[-1]['t1'] <= e['t0']:
            stack.pop()
        if stack:
            p = stack[-1]
            assert p['t0'] <= e['t0'] and e['t1'] <= p['t1'], \
                'slice %s [%d,%d) crosses %s [%d,%d) on %s' % (
                    e['name'], e['t0'], e['t1'], p['name'], p['t0'], p['t1'], key)
        stack.append(e)
def track_of(thread, suffix=''):
    ks = [k for k, n in names.items() if n == thread + suffix]
    assert len(ks) == 1, 'tracks named %r: %s' % (thread + suffix, ks)
    return tracks.get(ks[0], [])
def count(cat, name=None):
    return sum(1 for e in ev if e.get('cat') == cat and e['ph'] in 'Xi' and
               (name is None or e['name'] == name))
for a in sys.argv[2:]:
    exec(a)
print('ok: %s: %d events, %d slices nested on %d tracks' % (path, len(ev), nslices, len(tracks)))
PY
}
sql() {
	"$NUSKU" report "$1" --format csv --sql "$2" | tail -n 1
}

# --- blocking: off-CPU slices by reason, on-CPU stacks ----------------------
"$NUSKU" record -q -e cpu,offcpu -o "$TMPD/b.nsk" -- "$WORKLOADS/blocking" "$TMPD" \
	>"$TMPD/answers" || fail "record blocking exited $?"
"$NUSKU" export --format chrome -o "$TMPD/b.json" "$TMPD/b.nsk" 2>"$TMPD/err" ||
	fail "export exited $?: $(cat "$TMPD/err")"
[ "$(stat -c %a "$TMPD/b.json")" = 600 ] || fail "the json is not 0600"
sleep_ns=$(awk '$1 == "sleeper" { sub("sleep_ns=", "", $2); print $2 }' "$TMPD/answers")
nrows=$(sql "$TMPD/b.nsk" "SELECT count(*) FROM offcpu WHERE duration > 0")
# an interval the recorder lost is counted as lost (and shown), not here
lost=$(sql "$TMPD/b.nsk" "SELECT coalesce(sum(count), 0) FROM loss WHERE source LIKE 'offcpu.%'")
check "$TMPD/b.json" "
s = [e for e in track_of('sleeper') if e.get('cat') == 'off-cpu' and e['name'] == 'sleep']
assert 5 - $lost <= len(s) <= 5, 'sleeper: %d sleep slices, $lost off-CPU events lost' % len(s)
tot = sum(e['t1'] - e['t0'] for e in s)
assert len(s) < 5 or 0.85 * $sleep_ns <= tot <= 1.15 * $sleep_ns, 'sleep %d ns, measured $sleep_ns' % tot
print('ok: sleeper: %d sleep slices (%d lost), %.1f ms' % (len(s), $lost, float(tot) / 1e6))
sp = [k[0] for k, n in names.items() if n == 'sleeper'][0]
assert procs[sp] == 'blocking', 'the sleeper\'s process is named %r' % procs[sp]
# the workload's own lock, taken in lock_victim: a thread's runtime may
# wait on locks of its own (the sanitizer build's allocator, as a thread
# ends: 60 us, no waker seen), which no one knows the waker of
l = [e for e in track_of('lock_victim') if e.get('cat') == 'off-cpu' and e['name'] == 'lock'
     and 'lock_victim' in e['args'].get('stack', '')]
assert l and all(e['args'].get('waker') == 'lock_holder' for e in l), [e['args'] for e in l]
print('ok: lock_victim: %d lock slices woken by lock_holder' % len(l))
assert count('off-cpu') == $nrows, 'off-CPU slices %d, rows $nrows' % count('off-cpu')
assert count('cpu') > 0, 'no on-CPU slices'
assert any(e.get('cat') == 'cpu' and e['name'] == 'runqueue_spin' for e in ev), 'no runqueue_spin frame'
" || fail "blocking: $(head -c 400 "$TMPD/b.json")"

# --- filters -----------------------------------------------------------------
tid=$(sql "$TMPD/b.nsk" "SELECT tid FROM thread WHERE name = 'sleeper' LIMIT 1")
"$NUSKU" export --format chrome --tid "$tid" -o "$TMPD/t.json" "$TMPD/b.nsk" 2>/dev/null ||
	fail "export --tid exited $?"
check "$TMPD/t.json" "
assert set(k[1] & 0x3fffffff for k in tracks) == {$tid}, sorted(tracks)
assert len([e for e in track_of('sleeper') if e['name'] == 'sleep']) == 5
" || fail "--tid $tid"
start=$(sql "$TMPD/b.nsk" "SELECT value FROM recording WHERE key = 'time_start_ns'")
# half a second after the first off-CPU interval (the span starts with the
# recorder's own records, before the program's first event)
until=$(sql "$TMPD/b.nsk" "SELECT round((min(time) - $start) / 1e9 + 0.5, 3) FROM offcpu")
"$NUSKU" export --format chrome --until "$until" -o "$TMPD/u.json" "$TMPD/b.nsk" 2>/dev/null ||
	fail "export --until exited $?"
check "$TMPD/u.json" "
end = int(Decimal('$until') * 1000000000)
assert d['otherData']['ts_zero_ns'] == '$start', d['otherData']
assert all(e['t0'] <= end for es in tracks.values() for e in es), 'an event past --until'
assert 0 < count('off-cpu') < $nrows, 'off-CPU slices up to --until: %d of $nrows' % count('off-cpu')
" || fail "--until $until"
echo "ok: filters"
"$NUSKU" export --format chrome --by offcpu "$TMPD/b.nsk" >/dev/null 2>&1
[ $? = 2 ] || fail "--by with chrome is not a usage error"

# --- slow syscalls -------------------------------------------------------------
"$NUSKU" record -q -e syscall -o "$TMPD/s.nsk" -- "$WORKLOADS/syscalls" 100 >/dev/null ||
	fail "record syscalls exited $?"
"$NUSKU" export --format chrome -o "$TMPD/s.json" "$TMPD/s.nsk" 2>/dev/null || fail "export syscalls"
nslow=$(sql "$TMPD/s.nsk" "SELECT count(*) FROM syscall_slow WHERE duration > 0")
check "$TMPD/s.json" "
s = track_of('syscalls', ' syscalls')
n = [e for e in s if e['name'] == 'clock_nanosleep']
assert len(n) == 2, 'main thread: %d slow clock_nanosleep' % len(n)
r = [e for e in s if e['name'] == 'read']
assert len(r) == 1 and r[0]['args']['target'].startswith('pipe:['), r
assert count('syscall') == $nslow, 'syscall slices %d, rows $nslow' % count('syscall')
print('ok: 2 slow clock_nanosleep, a read of %s, %d slow calls' % (r[0]['args']['target'], $nslow))
" || fail "syscalls"

# --- live heap bytes ---------------------------------------------------------
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$TMPD/a.nsk" -- "$WORKLOADS/alloc_exit" fork \
	>/dev/null || fail "record alloc_exit exited $?"
"$NUSKU" export --format chrome -o "$TMPD/a.json" "$TMPD/a.nsk" 2>/dev/null || fail "export alloc"
check "$TMPD/a.json" "
heap = {}
for e in ev:
    if e['ph'] == 'C':
        heap.setdefault(e['pid'], []).append(int(e['args']['live_bytes']))
peaks = sorted(max(v) for v in heap.values())
assert peaks == [100000, 3000000, 5000000], peaks
for v in heap.values():
    if max(v) >= 3000000:
        top = v.index(max(v))
        assert all(a <= b for a, b in zip(v[:top], v[1:top + 1])), 'a child stepped down'
        assert v[-1] == 0, 'live at the end of a child: %d' % v[-1]
print('ok: heap peaks %s' % peaks)
" || fail "heap counter"

# --- retransmits, in a network namespace of our own --------------------------
ns="nsk-chrome-$$"
if [ -x "$WORKLOADS/tcp_pingpong" ] && command -v ip >/dev/null && command -v nft >/dev/null &&
	ip netns add "$ns" 2>/dev/null; then
	trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$TMPD"' EXIT
	ip -n "$ns" link set lo up
	ip -n "$ns" route replace local 127.0.0.1 dev lo table local \
		proto kernel scope host src 127.0.0.1 rto_min 10ms 2>/dev/null
	printf '%s\n' "table inet nsk_loss {" "  chain pre {" \
		"    type filter hook prerouting priority 0; policy accept;" \
		"    meta l4proto tcp numgen random mod 100 < 5 drop" "  }" "}" |
		ip netns exec "$ns" nft -f - 2>"$TMPD/nft.err" || fail "nft: $(cat "$TMPD/nft.err")"
	ip netns exec "$ns" "$NUSKU" record -q -e net -o "$TMPD/n.nsk" -- \
		"$WORKLOADS/tcp_pingpong" -n 200 >/dev/null || fail "record tcp_pingpong exited $?"
	"$NUSKU" export --format chrome -o "$TMPD/n.json" "$TMPD/n.nsk" 2>/dev/null || fail "export net"
	nr=$(sql "$TMPD/n.nsk" "SELECT count(*) FROM retransmit")
	check "$TMPD/n.json" "
assert count('net', 'retransmit') == $nr, '%d instants, $nr rows' % count('net', 'retransmit')
assert all(e['s'] == 't' for e in ev if e['ph'] == 'i')
print('ok: $nr retransmit instants')
" || fail "retransmits"
else
	echo "note: no network namespace: retransmits not checked"
fi

# --- names made to hurt: escaped, and still JSON that nests -------------------
if [ -x "$WORKLOADS/../report/mknsk" ]; then
	"$WORKLOADS/../report/mknsk" hostile "$TMPD/h.nsk" || fail "mknsk hostile"
	"$NUSKU" export --format chrome -o "$TMPD/h.json" "$TMPD/h.nsk" 2>/dev/null ||
		fail "export of a hostile recording"
	check "$TMPD/h.json" || fail "a hostile recording's trace"
	grep -q "$(printf '\033')" "$TMPD/h.json" && fail "an escape byte in the json"
	echo "ok: hostile names"
fi

# --- Perfetto's own reader, when there is one -----------------------------------
tp=$(command -v trace_processor_shell || command -v trace_processor || true)
if [ -n "$tp" ]; then
	echo "SELECT count(*) FROM slice WHERE category = 'off-cpu';" >"$TMPD/q.sql"
	got=$("$tp" -q "$TMPD/q.sql" "$TMPD/b.json" 2>/dev/null | tail -n 1 | tr -dc 0-9)
	[ "$got" = "$nrows" ] || fail "trace_processor: $got off-CPU slices, expected $nrows"
	echo "ok: trace_processor reads $got off-CPU slices"
else
	echo "note: trace_processor absent: python3's checks only"
fi
echo "export_chrome: ok"
