/* The record descriptor table: for each record type, its fields in wire
 * order, each a kind (how it is encoded) and an offset into struct
 * nsk_record (where it lives).  The codec walks this table, so adding a
 * field in a minor version is one line here, one row in docs/format.md. */
#include <stddef.h>

#include "format/wire.h"

#define F(rec, fld, kind) { #fld, NSK_F_##kind, offsetof(struct nsk_record, rec.fld) }
#define N(a) (sizeof(a) / sizeof((a)[0]))
/* A varint takes at most 10 bytes; a length or count prefix at most 5. */
#define D(name, a, nvar) [NSK_REC_##name] = { a, N(a), nvar, 10 * N(a) }

static const struct nsk_field meta[] = {
	F(meta, key, BYTES),
	F(meta, value, BYTES),
};

static const struct nsk_field clock_[] = {
	F(clock, monotonic_ns, TIME),
	F(clock, realtime_ns, U64),
};

static const struct nsk_field string[] = {
	F(string, id, U64),
	F(string, str, BYTES),
};

static const struct nsk_field process[] = {
	F(process, time, TIME),
	F(process, pid, U32),
	F(process, ppid, U32),
	F(process, how, U32),
	F(process, comm, BYTES),
	F(process, cmdline, BYTES),
};

static const struct nsk_field thread[] = {
	F(thread, time, TIME),
	F(thread, pid, U32),
	F(thread, tid, U32),
	F(thread, name, BYTES),
};

static const struct nsk_field exit_[] = {
	F(exit, time, TIME),
	F(exit, pid, U32),
	F(exit, tid, U32),
	F(exit, exit_code, S32),
};

static const struct nsk_field mapping[] = {
	F(mapping, id, U64),
	F(mapping, pid, U32),
	F(mapping, start, U64),
	F(mapping, end, U64),
	F(mapping, pgoff, U64),
	F(mapping, path_id, U64),
	F(mapping, build_id, BYTES),
	F(mapping, flags, U32),
};

static const struct nsk_field frame[] = {
	F(frame, id, U64),
	F(frame, mapping_id, U64),
	F(frame, addr, U64),
	F(frame, function_id, U64),
	F(frame, file_id, U64),
	F(frame, line, U32),
	F(frame, flags, U32),
	F(frame, inline_parent, U64),
	F(frame, module_id, U64),
};

static const struct nsk_field stack[] = {
	F(stack, id, U64),
	F(stack, flags, U32),
	F(stack, frames, U64S),
};

static const struct nsk_field sample[] = {
	F(sample, time, TIME),
	F(sample, pid, U32),
	F(sample, tid, U32),
	F(sample, cpu, U32),
	F(sample, stack_id, U64),
	F(sample, weight, U64),
};

static const struct nsk_field alloc[] = {
	F(alloc, time, TIME),
	F(alloc, pid, U32),
	F(alloc, tid, U32),
	F(alloc, addr, U64),
	F(alloc, size, U64),
	F(alloc, stack_id, U64),
	F(alloc, fn, U32),
	F(alloc, weight, U64),
};

static const struct nsk_field free_[] = {
	F(free, time, TIME),
	F(free, pid, U32),
	F(free, tid, U32),
	F(free, addr, U64),
	F(free, fn, U32),
	F(free, size, U64),
};

static const struct nsk_field offcpu[] = {
	F(offcpu, time, TIME),
	F(offcpu, duration, U64),
	F(offcpu, pid, U32),
	F(offcpu, tid, U32),
	F(offcpu, state, U32),
	F(offcpu, reason, U32),
	F(offcpu, stack_id, U64),
	F(offcpu, syscall, S32),
	F(offcpu, wait_addr, U64),
	F(offcpu, waker_pid, U32),
	F(offcpu, waker_tid, U32),
	F(offcpu, waker_comm, BYTES),
	F(offcpu, waker_stack_id, U64),
	F(offcpu, detail_id, U64),
};

