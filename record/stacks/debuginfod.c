/* Debug files from debuginfod servers (see debuginfod.h).
 *
 * Requests are a list, fetched in the order they came by one thread with
 * its own libdebuginfod client; a waiter sleeps on the condition variable
 * until its request is done or its time is up.  The list only grows (one
 * entry per build-id of a module without symbols: tens, not thousands).
 *
 * libdebuginfod is opened (dlopen) only when DEBUGINFOD_URLS names a
 * server, as libdw does it: linked, it brought libcurl, gnutls, krb5, ldap
 * and 25 more libraries into every nusku command, 9.8 MB of a recorder's
 * resident memory and their relocations at every start, for a feature most
 * runs never use.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/debuginfod.h"

#ifdef HAVE_DEBUGINFOD

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

/* The library's calls this file makes, from dlopen. */
static struct {
	debuginfod_client *(*begin)(void);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(const debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*end)(debuginfod_client *);
	int ok;
} lib;

static void open_lib(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
	*(void **)&lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&lib.end = dlsym(h, "debuginfod_end");
	lib.ok = lib.begin && lib.set_user_data && lib.get_user_data &&
		 lib.set_progressfn && lib.find_debuginfo && lib.end;
	if (!lib.ok)
		dlclose(h); /* (kept open otherwise: its client lives on) */
}

enum state { QUEUED, FETCHING, DONE };

struct request {
	struct request *next;
	uint8_t build_id[64];
	size_t len;
	enum state state;
	char *path; /* DONE: the file, NULL when it failed */
};

struct nsk_debuginfod {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a request is done, or a new one came */
	pthread_t thread;
	struct request *head, **tail;
	int stop;
	uint64_t waited_ms; /* by all waiters, against the budget */
	uint64_t fetch_start_ms; /* the fetcher's own, unlocked */
	uint64_t last_bytes_ms;	 /* when bytes last came */
	long last_bytes;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* libdebuginfod calls this as data comes: a nonzero return aborts the
 * download.  a: bytes so far, b: the whole size when known. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct nsk_debuginfod *d = lib.get_user_data(c);
	int stop;

	uint64_t now = now_ms();

	pthread_mutex_lock(&d->lock);
	stop = d->stop;
	pthread_mutex_unlock(&d->lock);
	if (a != d->last_bytes) {
		d->last_bytes = a;
		d->last_bytes_ms = now;
	}
	/* a server that accepts and says nothing would hold the queue for
	 * libdebuginfod's own timeout (90 s by default) */
	return stop || a > NSK_DEBUGINFOD_MAX_BYTES ||
	       b > NSK_DEBUGINFOD_MAX_BYTES ||
	       now - d->fetch_start_ms > NSK_DEBUGINFOD_MAX_S * 1000 ||
	       now - d->last_bytes_ms > NSK_DEBUGINFOD_STALL_S * 1000;
}

static struct request *next_queued(struct nsk_debuginfod *d)
{
	for (struct request *r = d->head; r; r = r->next)
		if (r->state == QUEUED)
			return r;
	return NULL;
}

static void *fetcher(void *arg)
{
	struct nsk_debuginfod *d = arg;
	debuginfod_client *c = lib.begin();
	struct request *r;

	if (c) {
		lib.set_user_data(c, d);
		lib.set_progressfn(c, progress);
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		char *path = NULL;
		uint8_t id[64];
		size_t len;
		int fd;

		while (!d->stop && !(r = next_queued(d)))
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stop)
			break;
		r->state = FETCHING;
		memcpy(id, r->build_id, r->len);
		len = r->len;
		d->fetch_start_ms = d->last_bytes_ms = now_ms();
		d->last_bytes = -1;
		pthread_mutex_unlock(&d->lock);
		fd = c ? lib.find_debuginfo(c, id, (int)len, &path) : -ENOSYS;
		if (fd >= 0)
			close(fd);
		else
			path = NULL;
		pthread_mutex_lock(&d->lock);
		r->path = path;
		r->state = DONE;
		pthread_cond_broadcast(&d->cond);
	}
	/* a waiter that comes now finds nothing more will be done */
	for (r = d->head; r; r = r->next)
		r->state = DONE;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (c)
		lib.end(c);
	return NULL;
}

struct nsk_debuginfod *nsk_debuginfod__new(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct nsk_debuginfod *d;

	if (!urls || !*urls)
		return NULL;
	pthread_once(&once, open_lib);
	if (!lib.ok)
		return NULL; /* as without a server: no debuginfod here */
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	d->tail = &d->head;
	if (pthread_create(&d->thread, NULL, fetcher, d)) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return NULL;
	}
	return d;
}

void nsk_debuginfod__free(struct nsk_debuginfod *d)
{
	struct request *r, *next;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL); /* a download aborts at its next progress */
	for (r = d->head; r; r = next) {
		next = r->next;
		free(r->path);
		free(r);
	}
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static struct request *find(struct nsk_debuginfod *d, const uint8_t *id,
			    size_t len)
{
	for (struct request *r = d->head; r; r = r->next)
		if (r->len == len && !memcmp(r->build_id, id, len))
			return r;
	return NULL;
}

int nsk_debuginfod__request(struct nsk_debuginfod *d, const uint8_t *build_id,
			    size_t len)
{
	struct request *r;
	int err = 0;

	if (!len || len > sizeof(r->build_id))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (find(d, build_id, len))
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(r->build_id, build_id, len);
	r->len = len;
	r->state = d->stop ? DONE : QUEUED;
	*d->tail = r;
	d->tail = &r->next;
	pthread_cond_broadcast(&d->cond);
out:
	pthread_mutex_unlock(&d->lock);
	return err;
}

char *nsk_debuginfod__wait(struct nsk_debuginfod *d, const uint8_t *build_id,
			   size_t len)
{
	uint64_t start = now_ms(), limit;
	struct request *r;
	struct timespec ts;
	char *path = NULL;

	pthread_mutex_lock(&d->lock);
	r = find(d, build_id, len);
	if (!r)
		goto out;
	limit = NSK_DEBUGINFOD_BUDGET_MS > d->waited_ms ?
		NSK_DEBUGINFOD_BUDGET_MS - d->waited_ms : 0;
	if (limit > NSK_DEBUGINFOD_WAIT_MS)
		limit = NSK_DEBUGINFOD_WAIT_MS;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(limit / 1000);
	ts.tv_nsec += (long)(limit % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (r->state != DONE &&
	       pthread_cond_timedwait(&d->cond, &d->lock, &ts) != ETIMEDOUT)
		;
	d->waited_ms += now_ms() - start;
	/* A server too slow for one file holds up every file queued after
	 * it: no more waiting (files already fetched are still used). */
	if (r->state != DONE)
		d->waited_ms = NSK_DEBUGINFOD_BUDGET_MS;
	if (r->state == DONE && r->path)
		path = strdup(r->path);
out:
	pthread_mutex_unlock(&d->lock);
	return path;
}

#else /* !HAVE_DEBUGINFOD */

struct nsk_debuginfod *nsk_debuginfod__new(void)
{
	return NULL;
}

void nsk_debuginfod__free(struct nsk_debuginfod *d)
{
}

int nsk_debuginfod__request(struct nsk_debuginfod *d, const uint8_t *build_id,
			    size_t len)
{
	return -ENOSYS;
}

char *nsk_debuginfod__wait(struct nsk_debuginfod *d, const uint8_t *build_id,
			   size_t len)
{
	return NULL;
}

#endif
