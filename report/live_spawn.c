/* Command lines that make a recording stream for nusku live: the local
 * recorder (this very binary, `record -o -`) and the same over OpenSSH.
 *
 * Over ssh the remote side gets one command string, so every word is
 * single-quoted: a program argument with spaces or quotes arrives intact
 * and nothing is expanded by the remote shell.  Exit statuses are turned
 * into one line a person can act on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/live.h"

struct argv_buf {
	char **v;
	int n;
	int cap;
	int failed;
};

static void push(struct argv_buf *a, const char *s)
{
	char **nv;

	if (a->failed)
		return;
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		nv = realloc(a->v, a->cap * sizeof(*nv));
		if (!nv) {
			a->failed = 1;
			return;
		}
		a->v = nv;
	}
	a->v[a->n] = strdup(s);
	if (!a->v[a->n]) {
		a->failed = 1;
		return;
	}
	a->v[++a->n] = NULL;
}

static char **finish(struct argv_buf *a)
{
	if (a->failed || !a->v) {
		if (a->v) {
			a->v[a->n] = NULL;
			nsk_live__free_argv(a->v);
		}
		return NULL;
	}
	return a->v;
}

void nsk_live__free_argv(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

/* The words after the program name, shared by the local and remote forms. */
static void push_record_words(struct argv_buf *a, const struct nsk_live_opts *o)
{
	char pid[32];

	push(a, "record");
	push(a, "-o");
	push(a, "-");
	for (int i = 0; i < o->nrecord_args; i++)
		push(a, o->record_args[i]);
	if (o->all)
		push(a, "-a");
	if (o->pid > 0) {
		snprintf(pid, sizeof(pid), "%d", o->pid);
		push(a, "-p");
		push(a, pid);
	}
	if (o->cmd && o->cmd[0]) {
		push(a, "--");
		for (char **p = o->cmd; *p; p++)
			push(a, *p);
	}
}

char **nsk_live__record_argv(const struct nsk_live_opts *o, const char *exe)
{
	struct argv_buf a = { 0 };

	push(&a, exe);
	push_record_words(&a, o);
	return finish(&a);
}

int nsk_live__shell_quote(char *buf, size_t size, const char *s)
{
	size_t n = strlen(buf);

	/* 'it'\''s': close the quote, an escaped quote, reopen. */
	if (n + 1 >= size)
		return -ENOSPC;
	buf[n++] = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			if (n + 4 >= size)
				return -ENOSPC;
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			if (n + 1 >= size)
				return -ENOSPC;
			buf[n++] = *s;
		}
	}
	if (n + 2 > size)
		return -ENOSPC;
	buf[n++] = '\'';
	buf[n] = '\0';
	return 0;
}

char **nsk_live__ssh_argv(const struct nsk_live_opts *o, int batch)
{
	struct argv_buf a = { 0 }, words = { 0 };
	char *remote = NULL;
	size_t size = 64;
	char **res = NULL;

	push(&a, "ssh");
	/* No password prompt can be answered without a terminal, and a
	 * prompt left waiting would look like a hang. */
	if (batch) {
		push(&a, "-o");
		push(&a, "BatchMode=yes");
	}
	/* No remote pty: the stream is binary and must arrive untouched. */
	push(&a, "-T");
	for (int i = 0; i < o->nssh_opts; i++)
		push(&a, o->ssh_opts[i]);
	push(&a, "--");
	push(&a, o->ssh_host);

	push(&words, o->remote_nusku ? o->remote_nusku : "nusku");
	if (o->input) {
		/* a recording there (a file, a session): its bytes, as they
		 * come; the view is here */
		push(&words, "live");
		push(&words, "--raw");
		push(&words, o->input);
	} else {
		push_record_words(&words, o);
	}
	if (words.failed || !words.v)
		goto cleanup;
	for (int i = 0; i < words.n; i++)
		size += strlen(words.v[i]) * 4 + 3;
	remote = calloc(1, size);
	if (!remote)
		goto cleanup;
	for (int i = 0; i < words.n; i++) {
		if (i)
			strcat(remote, " ");
		if (nsk_live__shell_quote(remote, size, words.v[i]) < 0)
			goto cleanup;
	}
	push(&a, remote);
	res = finish(&a);
	a.v = NULL;
cleanup:
	if (a.v) {
		a.v[a.n] = NULL;
		nsk_live__free_argv(a.v);
	}
	if (words.v)
		nsk_live__free_argv(words.v);
	free(remote);
	return res;
}

void nsk_live__explain_exit(char *msg, size_t len, int remote, int status,
			    const char *last, const char *host)
{
	const char *who = remote ? host : "nusku record";

	msg[0] = '\0';
	if (status == 0)
		return;
	if (!last)
		last = "";
	/* The recorder's own "nusku: " prefix: we say who it was. */
	if (!strncmp(last, "nusku: ", 7))
		last += 7;
	if (remote && status == 255) {
		/* ssh's own failure: its message says it best. */
		snprintf(msg, len, "ssh %s failed: %s", host,
			 *last ? last : "exit status 255");
	} else if (remote && status == 127) {
		snprintf(msg, len,
			 "%s: nusku is not installed or not on PATH there "
			 "(exit 127; use --remote-nusku PATH)%s%s",
			 host, *last ? ": " : "", last);
	} else if (status == 126) {
		snprintf(msg, len, "%s: nusku could not be run (exit 126)%s%s",
			 who, *last ? ": " : "", last);
	} else if (status >= 128 && status < 128 + 65) {
		snprintf(msg, len, "%s: recorder killed by signal %d%s%s", who,
			 status - 128, *last ? ": " : "", last);
	} else if (*last) {
		snprintf(msg, len, "%s: %s (exit %d)", who, last, status);
	} else {
		snprintf(msg, len, "%s: recorder failed (exit %d)", who,
			 status);
	}
}
