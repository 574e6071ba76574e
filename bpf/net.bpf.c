// SPDX-License-Identifier: GPL-2.0
/* The network signal: TCP retransmits tied to the process that owns the socket.
 *
 * Retransmits fire from timers and softirqs, where "current" is whatever task
 * the CPU happened to be running.  So the owner of a socket is learned in
 * process context instead (sends, receives, and state changes made while the
 * socket is locked by its user) and kept in the socket itself (socket-local
 * storage); a retransmit looks its owner up there.  Sockets are named to
 * user space by their cookie, which the kernel never reuses.
 *
 * A user stack costs more than everything else here, so one is taken only
 * when a socket is first seen, when its owner changes, at its first receive
 * (where waiting happens) and on state changes made by its owner: never per
 * send or receive.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "target.bpf.h"
#include "ustack.bpf.h"
#include <nusku/events/net.h>

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define TCP_CA_RECOVERY 3
#define TCP_CA_LOSS 4

/* The kernel's HZ, to turn icsk_rto (jiffies) into microseconds. */
extern unsigned int CONFIG_HZ __kconfig __weak;

/* Wake the consumer only past this many bytes; it polls on a timer anyway. */
const volatile __u64 wakeup_bytes = 64 * 1024;
/* Bytes of user stack to copy with each stack taken (DWARF unwinding in
 * user space); 0: the frame-pointer walk only. */
const volatile __u32 ustack_bytes = 0;
/* Possible CPUs, for clearing a hint on all of them (record/net.c). */
const volatile __u32 ncpus = 1;

struct owner {
	__u64 cookie;
	__u32 pid;
	__u32 tid;
	__u32 flags;
	__u32 pad;
};

#define OWNER_RECV_STACK 1u /* a stack was taken at a receive */

/* The owner lives in the socket itself (socket-local storage): found with
 * one pointer read on every send and receive, absent (and cheap to find
 * absent) on sockets of other processes, and freed by the kernel with the
 * socket, so a reused socket address never inherits a stale owner. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct owner);
} net_socks SEC(".maps");

/* The last socket each thread slot of a CPU used, known to need nothing:
 * a send or receive on it again by the same thread returns after a few
 * loads, without the socket-storage lookup (a storm sends and receives on
 * the same socket over and over).  The cookie, read from the socket itself,
 * tells a new socket at a freed one's address apart: it has none, or
 * another.  Per CPU and by thread, so it needs no lock; a miss is only the
 * full path. */
struct net_hint {
	__u64 sk;
	__u64 cookie;
	__u32 tid;
	__u32 recv; /* its receive stack was taken: receives need nothing */
};

#define NET_HINTS 16
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NET_HINTS);
	__type(key, __u32);
	__type(value, struct net_hint);
} net_hints SEC(".maps");

#define NET_MAX_CPUS 1024

static __always_inline __u32 hint_slot(__u32 tid)
{
	return (tid * 2654435761u) >> 28; /* NET_HINTS slots */
}

/* sk's owner changes from tid: its hints, on whatever CPU it ran, must not
 * let it pass for the owner any more.  Rare (an owner change). */
static __always_inline void forget_hints(struct sock *sk, __u32 tid)
{
	__u32 slot = hint_slot(tid);

	for (__u32 c = 0; c < NET_MAX_CPUS && c < ncpus; c++) {
		struct net_hint *h = bpf_map_lookup_percpu_elem(&net_hints, &slot, c);

		if (h && h->sk == (__u64)sk)
			h->sk = 0;
	}
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} net_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_NET_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} net_stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&net_stats, &which);

	if (v)
		(*v)++;
}

static __always_inline int is_tcp(struct sock *sk)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);

	if (family != AF_INET && family != AF_INET6)
		return 0;
	return BPF_CORE_READ(sk, sk_protocol) == IPPROTO_TCP;
}

/* Addresses, ports and state of a socket or request socket: both start with
 * struct sock_common. */
static __always_inline void fill_addrs(struct nsk_ev_net *e,
				       const struct sock_common *skc)
{
	e->family = BPF_CORE_READ(skc, skc_family);
	e->sport = BPF_CORE_READ(skc, skc_num);
	e->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	e->state = BPF_CORE_READ(skc, skc_state);
	if (e->family == AF_INET6) {
		BPF_CORE_READ_INTO(&e->saddr, skc, skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&e->daddr, skc, skc_v6_daddr.in6_u.u6_addr8);
	} else {
		/* 4 bytes each: BPF_CORE_READ_INTO would copy as many as the
		 * destination holds, reading past the field. */
		__u32 saddr = BPF_CORE_READ(skc, skc_rcv_saddr);
		__u32 daddr = BPF_CORE_READ(skc, skc_daddr);

		__builtin_memcpy(e->saddr, &saddr, 4);
		__builtin_memcpy(e->daddr, &daddr, 4);
	}
}

