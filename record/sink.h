/* What the lower rooms of the recorder (procs/, stacks/) may do with the
 * recording: append a record, intern a string, count a loss.  The session
 * implements it over the writer (record/session_stacks.c); a unit test
 * implements it in memory, so the stack pipeline runs without BPF or root.
 */
#ifndef NUSKU_RECORD_SINK_H
#define NUSKU_RECORD_SINK_H

#include <stdint.h>

#include <nusku/format.h>

struct nsk_sink {
	void *ctx;
	/* Append a record: 0, or a negative errno (the recording failed). */
	int (*emit)(void *ctx, const struct nsk_record *rec);
	/* The id of a string, writing its STRING record the first time; 0
	 * on error. */
	uint64_t (*string)(void *ctx, const char *str);
	/* Count lost events of a source ("symbols.unmapped", ...). */
	void (*lost)(void *ctx, const char *source, uint64_t count);
};

#endif
