#!/bin/sh
# Decompressed debug files kept by build-id (record/stacks/debug_cache.h).
# A stripped program whose debug file, next to it by .gnu_debuglink, has
# its sections zlib-compressed as Debian's debug packages do: the first
# recording names hot_a, hot_b, hot_c (60/30/10 by construction) and
# leaves a decompressed copy, 0600 in a 0700 directory, with the same
# DWARF as the original; with the original gone, the next recording still
# names them from the copy.  A copy that is a symbolic link, writable by
# others or of another build-id is not read; a cache directory that is a
# link or open to others is refused with one line; the size limit holds.
# The answers kept by build-id (symbols/BID.sym, record/stacks/symcache.h)
# name the functions with no debug file left at all.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/record_lib.sh"
. "$TOP_SRCDIR/tests/e2e/stripped_lib.sh"
need_bpf
command -v readelf > /dev/null || skip "readelf not installed (apt-get install binutils)"

BIN=$WORKLOADS/cpu_hot
BID=$(build_id "$BIN")
[ -n "$BID" ] || fail "$BIN has no build-id"
S=$TMPD/cpu_hot_c
objcopy --only-keep-debug --compress-debug-sections=zlib "$BIN" "$S.debug" ||
	fail "objcopy --only-keep-debug"
objcopy --strip-all --add-gnu-debuglink="$S.debug" "$BIN" "$S" || fail "objcopy --strip-all"
readelf -S -W "$S.debug" | grep -q '\.debug_info .* C ' || fail "the debug file is not compressed"
C=$TMPD/cache
export NUSKU_CACHE_DIR="$C"
COPY=$C/debug/$BID.debug

# stat_of FILE: octal mode and owner
stat_of() { stat -c '%a %u' "$1"; }

# 1. first recording: named from the compressed file, copy left behind
record_hot "$S" "$TMPD/1.nsk"
assert_named "$TMPD/1.nsk.dump"
[ -f "$COPY" ] || fail "no copy at $COPY: $(ls -la "$C/debug" 2>&1)"
[ "$(stat_of "$COPY")" = "600 $(id -u)" ] || fail "copy is $(stat_of "$COPY")"
[ "$(stat_of "$C")" = "700 $(id -u)" ] || fail "cache directory is $(stat_of "$C")"
[ "$(stat_of "$C/debug")" = "700 $(id -u)" ] || fail "debug/ is $(stat_of "$C/debug")"
[ "$(build_id "$COPY")" = "$BID" ] || fail "the copy's build-id is $(build_id "$COPY")"
! readelf -S -W "$COPY" | grep '\.debug_.* C ' || fail "the copy still has compressed sections"
for w in info line abbrev str; do
	readelf --debug-dump=$w "$S.debug" 2> /dev/null | sed 1,3d > "$TMPD/orig.$w"
	readelf --debug-dump=$w "$COPY" 2> /dev/null | sed 1,3d > "$TMPD/copy.$w"
	[ -s "$TMPD/orig.$w" ] || fail "readelf shows no .debug_$w in the original"
	cmp -s "$TMPD/orig.$w" "$TMPD/copy.$w" || fail ".debug_$w differs in the copy"
done
echo "ok: a decompressed copy with the same DWARF, 0600 in 0700 directories"

# 2. the original gone: the copy names the functions (the answers the
# first recording kept, symbols/BID.sym, set aside: they would name them
# without opening any debug file)
ANSWERS=$C/symbols/$BID.sym
[ "$(stat_of "$ANSWERS")" = "600 $(id -u)" ] || fail "answers kept as $(stat_of "$ANSWERS")"
mv "$ANSWERS" "$TMPD/answers.sym"
mv "$S.debug" "$TMPD/saved.debug"
record_hot "$S" "$TMPD/2.nsk"
assert_named "$TMPD/2.nsk.dump"
echo "ok: named from the copy alone"

# 2b. no debug file at all, only the answers kept: named the same
mv "$COPY" "$TMPD/copy.debug"
mv "$TMPD/answers.sym" "$ANSWERS"
record_hot "$S" "$TMPD/2b.nsk"
assert_named "$TMPD/2b.nsk.dump"
mv "$TMPD/copy.debug" "$COPY"
echo "ok: named from the answers kept by build-id"

