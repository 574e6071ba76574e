/* The network signal, user half: TCP connections and their retransmits.
 *
 * bpf/net.bpf.c names sockets by cookie and reports owners, state changes,
 * retransmits and closes (include/nusku/events/net.h).  This file turns a
 * cookie into a connection id, writes an NSK_REC_CONN whenever what is known
 * about a connection changes (owner, state, addresses, owner's stack) and an
 * NSK_REC_RETRANSMIT per retransmitted segment.  It keeps the recording raw:
 * which code waited on a retransmit is worked out by the report.
 *
 * A SYN/ACK is retransmitted before the accepted socket exists, so it is
 * filed under its address tuple until a socket with that tuple shows up and
 * takes over its connection id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "net.skel.h"
#include <nusku/events/net.h>
#include "record/session.h"

#define NET_BUCKETS 1024
#define NET_MAX_PENDING 256 /* SYN/ACK connections waiting for their socket */

struct net_conn {
	struct net_conn *next;
	uint64_t cookie; /* 0: pending SYN/ACK connection, keyed by tuple */
	uint64_t id;
	uint32_t family, sport, dport, state, pid, tid;
	uint8_t saddr[16], daddr[16];
	uint64_t stack_id;
	uint32_t retrans_seen; /* retransmitted segments accounted for */
};

struct net_state {
	struct net_bpf *skel;
	struct nsk_session *s;
	struct net_conn *buckets[NET_BUCKETS];
	struct net_conn *pending;
	unsigned int npending;
	uint64_t next_id;
	uint64_t stats_seen[NSK_NET_STAT_MAX];
	uint64_t recursion_seen;
	int ncpus;
};

static struct net_conn **bucket(struct net_state *st, uint64_t cookie)
{
	return &st->buckets[(cookie * 0x9E3779B97F4A7C15ull) >> 54];
}

static int same_tuple(const struct net_conn *c, const struct nsk_ev_net *e)
{
	return c->family == e->family && c->sport == e->sport &&
	       c->dport == e->dport && !memcmp(c->saddr, e->saddr, 16) &&
	       !memcmp(c->daddr, e->daddr, 16);
}

/* The pending SYN/ACK connection with e's tuple, unlinked, or NULL. */
static struct net_conn *take_pending(struct net_state *st, const struct nsk_ev_net *e)
{
	struct net_conn **pp;

	for (pp = &st->pending; *pp; pp = &(*pp)->next) {
		struct net_conn *c = *pp;

		if (same_tuple(c, e)) {
			*pp = c->next;
			st->npending--;
			return c;
		}
	}
	return NULL;
}

static struct net_conn *new_conn(struct net_state *st)
{
	struct net_conn *c = calloc(1, sizeof(*c));

	if (c)
		c->id = ++st->next_id;
	return c;
}

/* The connection of a socket cookie; *fresh says it was just made. */
static struct net_conn *conn_of(struct net_state *st, const struct nsk_ev_net *e,
				int *fresh)
{
	struct net_conn **b = bucket(st, e->cookie), *c;

	*fresh = 0;
	for (c = *b; c; c = c->next)
		if (c->cookie == e->cookie)
			return c;
	c = take_pending(st, e);
	if (!c) {
		c = new_conn(st);
		*fresh = 1;
	}
	if (!c)
		return NULL;
	c->cookie = e->cookie;
	c->next = *b;
	*b = c;
	return c;
}

/* A SYN/ACK retransmit: its connection, found or made by tuple. */
static struct net_conn *pending_of(struct net_state *st, const struct nsk_ev_net *e,
				   int *fresh)
{
	struct net_conn *c, *last = NULL, **pp;

	*fresh = 0;
	for (c = st->pending; c; c = c->next)
		if (same_tuple(c, e))
			return c;
	if (st->npending >= NET_MAX_PENDING) {
		/* Drop the oldest (the tail): never accepted by a target. */
		for (pp = &st->pending; (*pp)->next; pp = &(*pp)->next)
			;
		last = *pp;
		*pp = NULL;
		free(last);
		st->npending--;
	}
	c = new_conn(st);
	if (!c)
		return NULL;
	c->next = st->pending;
	st->pending = c;
	st->npending++;
	*fresh = 1;
	return c;
}

