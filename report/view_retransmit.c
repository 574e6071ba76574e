/* --by retransmit: TCP retransmits per connection, tied to the code that
 * waited on them.
 *
 * The recording stays raw (record/net.c): retransmits name their connection
 * and the thread that owned the socket.  The linking is done here: each
 * retransmit falls in at most one interval of its owner thread, because a
 * thread waits in one place at a time.  The first that applies names the
 * waiting code:
 *   offcpu   an off-CPU interval of the owner thread with reason "network"
 *            (the blocking signal) that contains the retransmit;
 *   syscall  a slow syscall of the owner thread (the syscall signal) that
 *            contains it;
 *   owner    neither was recorded (or the thread was not waiting): the
 *            stack the owner was in when the recorder last learned it in
 *            process context, before the retransmit.
 * One row per connection and waiting code path; waited_ns adds each
 * interval once however many retransmits it held, and explained_pct is its
 * share of all the network-blocked time of that process.  Connections
 * without retransmits get a row of zeros, so a run without loss says so;
 * their stack is the owner's last one while the connection was open (the
 * code that used it, rather than the code that closed it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/views.h"

/* Does relation (a table, or a temporary view f_x) have every column of
 * cols (space-separated)? */
static int has_columns(sqlite3 *db, const char *rel, const char *cols)
{
	char sql[256], want[128], *tok, *save = NULL;
	sqlite3_stmt *st = NULL;
	int ok = 1;

	snprintf(want, sizeof(want), "%s", cols);
	snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('%s') "
		 "WHERE name = ?", rel);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	for (tok = strtok_r(want, " ", &save); tok && ok;
	     tok = strtok_r(NULL, " ", &save)) {
		sqlite3_bind_text(st, 1, tok, -1, SQLITE_TRANSIENT);
		ok = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ok;
}

#define WAIT_COLS "time duration pid tid stack_id"

