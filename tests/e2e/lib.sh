# Helpers for end-to-end tests: sourced, not run.
# NUSKU, WORKLOADS and TOP_SRCDIR come from the test harness (Makefile.am).

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# Skip unless we can load BPF programs (root, or CAP_BPF+CAP_PERFMON).
need_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF + CAP_PERFMON) to load BPF programs"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

# A scratch directory removed when the test exits.
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/nusku-test.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
# Each test its own symbol cache (record/stacks/cache_dir.h): none reads
# what another left, and none writes into the home directory.  (Unit
# tests run with the cache off: Makefile.am.)
NUSKU_CACHE_DIR=$TMPD/nusku-cache
export NUSKU_CACHE_DIR

# assert_near ACTUAL EXPECTED TOLERANCE WHAT: |actual-expected| <= tolerance
assert_near() {
	awk -v a="$1" -v e="$2" -v t="$3" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$4: got $1, expected $2 +- $3"
	echo "ok: $4: $1 (expected $2 +- $3)"
}

# retry_once "WHY": for a test with a known, documented race in the
# recorder (not in the program): when the whole test fails, it runs once
# more and says so, so the race shows in the log without failing CI on a
# correct program.  Call it first, before anything else the test does.
retry_once() {
	[ -n "${NSK_RETRY_RUN:-}" ] && return 0
	NSK_RETRY_RUN=1 sh "$0" && exit 0
	rc=$?
	[ $rc = 77 ] && exit 77
	echo "RETRY: $0 failed ($rc) once; known race: $1" >&2
	NSK_RETRY_RUN=2 exec sh "$0"
}