/* Takes in what e says about c; writes an NSK_REC_CONN when anything
 * changed (or fresh). */
static int update_conn(struct net_state *st, struct net_conn *c,
		       const struct nsk_ev_net *e, int fresh)
{
	const struct nsk_ev_net_copy *copy =
		e->hdr.size >= sizeof(*copy) ? (const void *)e : NULL;
	struct nsk_record rec = { .type = NSK_REC_CONN };
	uint64_t stack_id = c->stack_id;
	uint32_t len;
	int half;

	if (e->nstack > 0 || copy) {
		uint32_t n = e->nstack < NSK_NET_STACK_DEPTH ? e->nstack
							     : NSK_NET_STACK_DEPTH;
		uint32_t flags = e->stack_err ? NSK_STACK_USER_ERROR : 0;

		/* The session picks the frame-pointer walk or the DWARF
		 * unwind of the copy (--call-graph) and says which. */
		if (copy && copy->u.len <= NSK_USTACK_MAX)
			stack_id = nsk_session__stack_copied(
				st->s, e->pid, e->time, NULL, 0,
				(const uint64_t *)e->stack, n, &copy->u,
				copy->bytes, flags);
		else
			stack_id = nsk_session__stack_at(
				st->s, e->pid, e->time, NULL, 0,
				(const uint64_t *)e->stack, n,
				flags | NSK_STACK_UNWIND_FP);
		if (!stack_id) {
			nsk_session__lost(st->s, "net.stack", 1);
			stack_id = c->stack_id;
		}
	}
	/* A socket's tuple can be half known (a connecting socket before its
	 * port is picked, a closing one after its port is released): keep the
	 * fuller one. */
	half = !fresh && e->sport == 0 && c->sport != 0;
	if (!fresh && (half || same_tuple(c, e)) && c->pid == e->pid &&
	    c->tid == e->tid && c->state == e->state && c->stack_id == stack_id)
		return 0;
	if (!half) {
		c->family = e->family;
		c->sport = e->sport;
		c->dport = e->dport;
		memcpy(c->saddr, e->saddr, 16);
		memcpy(c->daddr, e->daddr, 16);
	}
	c->pid = e->pid;
	c->tid = e->tid;
	c->state = e->state;
	c->stack_id = stack_id;

	len = c->family == AF_INET6 ? 16 : 4;
	rec.conn.id = c->id;
	rec.conn.family = c->family;
	rec.conn.saddr = (struct nsk_bytes){ c->saddr, len };
	rec.conn.daddr = (struct nsk_bytes){ c->daddr, len };
	rec.conn.sport = c->sport;
	rec.conn.dport = c->dport;
	rec.conn.pid = c->pid;
	rec.conn.tid = c->tid;
	rec.conn.time = e->time;
	rec.conn.state = c->state;
	rec.conn.stack_id = c->stack_id;
	return nsk_session__emit(st->s, &rec);
}

static void forget(struct net_state *st, uint64_t cookie)
{
	struct net_conn **pp = bucket(st, cookie), *c;

	for (; *pp; pp = &(*pp)->next) {
		c = *pp;
		if (c->cookie == cookie) {
			*pp = c->next;
			free(c);
			return;
		}
	}
}

/* The kernel counts each socket's retransmitted segments (total_retrans);
 * what it counted beyond the records we got is a loss, shown with the
 * recording.  (A segment can go unseen: a retransmitted skb holding two
 * segments, or a tracepoint run the kernel skipped.) */
