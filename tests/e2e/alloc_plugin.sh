#!/bin/sh
# A C++ runtime that only a plugin brings: a C program dlopens, with
# RTLD_LOCAL, a C++ library whose static constructor calls new (as ar does
# with LLVMgold, which brings libstdc++ and libz3).  Its calls of new bind
# to the sampler's operator new, whose next definition is then in no
# global scope.  The program must run as without Nusku (it aborted), and
# the plugin's allocations be recorded exactly: 200 new char[1000] at
# plugin_site, 7 at the constructor's.
. "$TOP_SRCDIR/tests/e2e/lib.sh"
. "$TOP_SRCDIR/tests/e2e/alloc_lib.sh"
need_bpf
command -v c++ >/dev/null 2>&1 || skip "no C++ compiler"

cat >"$TMPD/plugin.cc" <<'CC'
#include <cstddef>
static void *volatile sink;
__attribute__((noinline)) static void ctor_site() { for (int i = 0; i < 7; i++) sink = new char[500]; }
static struct at_load { at_load() { ctor_site(); } } at_load_;
__attribute__((noinline)) static void plugin_site(int n) { for (int i = 0; i < n; i++) sink = new char[1000]; }
extern "C" void plugin_run(int n) { plugin_site(n); }
CC
cat >"$TMPD/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void (*run)(int) = h ? (void (*)(int))dlsym(h, "plugin_run") : NULL;

	if (!run) {
		fprintf(stderr, "host: %s\n", dlerror());
		return 1;
	}
	run(200);
	return 0;
}
C
c++ -O1 -g -fno-omit-frame-pointer -fPIC -shared -o "$TMPD/plugin.so" "$TMPD/plugin.cc" ||
	fail "cannot build the plugin"
cc -O1 -g -fno-omit-frame-pointer -o "$TMPD/host" "$TMPD/host.c" -ldl || fail "cannot build the host"
ldd "$TMPD/host" | grep -q 'libstdc++' && fail "the host links libstdc++ itself"

out=$TMPD/run.nsk
"$NUSKU" record -q -e alloc --alloc-sample 1 -o "$out" -- "$TMPD/host" "$TMPD/plugin.so" ||
	fail "the plugin's host exited $? under the sampler"
"$NUSKU" report "$out" --by alloc-site --format csv >"$TMPD/sites.csv" 2>"$TMPD/err" ||
	fail "report: $(cat "$TMPD/err")"
assert_site "$TMPD/sites.csv" plugin_site allocs 200
assert_site "$TMPD/sites.csv" plugin_site bytes 200000
assert_site "$TMPD/sites.csv" ctor_site allocs 7
assert_site "$TMPD/sites.csv" ctor_site bytes 3500
echo "alloc_plugin: ok"
