#!/bin/sh
# Installs what Nusku needs from Debian's archive (when something is
# missing), then configures and builds it in this directory.
# Extra arguments go to ./configure (e.g. --enable-asan).
set -eu
cd "$(dirname "$0")"

PKGS="build-essential autoconf automake libtool pkg-config clang llvm bpftool
libbpf-dev libelf-dev libdw-dev libzstd-dev libsqlite3-dev libncurses-dev check
nftables iproute2 tmux openssh-server openssh-client strace
linux-libc-dev libclang-rt-14-dev
libdebuginfod-dev debuginfod xz-utils rustc nodejs golang-go
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev chromium"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root to install:$missing" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing
fi

# A real reader of export --format chrome for tests/e2e/export_chrome_reader.sh:
# speedscope's web app, pinned, from the npm registry into tests/readers.
# Optional: without npm or the registry the test skips, set-up goes on.
SPEEDSCOPE=speedscope@1.25.0
if [ "$(head -n 1 tests/readers/node_modules/speedscope/dist/release/release.txt \
	2>/dev/null)" != "$SPEEDSCOPE" ]; then
	if command -v npm >/dev/null &&
		timeout 300 npm install --prefix tests/readers --no-save --no-audit --no-fund \
			--fetch-retries=1 --fetch-timeout=30000 "$SPEEDSCOPE" >/dev/null 2>&1; then
		echo "setup.sh: installed $SPEEDSCOPE in tests/readers"
	else
		echo "setup.sh: note: could not install $SPEEDSCOPE with npm;" \
			"tests/e2e/export_chrome_reader.sh will skip" >&2
	fi
fi

[ -x configure ] || autoreconf -fi
./configure --enable-werror "$@"
make -j"$(nproc)"
