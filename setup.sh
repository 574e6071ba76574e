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

[ -x configure ] || autoreconf -fi
./configure --enable-werror "$@"
make -j"$(nproc)"
