/* Where an allocation was made: the rule both `nusku report --by
 * alloc-site` and the live view's allocation table use. */
#ifndef NUSKU_REPORT_ALLOC_SITE_H
#define NUSKU_REPORT_ALLOC_SITE_H

#include <stddef.h>
#include <sqlite3.h>

/* A site is the first frame of an allocation's stack outside the
 * allocator: frames of the allocator object (the recording's
 * alloc.allocator meta, when it has one), of libc, libstdc++, ld.so and
 * the usual allocator libraries, and functions of the malloc family by
 * name (a static binary), are skipped, so strdup() or fopen() count at
 * their caller; the leaf when every frame is inside.
 *
 * Sets *out to an SQL expression (sqlite3_mprintf: sqlite3_free it) whose
 * value is the site's func id for the stack id that the SQL expression
 * stack gives.  0, or -errno with a message in err. */
int nsk_alloc_site__expr(sqlite3 *db, const char *stack, char **out, char *err,
			 size_t len);

#endif
