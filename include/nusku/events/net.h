/* TCP sockets and their retransmits, from bpf/net.bpf.c to record/net.c.
 *
 * One record layout for every kind (the tag in the header says which), so
 * the user half keeps one switch.  A socket is named by its socket cookie
 * (unique for the life of the network namespace, never reused), which the
 * user half turns into a connection id.  Every record carries the socket's
 * addresses, because a connecting socket learns its local port only after
 * its first state change.
 *
 * pid/tid are the socket's owner: the thread last seen using it in process
 * context, never the task a timer or softirq happened to interrupt.
 */
#ifndef NUSKU_EVENTS_NET_H
#define NUSKU_EVENTS_NET_H

#include <nusku/events/common.h>
#include <nusku/events/ustack.h>

/* Tags (the net range is 50..59). */
#define NSK_EV_NET_CONN (NSK_EV_NET + 0)    /* owner learned or changed */
#define NSK_EV_NET_STATE (NSK_EV_NET + 1)   /* state change, no new owner */
#define NSK_EV_NET_RETRANS (NSK_EV_NET + 2) /* a segment retransmitted */
#define NSK_EV_NET_CLOSE (NSK_EV_NET + 3)   /* socket reached TCP_CLOSE */

/* Retransmit kinds, as in struct nsk_rec_retransmit. */
#define NSK_NET_RETRANS_DATA 1	 /* RTO or fast retransmit (and SYN) */
#define NSK_NET_RETRANS_SYNACK 2 /* SYN/ACK of a connection being accepted */
#define NSK_NET_RETRANS_PROBE 3	 /* tail loss probe */

#define NSK_NET_STACK_DEPTH 64

struct nsk_ev_net {
	struct nsk_ev_header hdr; /* NSK_EV_NET_* */
	__u64 time;
	__u64 cookie;	 /* socket cookie; for a SYN/ACK, the listener's */
	__u32 pid;	 /* owner */
	__u32 tid;
	__u32 family;	 /* AF_INET or AF_INET6 */
	__u32 sport;	 /* host order */
	__u32 dport;	 /* host order */
	__u32 state;	 /* TCP state (after the change, for STATE) */
	__u8 saddr[16];	 /* network order; IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u32 kind;	 /* RETRANS: NSK_NET_RETRANS_* */
	__u32 ca_state;	 /* RETRANS: congestion state (TCP_CA_*) */
	__u64 srtt_us;	 /* RETRANS: smoothed RTT */
	__u64 rto_us;	 /* RETRANS: retransmission timeout, 0 unknown */
	__u32 nstack;	 /* CONN: user frames in stack[], 0: none taken */
	__s32 stack_err; /* CONN: bpf_get_stack error, 0 if fine */
	__u32 total_retrans; /* RETRANS, CLOSE: the kernel's count of segments
			      * this socket retransmitted (tcp_sock) */
	__u32 pad;
	__u64 stack[NSK_NET_STACK_DEPTH]; /* CONN: user stack, leaf first */
};

_Static_assert(sizeof(struct nsk_ev_net) == 120 + 8 * NSK_NET_STACK_DEPTH,
	       "nsk_ev_net size");

/* A CONN or STATE event with a copy of the top of the user stack (unless
 * --call-graph fp), for DWARF unwinding in user space: hdr.size says which
 * of the two layouts a record has.  Stacks are taken a few times per socket,
 * so the room a copy needs costs little. */
struct nsk_ev_net_copy {
	struct nsk_ev_net ev;
	struct nsk_ev_ustack u;
	__u8 bytes[NSK_USTACK_ROOM];
};

/* Counters the BPF side keeps in its per-CPU array "net_stats". */
#define NSK_NET_STAT_RINGBUF_LOST 0 /* records the ring buffer had no room for */
#define NSK_NET_STAT_STACK_LOST 1   /* user stacks that could not be taken */
#define NSK_NET_STAT_SOCKS_FULL 2   /* sockets the owner map had no room for */
#define NSK_NET_STAT_MAX 3

#endif