static void check_total(struct net_state *st, struct net_conn *c,
			const struct nsk_ev_net *e)
{
	if (e->total_retrans > c->retrans_seen) {
		nsk_session__lost(st->s, "net.retransmit",
				  e->total_retrans - c->retrans_seen);
		c->retrans_seen = e->total_retrans;
	}
}

static int on_retransmit(struct net_state *st, const struct nsk_ev_net *e)
{
	struct nsk_record rec = { .type = NSK_REC_RETRANSMIT };
	struct net_conn *c;
	int fresh, err;

	c = e->kind == NSK_NET_RETRANS_SYNACK ? pending_of(st, e, &fresh)
					      : conn_of(st, e, &fresh);
	if (!c)
		return -ENOMEM;
	if (fresh && e->kind == NSK_NET_RETRANS_SYNACK) {
		/* Until the accepted socket shows up, the listener's code
		 * (its cookie is the event's) is all we know. */
		struct net_conn *l;

		for (l = *bucket(st, e->cookie); l; l = l->next)
			if (l->cookie == e->cookie)
				c->stack_id = l->stack_id;
	}
	err = update_conn(st, c, e, fresh);
	if (err)
		return err;
	c->retrans_seen++;
	if (e->kind != NSK_NET_RETRANS_SYNACK)
		check_total(st, c, e);
	rec.retransmit.time = e->time;
	rec.retransmit.conn_id = c->id;
	rec.retransmit.pid = e->pid;
	rec.retransmit.tid = e->tid;
	rec.retransmit.kind = e->kind;
	rec.retransmit.state = e->state;
	rec.retransmit.srtt_us = e->srtt_us;
	rec.retransmit.rto_us = e->rto_us;
	return nsk_session__emit(st->s, &rec);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct net_state *st = ctx;
	const struct nsk_ev_net *e = data;
	struct net_conn *c;
	int fresh, err;

	if (size < sizeof(*e) || e->hdr.size > size)
		return 0;
	switch (e->hdr.type) {
	case NSK_EV_NET_CONN:
	case NSK_EV_NET_STATE:
	case NSK_EV_NET_CLOSE:
		c = conn_of(st, e, &fresh);
		if (!c)
			return -ENOMEM;
		err = update_conn(st, c, e, fresh);
		if (e->hdr.type == NSK_EV_NET_CLOSE) {
			check_total(st, c, e);
			forget(st, e->cookie);
		}
		return err;
	case NSK_EV_NET_RETRANS:
		return on_retransmit(st, e);
	}
	return 0;
}

/* Number of arguments of tracepoint name in the running kernel's BTF, or
 * -ENOENT when it has no such tracepoint. */
static int tp_nargs(const struct btf *vmlinux, const char *name)
{
	char tname[128];
	const struct btf_type *t;
	int id;

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux, tname, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(vmlinux, id);			/* typedef */
	t = t ? btf__type_by_id(vmlinux, t->type) : NULL;	/* pointer */
	t = t ? btf__type_by_id(vmlinux, t->type) : NULL;	/* func proto */
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	return btf_vlen(t) - 1; /* the first is the tracepoint's void *data */
}

/* Loads only the programs this kernel has tracepoints for. */
static int choose_programs(struct net_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int n, err = 0;

	if (!vmlinux)
		return -errno;
	n = tp_nargs(vmlinux, "tcp_retransmit_skb");
	if (n < 0) {
		err = -ENOENT; /* nothing to record */
		goto cleanup;
	}
	bpf_program__set_autoload(skel->progs.nsk_net_retransmit, n >= 3);
	bpf_program__set_autoload(skel->progs.nsk_net_retransmit_old, n < 3);
	if (tp_nargs(vmlinux, "tcp_retransmit_synack") < 0)
		bpf_program__set_autoload(skel->progs.nsk_net_retransmit_synack, false);
	if (tp_nargs(vmlinux, "sock_send_length") < 0)
		bpf_program__set_autoload(skel->progs.nsk_net_send, false);
	if (tp_nargs(vmlinux, "sock_recv_length") < 0)
		bpf_program__set_autoload(skel->progs.nsk_net_recv, false);
	if (tp_nargs(vmlinux, "inet_sock_set_state") < 0)
		err = -ENOENT;
cleanup:
	btf__free(vmlinux);
	return err;
}

