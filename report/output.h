/* Generic output: the rows of a prepared statement as a text table, a JSON
 * array of objects or CSV.  Views only say how columns look (hints); the
 * column names of the statement are the JSON keys and CSV headers. */
#ifndef NUSKU_REPORT_OUTPUT_H
#define NUSKU_REPORT_OUTPUT_H

#include <stdio.h>
#include <sqlite3.h>

enum nsk_fmt { NSK_FMT_TEXT, NSK_FMT_JSON, NSK_FMT_CSV };

enum nsk_col_flags {
	NSK_COL_FLEX = 1u << 0,	     /* text: shortened to fit the width */
	NSK_COL_NARROW = 1u << 1,    /* text: may shrink (module names) */
	NSK_COL_PCT = 1u << 2,	     /* text: printed as "12.34%" */
	NSK_COL_TEXT_ONLY = 1u << 3, /* not in JSON or CSV */
	NSK_COL_DATA_ONLY = 1u << 4, /* not in the text table */
	NSK_COL_INDENT = 1u << 5,    /* text: indented by the "depth" column */
	NSK_COL_CUT_END = 1u << 6,   /* text: shortened at the end ("a <- b...")
				      * instead of as a name */
	NSK_COL_WHOLE = 1u << 7,     /* text: FLEX, but keeps its first frame
				      * whole (the answer: a top caller), the
				      * table wider than asked if need be */
};

struct nsk_col_hint {
	const char *name;  /* the statement's column name */
	const char *label; /* text header; NULL: the name */
	unsigned flags;
};

struct nsk_out {
	FILE *f;
	enum nsk_fmt fmt;
	int width; /* text: columns to fit; 0: no limit */
};

/* Prints every row of st (stepping it to the end).  hints: NULL or an
 * array ended by a NULL name; columns without a hint get defaults (numbers
 * right-aligned, the widest text column shortened first).  JSON: an array
 * of objects; CSV: a header line and rows.  0 or -EIO (SQLite's message
 * from the statement's database). */
int nsk_out__rows(const struct nsk_out *o, sqlite3_stmt *st,
		  const struct nsk_col_hint *hints);

/* Escaping for a terminal or a CSV cell (report/escape.c): control bytes,
 * C1 controls and bytes that are not UTF-8 become \xNN.  Every string from
 * a recording goes through one of these before it is printed. */
/* The terminal's width when standard output is one, else 80. */
int nsk_out__term_width(void);

int nsk_out__needs_escape(const char *s);
/* A malloc'd escaped copy of s (NULL: out of memory). */
char *nsk_out__escaped(const char *s);
/* fputs of the escaped s (NULL prints nothing). */
void nsk_out__put_escaped(FILE *f, const char *s);

/* JSON string literal of s (quotes included); control bytes, DEL and C1
 * controls as \u escapes, bytes that are not UTF-8 as U+FFFD. */
void nsk_out__json_str(FILE *f, const char *s);

/* Shortens a name to at most width bytes, sensibly: drops the parameter
 * list, then template arguments, then the middle ("..."), keeping leading
 * spaces (tree indentation).  Writes NUL-terminated out (width + 1 bytes). */
void nsk_out__shorten(const char *in, size_t width, char *out);
/* A call chain ("a <- b <- c") cut to at most width bytes at a frame's
 * end ("a <- b ..."), or its first frame shortened when even that does
 * not fit; a name without " <- " as nsk_out__shorten.  out: width + 1. */
void nsk_out__fit_frames(const char *in, size_t width, char *out);
/* Bytes of s's first frame (up to " <- "). */
size_t nsk_out__first_frame(const char *s);

#endif
