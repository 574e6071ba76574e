/* Loader handlers of the network signal: connections and retransmits.
 *
 * A connection record comes again whenever its owner, state or owner's stack
 * changes, so each one is kept as a row of conn_owner (the history the
 * retransmit view looks back into for the code that owned the socket at the
 * time) and folded into one conn row per connection (the latest owner and
 * state, the fullest addresses).  Addresses are written as text once here,
 * "127.0.0.1:5000" or "[::1]:5000", so no query needs to know bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "report/load.h"

static const char *const tcp_states[] = {
	"", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
	"NEW_SYN_RECV",
};

static const char *state_name(uint32_t state)
{
	if (state > 0 && state < sizeof(tcp_states) / sizeof(tcp_states[0]))
		return tcp_states[state];
	return "UNKNOWN";
}

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case 1: return "timeout";
	case 2: return "synack";
	case 3: return "probe";
	default: return "unknown";
	}
}

/* "addr:port" of a family's address bytes; "?" for a malformed one. */
static void format_addr(uint32_t family, struct nsk_bytes a, uint32_t port,
			char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (family == AF_INET && a.len == 4)
		inet_ntop(AF_INET, a.data, ip, sizeof(ip));
	else if (family == AF_INET6 && a.len == 16)
		inet_ntop(AF_INET6, a.data, ip, sizeof(ip));
	if (family == AF_INET6)
		snprintf(out, len, "[%s]:%u", ip, port);
	else
		snprintf(out, len, "%s:%u", ip, port);
}

static void bind_comm(sqlite3_stmt *st, int col, int64_t comm)
{
	if (comm)
		sqlite3_bind_int64(st, col, comm);
	else
		sqlite3_bind_null(st, col);
}

int nsk_load_net__conn(struct nsk_load *ld, const struct nsk_record *rec)
{
	/* Port 0: the socket's local port was not picked yet (connecting) or
	 * already released (closing); keep the address that had one. */
	static const char upsert[] =
		"INSERT INTO conn VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) "
		"ON CONFLICT (id) DO UPDATE SET "
		"local = CASE WHEN ?10 THEN excluded.local ELSE local END, "
		"remote = CASE WHEN ?10 THEN excluded.remote ELSE remote END, "
		"pid = excluded.pid, tid = excluded.tid, comm_id = excluded.comm_id, "
		"state = excluded.state, "
		"first_time = min(first_time, excluded.first_time), "
		"last_time = max(last_time, excluded.last_time)";
	static const char history[] =
		"INSERT INTO conn_owner VALUES (?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_conn *c = &rec->conn;
	sqlite3_stmt *st = nsk_load__stmt(ld, upsert);
	sqlite3_stmt *hs = nsk_load__stmt(ld, history);
	char local[64], remote[64];
	int64_t comm;
	int err;

	if (!st || !hs)
		return -EIO;
	err = nsk_load__stack_ref(ld, c->stack_id);
	if (err)
		return err;
	nsk_load__time(ld, c->time);
	comm = nsk_load__comm(ld, c->pid, c->tid);
	format_addr(c->family, c->saddr, c->sport, local, sizeof(local));
	format_addr(c->family, c->daddr, c->dport, remote, sizeof(remote));
	sqlite3_bind_int64(st, 1, (int64_t)c->id);
	sqlite3_bind_int64(st, 2, c->family);
	sqlite3_bind_text(st, 3, local, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, remote, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, c->pid);
	sqlite3_bind_int64(st, 6, c->tid);
	bind_comm(st, 7, comm);
	sqlite3_bind_text(st, 8, state_name(c->state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, (int64_t)c->time);
	sqlite3_bind_int(st, 10, c->sport != 0);
	err = nsk_load__step(ld, st);
	if (err)
		return err;
	sqlite3_bind_int64(hs, 1, (int64_t)c->time);
	sqlite3_bind_int64(hs, 2, (int64_t)c->id);
	sqlite3_bind_int64(hs, 3, c->pid);
	sqlite3_bind_int64(hs, 4, c->tid);
	bind_comm(hs, 5, comm);
	sqlite3_bind_text(hs, 6, state_name(c->state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(hs, 7, (int64_t)c->stack_id);
	return nsk_load__step(ld, hs);
}

int nsk_load_net__retransmit(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT INTO retransmit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_retransmit *r = &rec->retransmit;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);

	if (!st)
		return -EIO;
	nsk_load__time(ld, r->time);
	sqlite3_bind_int64(st, 1, (int64_t)r->time);
	sqlite3_bind_int64(st, 2, r->pid);
	sqlite3_bind_int64(st, 3, r->tid);
	bind_comm(st, 4, nsk_load__comm(ld, r->pid, r->tid));
	sqlite3_bind_int64(st, 5, (int64_t)r->conn_id);
	sqlite3_bind_text(st, 6, kind_name(r->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, state_name(r->state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, (int64_t)r->srtt_us);
	sqlite3_bind_int64(st, 9, (int64_t)r->rto_us);
	return nsk_load__step(ld, st);
}