static void net_stop(void *state)
{
	struct net_state *st = state;
	struct net_conn *c, *next;
	size_t i;

	if (!st)
		return;
	net_bpf__destroy(st->skel);
	for (i = 0; i < NET_BUCKETS; i++)
		for (c = st->buckets[i]; c; c = next) {
			next = c->next;
			free(c);
		}
	for (c = st->pending; c; c = next) {
		next = c->next;
		free(c);
	}
	free(st);
}

/* Open, choose, configure and load (struct nsk_signal's load: may run in
 * a thread of its own). */
static int net_load(struct nsk_session *s, void **state)
{
	struct net_state *st = calloc(1, sizeof(*st));
	int err;

	*state = NULL;
	if (!st)
		return -ENOMEM;
	st->s = s;
	st->ncpus = libbpf_num_possible_cpus();
	st->skel = net_bpf__open();
	if (!st->skel || st->ncpus <= 0) {
		err = st->skel ? st->ncpus : -errno;
		goto cleanup;
	}
	err = choose_programs(st->skel);
	if (err)
		goto cleanup;
	st->skel->rodata->ustack_bytes = nsk_session__ustack_bytes(s);
	st->skel->rodata->ncpus = st->ncpus;
	st->skel->rodata->nsk_all_but = nsk_session__all_but(s);
	err = bpf_map__reuse_fd(st->skel->maps.nsk_targets, nsk_session__targets_fd(s));
	if (err)
		goto cleanup;
	err = net_bpf__load(st->skel);
	if (err)
		goto cleanup;
	*state = st;
	return 0;
cleanup:
	net_stop(st);
	return err;
}

static int net_start(struct nsk_session *s, void **state)
{
	struct net_state *st = *state;
	int err;

	*state = NULL;
	if (!st && (err = net_load(s, (void **)&st)))
		return err;
	err = net_bpf__attach(st->skel);
	if (err)
		goto cleanup;
	err = nsk_session__add_ringbuf(s, bpf_map__fd(st->skel->maps.net_events),
				       on_event, st);
	if (err)
		goto cleanup;
	*state = st;
	return 0;
cleanup:
	net_stop(st);
	return err;
}

static const char *const stat_source[NSK_NET_STAT_MAX] = {
	[NSK_NET_STAT_RINGBUF_LOST] = "net.ringbuf",
	[NSK_NET_STAT_STACK_LOST] = "net.stack",
	[NSK_NET_STAT_SOCKS_FULL] = "net.socks",
};

/* A program that fires while another run of it is active on the same CPU
 * (a softirq interrupting it) is skipped by the kernel: count those too. */
static int poll_recursion(struct net_state *st)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, st->skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue; /* not loaded on this kernel */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		sum += info.recursion_misses;
	}
	if (sum > st->recursion_seen)
		nsk_session__lost(st->s, "net.recursion", sum - st->recursion_seen);
	st->recursion_seen = sum;
	return 0;
}

/* Turns the BPF side's loss counters into losses. */
static int net_poll(struct nsk_session *s, void *state, int final)
{
	struct net_state *st = state;
	int err = nsk_session__drain_lost(s, bpf_map__fd(st->skel->maps.net_stats),
					  stat_source, NSK_NET_STAT_MAX,
					  st->stats_seen);

	return err ? err : poll_recursion(st);
}

const struct nsk_signal nsk_signal_net = {
	.name = "net",
	.load = net_load,
	.start = net_start,
	.poll = net_poll,
	.on_process = NULL,
	.stop = net_stop,
};
