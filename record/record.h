/* The recorder as the record command sees it: one call runs a whole
 * recording (record/session.c). */
#ifndef NUSKU_RECORD_RECORD_H
#define NUSKU_RECORD_RECORD_H

#include <stddef.h>

#include "record/session.h"

/* Record as opts say.  Returns 0 when the recording is complete, with
 * *exit_status the status nusku should exit with (a launched program's own
 * status when it ended by itself); cmdline is nusku's own argv, for META; a negative errno otherwise, with a
 * one-line reason in errbuf. */
int nsk_record__run(const struct nsk_record_opts *opts, char *const *cmdline,
		    int *exit_status, char *errbuf, size_t errlen);

/* "10us", "1.5ms", "2s", "1m"; a bare number is in default_unit_ns.
 * -EINVAL on anything else. */
int nsk_parse_duration(const char *s, uint64_t default_unit_ns, uint64_t *ns);
/* "4096", "4k", "1M", "1G" (powers of 1024).  -EINVAL. */
int nsk_parse_size(const char *s, uint64_t *bytes);

#endif