# not_named DUMP WHAT: the functions are FDE ranges again (no debug file read)
not_named() {
	! grep -q '^sample.*hot_a' "$1" || fail "$2: hot_a named"
	a=$(fde_name "$BIN" hot_a cpu_hot_c)
	assert_near "$(self_share "$1" "$a")" 60 5 "$2: hot_a as $a"
}

# 3. copies that must not be read (each time without kept answers)
cp "$COPY" "$TMPD/good.debug"
chmod 0666 "$COPY"
rm -rf "$C/symbols"
record_hot "$S" "$TMPD/3.nsk" 1
not_named "$TMPD/3.nsk.dump" "a copy writable by others"
rm -f "$COPY"
ln -s "$TMPD/good.debug" "$COPY"
rm -rf "$C/symbols"
record_hot "$S" "$TMPD/4.nsk" 1
not_named "$TMPD/4.nsk.dump" "a copy that is a symbolic link"
rm -f "$COPY"
objcopy --only-keep-debug "$WORKLOADS/cpu_split" "$COPY" && chmod 0600 "$COPY" ||
	fail "objcopy of cpu_split"
rm -rf "$C/symbols"
record_hot "$S" "$TMPD/5.nsk" 1
not_named "$TMPD/5.nsk.dump" "a copy of another build-id"
rm -f "$COPY"

# 4. cache directories refused, in one line; the recording goes on
mkdir -m 0700 "$TMPD/real"
export NUSKU_CACHE_DIR="$TMPD/link"
ln -s "$TMPD/real" "$NUSKU_CACHE_DIR"
"$NUSKU" record -q -e cpu -o "$TMPD/6.nsk" -- "$S" 0.3 > /dev/null 2> "$TMPD/6.err" ||
	fail "record with a linked cache exited $?"
grep -q "warning: symbol cache off: $NUSKU_CACHE_DIR is not a directory" "$TMPD/6.err" ||
	fail "no warning for a linked cache: $(cat "$TMPD/6.err")"
[ "$(wc -l < "$TMPD/6.err")" = 1 ] || fail "more than one line: $(cat "$TMPD/6.err")"
[ -z "$(ls "$TMPD/real")" ] || fail "wrote through the link: $(ls "$TMPD/real")"
export NUSKU_CACHE_DIR="$TMPD/open"
mkdir -m 0755 "$NUSKU_CACHE_DIR"
"$NUSKU" record -q -e cpu -o "$TMPD/7.nsk" -- "$S" 0.3 > /dev/null 2> "$TMPD/7.err" ||
	fail "record with an open cache exited $?"
grep -q "warning: symbol cache off: $NUSKU_CACHE_DIR is open to others" "$TMPD/7.err" ||
	fail "no warning for a cache open to others: $(cat "$TMPD/7.err")"
[ -z "$(ls "$NUSKU_CACHE_DIR")" ] || fail "used a cache open to others"
NUSKU_CACHE_DIR=off "$NUSKU" record -q -e cpu -o "$TMPD/8.nsk" -- "$S" 0.3 > /dev/null \
	2> "$TMPD/8.err" || fail "record with the cache off exited $?"
[ ! -s "$TMPD/8.err" ] || fail "the cache off is not quiet: $(cat "$TMPD/8.err")"
echo "ok: linked and open cache directories refused; off is quiet"

# 5. the size limit: the least recently used copy goes first; a copy that
# would not fit is not made
mv "$TMPD/saved.debug" "$S.debug"
export NUSKU_CACHE_DIR="$C"
# The room asked for is about the copy's size (at least the copy, at most
# the copy plus the compressed bytes, which are fewer than half of it):
# beside an old copy as large, a limit of 1.5 copies fits it only alone.
size=$(stat -c %s "$TMPD/good.debug")
head -c "$size" /dev/zero > "$C/debug/0000.debug"
touch -d '2 days ago' "$C/debug/0000.debug"
NUSKU_CACHE_MAX=$((size * 3 / 2)) record_hot "$S" "$TMPD/9.nsk" 1
[ -f "$COPY" ] || fail "no copy made within the limit"
[ ! -e "$C/debug/0000.debug" ] || fail "the old copy was not removed for the new one"
rm -f "$COPY"
rm -rf "$C/symbols" # or the answers kept would not need the debug file
NUSKU_CACHE_MAX=$((size / 2)) record_hot "$S" "$TMPD/10.nsk" 1
[ ! -e "$COPY" ] || fail "a copy made past the limit"
echo "ok: the size limit holds, oldest first"