static const struct nsk_field syscall_stat[] = {
	F(syscall_stat, time, TIME),
	F(syscall_stat, window_ns, U64),
	F(syscall_stat, pid, U32),
	F(syscall_stat, tid, U32),
	F(syscall_stat, nr, U32),
	F(syscall_stat, stack_id, U64),
	F(syscall_stat, count, U64),
	F(syscall_stat, errors, U64),
	F(syscall_stat, total_ns, U64),
	F(syscall_stat, max_ns, U64),
	F(syscall_stat, hist, U64S),
	F(syscall_stat, errnos, U64S),
};

static const struct nsk_field syscall_slow[] = {
	F(syscall_slow, time, TIME),
	F(syscall_slow, duration, U64),
	F(syscall_slow, pid, U32),
	F(syscall_slow, tid, U32),
	F(syscall_slow, nr, U32),
	F(syscall_slow, ret, S64),
	F(syscall_slow, args, U64S),
	F(syscall_slow, target_id, U64),
	F(syscall_slow, stack_id, U64),
};

static const struct nsk_field conn[] = {
	F(conn, id, U64),
	F(conn, family, U32),
	F(conn, saddr, BYTES),
	F(conn, daddr, BYTES),
	F(conn, sport, U32),
	F(conn, dport, U32),
	F(conn, pid, U32),
	F(conn, tid, U32),
	F(conn, time, TIME),
	F(conn, state, U32),
	F(conn, stack_id, U64),
};

static const struct nsk_field retransmit[] = {
	F(retransmit, time, TIME),
	F(retransmit, conn_id, U64),
	F(retransmit, pid, U32),
	F(retransmit, tid, U32),
	F(retransmit, kind, U32),
	F(retransmit, state, U32),
	F(retransmit, srtt_us, U64),
	F(retransmit, rto_us, U64),
};

static const struct nsk_field loss[] = {
	F(loss, time_start, TIME),
	F(loss, time_end, TIME),
	F(loss, source_id, U64),
	F(loss, count, U64),
};

static const struct nsk_field end[] = {
	F(end, time, TIME),
	F(end, records, U64),
	F(end, lost, U64),
};

static const struct nsk_field syscall_path[] = {
	F(syscall_path, time, TIME),
	F(syscall_path, window_ns, U64),
	F(syscall_path, pid, U32),
	F(syscall_path, tid, U32),
	F(syscall_path, nr, U32),
	F(syscall_path, stack_id, U64),
	F(syscall_path, calls, U64),
	F(syscall_path, total_ns, U64),
};

static const struct nsk_field syscall_name[] = {
	F(syscall_name, nr, U32),
	F(syscall_name, name, BYTES),
};

const struct nsk_rec_desc nsk_rec_descs[NSK_REC_TYPE_MAX] = {
	D(META, meta, 2),
	D(CLOCK, clock_, 0),
	D(STRING, string, 1),
	D(PROCESS, process, 2),
	D(THREAD, thread, 1),
	D(EXIT, exit_, 0),
	D(MAPPING, mapping, 1),
	D(FRAME, frame, 0),
	D(STACK, stack, 1),
	D(SAMPLE, sample, 0),
	D(ALLOC, alloc, 0),
	D(FREE, free_, 0),
	D(OFFCPU, offcpu, 1),
	D(SYSCALL_STAT, syscall_stat, 2),
	D(SYSCALL_SLOW, syscall_slow, 1),
	D(CONN, conn, 2),
	D(RETRANSMIT, retransmit, 0),
	D(LOSS, loss, 0),
	D(END, end, 0),
	D(SYSCALL_PATH, syscall_path, 0),
	D(SYSCALL_NAME, syscall_name, 1),
};

const char *nsk_field_kind__name(unsigned kind)
{
	static const char *const names[] = {
		[NSK_F_U32] = "uvar32", [NSK_F_U64] = "uvar64",
		[NSK_F_S32] = "zigzag32", [NSK_F_S64] = "zigzag64",
		[NSK_F_TIME] = "time", [NSK_F_BYTES] = "bytes",
		[NSK_F_U64S] = "u64s",
	};
	return kind < N(names) ? names[kind] : 0;
}
