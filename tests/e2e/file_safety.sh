#!/bin/sh
# Output files on a shared machine (issue 17): record -o, live -o and
# report --db never write through a symbolic link, never touch a device
# node or any other non-regular file, never replace a file that is not
# theirs to replace (a non-.nsk, a non-nusku database, the recording being
# read), and make every file 0600.  A recorder killed as soon as its file
# appears leaves META and CLOCK; a disk already full leaves no file.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
need_bpf
GEN=$(dirname "$NUSKU")/tests/live/live_gen
NSK_DUMP=$(dirname "$NUSKU")/tests/tools/nsk_dump

one_line() { # STATUS ERRFILE WHAT PATTERN
	[ "$1" = 1 ] || fail "$3: exit status $1, expected 1"
	[ "$(wc -l < "$2")" = 1 ] || fail "$3: expected one line on stderr: $(cat "$2")"
	grep -q "$4" "$2" || fail "$3: message does not say '$4': $(cat "$2")"
	echo "ok: $3: $(cat "$2")"
}
mode() { stat -c %a "$1"; }

D=$TMPD/out
mkdir "$D"
# The victim: a file the planted links point at.
echo precious > "$TMPD/victim"
chmod 644 "$TMPD/victim"
"$GEN" "$TMPD/in.nsk" 0.3 2>/dev/null || fail "live_gen"

# --- a symbolic link at the name
ln -s "$TMPD/victim" "$D/link.nsk"
"$NUSKU" record -q -e cpu -o "$D/link.nsk" -- true 2> "$TMPD/err"
one_line $? "$TMPD/err" "record -o onto a symlink" "symbolic link"
"$NUSKU" live --snapshot -o "$D/link.nsk" "$TMPD/in.nsk" > /dev/null 2> "$TMPD/err"
one_line $? "$TMPD/err" "live -o onto a symlink" "symbolic link"
"$NUSKU" report --db "$D/link.nsk" "$TMPD/in.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto a symlink" "symbolic link"
[ "$(cat "$TMPD/victim")" = precious ] && [ "$(mode "$TMPD/victim")" = 644 ] ||
	fail "the symlink's target was written or chmodded"
[ -L "$D/link.nsk" ] || fail "the symlink was removed"

# --- a device node (the null device, under another name)
mknod "$D/dev" c 1 3 || skip "cannot mknod"
chmod 666 "$D/dev"
"$NUSKU" record -q -e cpu -o "$D/dev" -- true 2> "$TMPD/err"
one_line $? "$TMPD/err" "record -o onto a device" "not a regular file"
"$NUSKU" live --snapshot -o "$D/dev" "$TMPD/in.nsk" > /dev/null 2> "$TMPD/err"
one_line $? "$TMPD/err" "live -o onto a device" "not a regular file"
"$NUSKU" report --db "$D/dev" "$TMPD/in.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto a device" "not a regular file"
[ -c "$D/dev" ] && [ "$(mode "$D/dev")" = 666 ] || fail "the device node was replaced or chmodded"
mkfifo "$D/fifo"
timeout 10 "$NUSKU" report --db "$D/fifo" "$TMPD/in.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto a FIFO" "not a regular file"
[ -p "$D/fifo" ] || fail "the FIFO was replaced"

# --- an existing file that is not ours to replace
echo "someone's notes" > "$D/notes"
"$NUSKU" record -q -e cpu -o "$D/notes" -- true 2> "$TMPD/err"
one_line $? "$TMPD/err" "record -o onto a non-.nsk file" "not a .nsk recording"
"$NUSKU" live --snapshot -o "$D/notes" "$TMPD/in.nsk" > /dev/null 2> "$TMPD/err"
one_line $? "$TMPD/err" "live -o onto a non-.nsk file" "not a .nsk recording"
"$NUSKU" report --db "$D/notes" "$TMPD/in.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto a non-database" "not a database nusku wrote"
python3 -c "import sqlite3; sqlite3.connect('$D/other.db').execute('create table t(x)')"
"$NUSKU" report --db "$D/other.db" "$TMPD/in.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto another program's database" "not a database nusku wrote"
[ "$(cat "$D/notes")" = "someone's notes" ] || fail "a non-.nsk file was replaced"
cp "$TMPD/in.nsk" "$D/same.nsk"
"$NUSKU" report --db "$D/same.nsk" "$D/same.nsk" 2> "$TMPD/err"
one_line $? "$TMPD/err" "report --db onto the recording" "is the recording being read"
cmp -s "$TMPD/in.nsk" "$D/same.nsk" || fail "--db onto the recording changed it"

# --- what may be replaced is, and every output is 0600
umask 022
"$NUSKU" live --snapshot -o "$D/copy.nsk" "$TMPD/in.nsk" > /dev/null 2>&1 || fail "live -o"
cmp -s "$TMPD/in.nsk" "$D/copy.nsk" || fail "live -o: the copy differs"
"$NUSKU" report --db "$D/k.db" "$TMPD/in.nsk" 2> /dev/null || fail "report --db"
"$NUSKU" report --db "$D/k.db" "$TMPD/in.nsk" 2> /dev/null || fail "report --db over its own database"
: > "$D/empty.nsk"
"$NUSKU" record -q -e cpu -o "$D/empty.nsk" -- true || fail "record -o onto an empty file"
"$NUSKU" record -q -e cpu -o "$D/r.nsk" -- true || fail "record -o"
"$NUSKU" record -q -e cpu -o "$D/r.nsk" -- true || fail "record -o over a recording"
for f in copy.nsk k.db empty.nsk r.nsk; do
	[ "$(mode "$D/$f")" = 600 ] || fail "$f is mode $(mode "$D/$f"), expected 600"
done
[ -z "$(ls -A "$D" | grep '^\.')" ] || fail "temporary files left behind: $(ls -A "$D")"
echo "ok: replaced what may be, all 0600, no temporaries left"

# --- killed as soon as the file appears: META and CLOCK are in it
for i in 1 2 3; do
	"$NUSKU" record -q -e cpu -o "$D/k$i.nsk" -- sleep 30 &
	rec=$!
	n=0
	while [ ! -e "$D/k$i.nsk" ] && [ $n -lt 200 ]; do sleep 0.01; n=$((n + 1)); done
	kill -9 $rec
	wait $rec 2>/dev/null
	[ -e "$D/k$i.nsk" ] || fail "the file never appeared"
	"$NSK_DUMP" "$D/k$i.nsk" > "$TMPD/dump" 2>/dev/null
	grep -q '^meta nusku.version' "$TMPD/dump" || fail "killed at once: no META in $(wc -c < "$D/k$i.nsk") bytes"
	"$NUSKU" info "$D/k$i.nsk" 2>/dev/null | grep -q '^clock:.*UTC' || fail "killed at once: no CLOCK"
done
echo "ok: killed as soon as the file appeared: META and CLOCK there"

# --- a disk already full: no file at all, one line, status 1
if mkdir "$TMPD/full" && mount -t tmpfs -o size=64k tmpfs "$TMPD/full" 2>/dev/null; then
	dd if=/dev/zero of="$TMPD/full/fill" bs=4k 2>/dev/null
	"$NUSKU" record -q -e cpu -o "$TMPD/full/r.nsk" -- true 2> "$TMPD/err"
	st=$?
	left=$(ls -A "$TMPD/full" | grep -v '^fill$')
	umount "$TMPD/full"
	one_line $st "$TMPD/err" "a full disk" "No space left"
	[ -z "$left" ] || fail "a full disk left: $left"
else
	echo "skip: cannot mount a tmpfs for the full-disk case"
fi
echo "file_safety: ok"
