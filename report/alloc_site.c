/* The allocation site rule (alloc_site.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/alloc_site.h"

/* The allocator object's file name, from the meta table; "" when the
 * recording names none (or has no meta table yet: a live stream). */
static void allocator_name(sqlite3 *db, char *out, size_t len)
{
	sqlite3_stmt *st = NULL;
	const char *path, *base;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = "
			       "'alloc.allocator' LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && (path = (const char *)sqlite3_column_text(st, 0))) {
		base = strrchr(path, '/');
		snprintf(out, len, "%s", base ? base + 1 : path);
	}
	sqlite3_finalize(st);
}

int nsk_alloc_site__expr(sqlite3 *db, const char *stack, char **out, char *err,
			 size_t len)
{
	char allocator[256];

	allocator_name(db, allocator, sizeof(allocator));
	*out = sqlite3_mprintf(
		"coalesce(("
		" SELECT sf.func_id FROM stack_frame sf JOIN func u ON u.id = sf.func_id"
		" WHERE sf.stack_id = %s AND NOT ("
		"  u.module = %Q OR u.module LIKE 'libc.so%%' OR u.module LIKE 'libc-%%'"
		"  OR u.module LIKE 'libstdc++%%' OR u.module LIKE 'ld-linux%%'"
		"  OR u.module LIKE 'libjemalloc%%' OR u.module LIKE 'libtcmalloc%%'"
		"  OR u.module LIKE 'libmimalloc%%'"
		"  OR u.name IN ('malloc', 'calloc', 'realloc', 'reallocarray',"
		"   'aligned_alloc', 'posix_memalign', 'memalign', 'valloc', 'pvalloc',"
		"   '__libc_malloc', '__libc_calloc', '__libc_realloc', '__libc_memalign',"
		"   'operator new', 'operator new[]', '_Znwm', '_Znam', 'mmap', 'mmap64',"
		"   '__mmap', '__mmap64', 'sbrk', '__sbrk', 'brk', '__brk'))"
		" ORDER BY sf.pos LIMIT 1),"
		" (SELECT leaf_func_id FROM stack WHERE id = %s))",
		stack, allocator, stack);
	if (!*out) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