static int run_retransmit(struct nsk_report *rep, const struct nsk_view *v)
{
	/* Text fits 80 columns: the remote end names the connection, and the
	 * waiting code is its first three frames in the program itself (the
	 * kernel part of an off-CPU stack is the same scheduler frames every
	 * time, then the C library's wrapper).  JSON and CSV carry both ends
	 * and the whole stack. */
	static const struct nsk_col_hint h[] = {
		{ "local", NULL, NSK_COL_DATA_ONLY },
		{ "remote", NULL, 0 },
		{ "retransmits", "retrans", 0 },
		{ "pid", NULL, 0 },
		{ "comm", NULL, NSK_COL_DATA_ONLY },
		{ "tid", NULL, NSK_COL_DATA_ONLY },
		{ "waited_ns", NULL, NSK_COL_DATA_ONLY },
		{ "waited_ms", "waited ms", NSK_COL_TEXT_ONLY },
		{ "explained_pct", "explained", NSK_COL_PCT },
		{ "srtt_us", NULL, NSK_COL_DATA_ONLY },
		{ "rto_us", NULL, NSK_COL_DATA_ONLY },
		{ "waited_in", NULL, NSK_COL_DATA_ONLY },
		{ "stack", NULL, NSK_COL_DATA_ONLY },
		{ "code", "waiting code", NSK_COL_FLEX | NSK_COL_TEXT_ONLY },
		{ NULL, NULL, 0 }
	};
	/* Intervals are matched in the tables (rowids; the retransmits are
	 * already filtered), the share's base is taken from the filtered
	 * view when the report core made one. */
	const char *off = has_columns(rep->db, "offcpu", WAIT_COLS " reason")
				  ? "offcpu" : NULL;
	const char *sys = has_columns(rep->db, "syscall_slow", WAIT_COLS)
				  ? "syscall_slow" : NULL;
	/* an int, not a pointer: gcc 12 with -fsanitize=address otherwise
	 * believes the chosen name may be NULL (-Wformat-truncation) */
	int off_filtered = has_columns(rep->db, "f_offcpu", WAIT_COLS " reason");
	const char *sys_f = has_columns(rep->db, "f_syscall_slow", WAIT_COLS)
				    ? "f_syscall_slow" : "syscall_slow";
	const char *sock;
	char off_id[512], sys_id[512], net_wait[512];
	sqlite3_stmt *st;

	/* The interval of the owner thread each retransmit fell in. */
	if (off)
		snprintf(off_id, sizeof(off_id),
			 "(SELECT o.rowid FROM %s o WHERE o.tid = r.tid "
			 "AND o.pid = r.pid AND o.reason IN ('network', 4) "
			 "AND o.time <= r.time AND r.time < o.time + o.duration "
			 "ORDER BY o.time DESC LIMIT 1)", off);
	else
		snprintf(off_id, sizeof(off_id), "NULL");
	/* A slow syscall counts as a network wait when it was on a socket. */
	sock = sys && has_columns(rep->db, "syscall_slow", "target")
		       ? " AND target LIKE 'socket:%'" : "";
	if (sys)
		snprintf(sys_id, sizeof(sys_id),
			 "(SELECT s.rowid FROM %s s WHERE s.tid = r.tid "
			 "AND s.pid = r.pid%s "
			 "AND s.time <= r.time AND r.time < s.time + s.duration "
			 "ORDER BY s.time DESC LIMIT 1)", sys, sock);
	else
		snprintf(sys_id, sizeof(sys_id), "NULL");
	/* All network-blocked time of each process: the share's base, from
	 * the signal the row's waits came from. */
	snprintf(net_wait, sizeof(net_wait),
		 "SELECT NULL AS pid, NULL AS source, NULL AS ns");
	if (off)
		snprintf(net_wait, sizeof(net_wait),
			 "SELECT pid, 'offcpu' AS source, sum(duration) AS ns "
			 "FROM %s WHERE reason IN ('network', 4) GROUP BY pid",
			 off_filtered ? "f_offcpu" : "offcpu");
	if (sys) {
		size_t len = strlen(net_wait);

		snprintf(net_wait + len, sizeof(net_wait) - len,
			 " UNION ALL SELECT pid, 'syscall', sum(duration) "
			 "FROM %s WHERE 1%s GROUP BY pid", sys_f, sock);
	}

	st = nsk_report__prepare(rep,
		"WITH rt AS ("
		" SELECT r.time, r.conn_id, r.pid, r.tid, r.srtt_us, r.rto_us,"
		" %s AS off_id, %s AS sys_id FROM f_retransmit r"
		"), wt AS ("
		" SELECT rt.*, CASE WHEN off_id IS NOT NULL THEN 'offcpu'"
		"  WHEN sys_id IS NOT NULL THEN 'syscall' ELSE 'owner' END AS source,"
		"  COALESCE(%s%s%s, %s%s%s,"
		"   (SELECT c.stack_id FROM conn_owner c WHERE c.conn_id = rt.conn_id"
		"    AND c.time <= rt.time AND c.stack_id != 0"
		"    ORDER BY c.time DESC LIMIT 1), 0) AS stack_id,"
		"  COALESCE(%s%s%s, %s%s%s) AS wdur"
		" FROM rt"
		"), per_wait AS ("
		" SELECT conn_id, source, stack_id, off_id, sys_id, count(*) AS n,"
		"  max(wdur) AS d, sum(srtt_us) AS srtt_sum, max(rto_us) AS rto"
		" FROM wt GROUP BY conn_id, source, stack_id, off_id, sys_id"
		"), per_path AS ("
		" SELECT conn_id, source, stack_id, sum(n) AS retransmits,"
		"  COALESCE(sum(d), 0) AS waited_ns, sum(srtt_sum) / sum(n) AS srtt_us,"
		"  max(rto) AS rto_us"
		" FROM per_wait GROUP BY conn_id, source, stack_id"
		"), net_wait AS (%s"
		"), rows AS ("
		" SELECT conn_id, retransmits, waited_ns, source, stack_id, srtt_us,"
		"  rto_us FROM per_path"
		" UNION ALL"
		" SELECT c.id, 0, 0, 'owner', COALESCE((SELECT o.stack_id"
		"  FROM conn_owner o WHERE o.conn_id = c.id AND o.stack_id != 0"
		"  ORDER BY o.state = 'ESTABLISHED' DESC, o.time DESC LIMIT 1), 0),"
		"  NULL, NULL"
		" FROM conn c WHERE NOT EXISTS (SELECT 1 FROM per_path p"
		"  WHERE p.conn_id = c.id)"
		"  AND c.id IN (SELECT conn_id FROM f_conn_owner)"
		") SELECT c.local, c.remote, x.retransmits, c.pid, cm.name AS comm,"
		" c.tid, x.waited_ns, round(x.waited_ns / 1e6, 1) AS waited_ms,"
		" round(100.0 * x.waited_ns / w.ns, 2)"
		" AS explained_pct, x.srtt_us, x.rto_us, x.source AS waited_in,"
		" COALESCE(s.chain, '[no stack]') AS stack,"
		" COALESCE((SELECT group_concat(name, ' <- ') FROM (SELECT f.name"
		"  FROM stack_frame sf JOIN func f ON f.id = sf.func_id"
		"  WHERE sf.stack_id = x.stack_id AND f.kernel = 0 AND sf.pos >="
		"  (SELECT min(a.pos) FROM stack_frame a JOIN func af"
		"   ON af.id = a.func_id WHERE a.stack_id = x.stack_id"
		"   AND af.kernel = 0 AND af.module NOT LIKE 'lib%%.so%%'"
		"   AND af.module NOT LIKE 'ld-%%')"
		"  ORDER BY sf.pos LIMIT 3)), s.chain, '[no stack]') AS code"
		" FROM rows x JOIN conn c ON c.id = x.conn_id"
		" LEFT JOIN comm cm ON cm.id = c.comm_id"
		" LEFT JOIN stack s ON s.id = x.stack_id"
		" LEFT JOIN net_wait w ON w.pid = c.pid AND w.source = x.source"
		" ORDER BY x.retransmits DESC, x.waited_ns DESC, c.id LIMIT %ld",
		off_id, sys_id,
		off ? "(SELECT stack_id FROM " : "NULL", off ? off : "",
		off ? " WHERE rowid = off_id)" : "",
		sys ? "(SELECT stack_id FROM " : "NULL", sys ? sys : "",
		sys ? " WHERE rowid = sys_id)" : "",
		off ? "(SELECT duration FROM " : "NULL", off ? off : "",
		off ? " WHERE rowid = off_id)" : "",
		sys ? "(SELECT duration FROM " : "NULL", sys ? sys : "",
		sys ? " WHERE rowid = sys_id)" : "",
		net_wait, rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

const struct nsk_view nsk_view_net_retransmit = {
	.name = "retransmit",
	.signal = "net",
	.help = "TCP retransmits per connection, with the time its process "
		"waited on them and the code that waited",
	.run = run_retransmit,
	.weights = NULL,
	.unit = "retransmits",
	.reads = NSK_VIEW_READS_OFFCPU,
};
