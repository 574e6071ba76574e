/* Which processes' mapping records the watcher keeps (followed.h). */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "record/procs/followed.h"

void nsk_followed__init(struct nsk_followed *f, int targets_fd)
{
	*f = (struct nsk_followed){ .targets_fd = targets_fd };
}

void nsk_followed__free(struct nsk_followed *f)
{
	nsk_pidset__free(&f->set);
	free(f->leaving);
	*f = (struct nsk_followed){ .targets_fd = -1 };
}

void nsk_followed__event(struct nsk_followed *f, const struct nsk_ev_proc *e)
{
	if (f->targets_fd < 0)
		return;
	if (e->hdr.type == NSK_EV_PROC_FORK || e->hdr.type == NSK_EV_PROC_EXEC) {
		nsk_pidset__add(&f->set, e->pid); /* (ENOMEM: asked of the map) */
		return;
	}
	if (e->hdr.type != NSK_EV_PROC_EXIT || !(e->flags & NSK_EV_PROC_GROUP_DEAD))
		return;
	if (f->nleaving == f->capleaving) {
		size_t cap = f->capleaving ? f->capleaving * 2 : 64;
		uint32_t *v = realloc(f->leaving, cap * sizeof(*v));

		if (!v)
			return; /* followed a little longer: harmless */
		f->leaving = v;
		f->capleaving = cap;
	}
	f->leaving[f->nleaving++] = e->pid;
}

int nsk_followed__has(struct nsk_followed *f, uint32_t pid)
{
	uint8_t one;

	if (f->targets_fd < 0 || nsk_pidset__has(&f->set, pid))
		return 1;
	/* a child whose fork is not on the ring buffer yet, or a process
	 * the recording began with */
	if (bpf_map_lookup_elem(f->targets_fd, &pid, &one))
		return 0;
	nsk_pidset__add(&f->set, pid);
	return 1;
}

size_t nsk_followed__ended(const struct nsk_followed *f)
{
	return f->nleaving;
}

void nsk_followed__forget(struct nsk_followed *f, size_t n)
{
	if (n > f->nleaving)
		n = f->nleaving;
	for (size_t i = 0; i < n; i++)
		nsk_pidset__remove(&f->set, f->leaving[i]);
	if (n < f->nleaving) /* (memmove wants buffers even for no bytes) */
		memmove(f->leaving, f->leaving + n, (f->nleaving - n) * sizeof(*f->leaving));
	f->nleaving -= n;
}