/* size: sizeof(struct nsk_ev_net) or of struct nsk_ev_net_copy (a constant
 * at each call, as the ring buffer wants). */
static __always_inline struct nsk_ev_net *reserve_size(__u32 type, __u64 size)
{
	struct nsk_ev_net *e = bpf_ringbuf_reserve(&net_events, size, 0);

	if (!e) {
		count(NSK_NET_STAT_RINGBUF_LOST);
		return 0;
	}
	e->hdr.type = type;
	e->hdr.size = size;
	e->time = bpf_ktime_get_ns();
	e->kind = 0;
	e->ca_state = 0;
	e->srtt_us = 0;
	e->rto_us = 0;
	e->nstack = 0;
	e->stack_err = 0;
	e->total_retrans = 0;
	e->pad = 0;
	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	return e;
}

static __always_inline struct nsk_ev_net *reserve(__u32 type)
{
	return reserve_size(type, sizeof(struct nsk_ev_net));
}

static __always_inline void submit(struct nsk_ev_net *e)
{
	__u64 avail = bpf_ringbuf_query(&net_events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(e, avail >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
						    : BPF_RB_NO_WAKEUP);
}

/* The current thread uses sk in process context: learn or refresh its
 * owner.  want_stack: this is a moment worth a stack (state change). */
/* The current thread uses sk in process context: learn or refresh its
 * owner.  want_stack: this is a moment worth a stack (state change);
 * newstate: the state being entered, -1 for none. */
static __always_inline void learn(void *ctx, struct sock *sk, __u32 type,
				  int is_recv, int want_stack, int newstate)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, slot = hint_slot(tid);
	struct net_hint *h = bpf_map_lookup_elem(&net_hints, &slot);
	struct owner *o;
	struct nsk_ev_net *e;
	long n;

	if (!want_stack && h && h->sk == (__u64)sk && h->tid == tid &&
	    (h->recv || !is_recv) && h->cookie &&
	    h->cookie == (__u64)sk->__sk_common.skc_cookie.counter)
		return;
	o = bpf_sk_storage_get(&net_socks, sk, 0, 0);
	if (o && o->tid == tid) {
		/* Known owner: a stack only at the first receive or when
		 * asked for (state change). */
		if (!want_stack && !(is_recv && !(o->flags & OWNER_RECV_STACK))) {
			if (h) {
				h->sk = (__u64)sk;
				h->cookie = o->cookie;
				h->tid = tid;
				h->recv = !!(o->flags & OWNER_RECV_STACK);
			}
			return;
		}
		if (!want_stack)
			type = NSK_EV_NET_CONN;
	} else {
		/* A new socket or a new owner thread. */
		if (!nsk_is_target(pid) || !is_tcp(sk))
			return;
		if (o)
			forget_hints(sk, o->tid);
		o = bpf_sk_storage_get(&net_socks, sk, 0,
				       BPF_SK_STORAGE_GET_F_CREATE);
		if (!o) {
			count(NSK_NET_STAT_SOCKS_FULL);
			return;
		}
		o->cookie = bpf_get_socket_cookie(sk);
		o->pid = pid;
		o->tid = tid;
		o->flags = 0;
		type = NSK_EV_NET_CONN;
	}
	if (is_recv)
		o->flags |= OWNER_RECV_STACK;

	if (ustack_bytes) {
		struct nsk_ev_net_copy *c = (void *)reserve_size(
			type, sizeof(struct nsk_ev_net_copy));

		if (!c)
			return;
		nsk_copy_ustack(&c->u, c->bytes, ustack_bytes);
		e = &c->ev;
	} else {
		e = reserve(type);
		if (!e)
			return;
	}
	e->cookie = o->cookie;
	e->pid = pid;
	e->tid = tid;
	fill_addrs(e, &sk->__sk_common);
	if (newstate >= 0)
		e->state = newstate; /* not stored yet when the tracepoint fires */
	n = bpf_get_stack(ctx, e->stack, sizeof(e->stack), BPF_F_USER_STACK);
	if (n < 0) {
		e->stack_err = n;
		count(NSK_NET_STAT_STACK_LOST);
	} else {
		e->nstack = n / sizeof(__u64);
	}
	submit(e);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(nsk_net_send, struct sock *sk, int ret, int flags)
{
	learn(ctx, sk, NSK_EV_NET_CONN, 0, 0, -1);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(nsk_net_recv, struct sock *sk, int ret, int flags)
{
	learn(ctx, sk, NSK_EV_NET_CONN, 1, 0, -1);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(nsk_net_state, struct sock *sk, int oldstate, int newstate)
{
	struct owner *o;
	struct nsk_ev_net *e;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	/* Made by the socket's user (connect, listen, close: it holds the
	 * socket lock) rather than by a softirq: the owner speaks. */
	if (newstate != TCP_CLOSE && BPF_CORE_READ(sk, sk_lock.owned) &&
	    nsk_is_target(nsk_cur_tgid())) {
		learn(ctx, sk, NSK_EV_NET_STATE, 0, 1, newstate);
		return 0;
	}
	o = bpf_sk_storage_get(&net_socks, sk, 0, 0);
	if (!o)
		return 0;
	e = reserve(newstate == TCP_CLOSE ? NSK_EV_NET_CLOSE : NSK_EV_NET_STATE);
	if (!e)
		return 0;
	e->cookie = o->cookie;
	e->pid = o->pid;
	e->tid = o->tid;
	fill_addrs(e, &sk->__sk_common);
	e->state = newstate;
	/* The kernel's own count, for the user half to check that every
	 * retransmit it counted reached us (a listener's counts its SYN/ACKs,
	 * which the accepted sockets inherit). */
	if (newstate == TCP_CLOSE && BPF_CORE_READ(sk, __sk_common.skc_state) != TCP_LISTEN)
		e->total_retrans = BPF_CORE_READ((struct tcp_sock *)sk, total_retrans);
	submit(e);
	return 0;
}

static __always_inline void retrans(struct sock *sk, const struct sock_common *skc,
				    __u32 kind)
{
	struct owner *o = bpf_sk_storage_get(&net_socks, sk, 0, 0);
	struct inet_connection_sock *icsk = (void *)sk;
	struct tcp_sock *tp = (void *)sk;
	struct nsk_ev_net *e;
	__u32 rto;

	if (!o)
		return; /* not a socket of ours */
	e = reserve(NSK_EV_NET_RETRANS);
	if (!e)
		return;
	e->cookie = o->cookie;
	e->pid = o->pid;
	e->tid = o->tid;
	fill_addrs(e, skc);
	e->kind = kind;
	if (kind != NSK_NET_RETRANS_SYNACK) {
		e->ca_state = BPF_CORE_READ_BITFIELD_PROBED(icsk, icsk_ca_state);
		if (e->ca_state != TCP_CA_LOSS && e->ca_state != TCP_CA_RECOVERY &&
		    e->state == TCP_ESTABLISHED)
			e->kind = NSK_NET_RETRANS_PROBE;
		e->srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;
		e->total_retrans = BPF_CORE_READ(tp, total_retrans);
		rto = BPF_CORE_READ(icsk, icsk_rto);
		if (CONFIG_HZ)
			e->rto_us = (__u64)rto * 1000000 / CONFIG_HZ;
	}
	submit(e);
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(nsk_net_retransmit, struct sock *sk, struct sk_buff *skb, int err)
{
	/* The tracepoint also fires for attempts that did not go out
	 * (-EBUSY, -ENOMEM, ...); count what the kernel counts. */
	if (err)
		return 0;
	retrans(sk, &sk->__sk_common, NSK_NET_RETRANS_DATA);
	return 0;
}

/* Kernels before 6.10 have a two-argument tcp_retransmit_skb: the user half
 * loads this one instead there. */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(nsk_net_retransmit_old, struct sock *sk, struct sk_buff *skb)
{
	retrans(sk, &sk->__sk_common, NSK_NET_RETRANS_DATA);
	return 0;
}

SEC("tp_btf/tcp_retransmit_synack")
int BPF_PROG(nsk_net_retransmit_synack, struct sock *sk,
	     struct request_sock *req)
{
	/* sk is the listener; the addresses are the request's. */
	retrans(sk, &req->__req_common, NSK_NET_RETRANS_SYNACK);
	return 0;
}
