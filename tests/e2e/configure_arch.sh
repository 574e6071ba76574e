#!/bin/sh
# configure refuses an architecture the code does not support, first and
# in one line: only x86_64 builds (bpf/ustack.bpf.h and preload/sampler.c
# use its registers).  configure runs from a copy holding only what it
# reads before that check, so a configured source tree does not matter.
. "$TOP_SRCDIR/tests/e2e/lib.sh"

[ -x "$TOP_SRCDIR/configure" ] || skip "no configure script in $TOP_SRCDIR"
mkdir -p "$TMPD/src/cli" "$TMPD/build"
cp "$TOP_SRCDIR/configure" "$TMPD/src/" || fail "cannot copy configure"
cp -R "$TOP_SRCDIR/build-aux" "$TMPD/src/" || fail "cannot copy build-aux"
: > "$TMPD/src/cli/nusku.c"
for arch in aarch64 riscv64 i686; do
	(cd "$TMPD/build" && "$TMPD/src/configure" --host=$arch-linux-gnu \
		> "$TMPD/out" 2>&1)
	st=$?
	[ $st != 0 ] || fail "$arch: configure exited 0"
	grep -q "^configure: error: unsupported architecture $arch: Nusku builds for x86_64 only" \
		"$TMPD/out" || fail "$arch: no clear error: $(tail -n 3 "$TMPD/out")"
	# refused before any compiler or library was looked for
	! grep -q 'checking for .*gcc\|checking for libbpf' "$TMPD/out" ||
		fail "$arch: refused only after looking for tools"
	echo "ok: $arch: $(grep '^configure: error' "$TMPD/out")"
done
echo "configure_arch: ok"
