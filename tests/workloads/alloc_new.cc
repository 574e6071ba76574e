// C++ allocation workload with answers known by construction.
//
//   alloc_new [SCALE]
//
//   new_leak    new Obj (48 bytes) x 1000s, never deleted: 48000s bytes live
//   new_array   new int[16] then delete[] x 5000s: 64 bytes each, none live
//   new_nothrow new (std::nothrow) char[200] x 100s, deleted: 200 bytes each
//
// Each site is a function of its own, so the caller of new is the site.
#include <cstdlib>
#include <new>

struct Obj {
	long v[6];
};

static Obj *volatile keep;
static void *volatile sink;

__attribute__((noinline)) static void new_leak(long n)
{
	for (long i = 0; i < n; i++)
		keep = new Obj();
}

__attribute__((noinline)) static void new_array(long n)
{
	for (long i = 0; i < n; i++) {
		int *p = new int[16];
		sink = p;
		delete[] p;
	}
}

__attribute__((noinline)) static void new_nothrow(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = new (std::nothrow) char[200];
		sink = p;
		delete[] p;
	}
}

int main(int argc, char **argv)
{
	long s = argc > 1 ? std::atol(argv[1]) : 1;

	new_leak(1000 * s);
	new_array(5000 * s);
	new_nothrow(100 * s);
	return 0;
}
