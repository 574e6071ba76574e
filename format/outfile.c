/* Output files made safely (include/nusku/outfile.h): probe what is at the
 * name without following or blocking, create the new file under a fresh
 * name with O_EXCL, rename it over the name.  It lives in format/ because
 * format/ is the room record/ and report/ both stand on, and because the
 * .nsk policy needs the magic, which only format/ knows. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/outfile.h>

#include "format/wire.h"

static int same_file(const char *name, const struct nsk_outfile *of)
{
	struct stat st;

	return !lstat(name, &st) && S_ISREG(st.st_mode) &&
	       st.st_dev == of->dev && st.st_ino == of->ino;
}

int nsk_outfile__probe(const char *path, struct stat *st, uint8_t *head,
		       size_t *headlen, char *err, size_t errlen)
{
	size_t want = headlen ? *headlen : 0, got = 0;
	int fd, res;

	if (headlen)
		*headlen = 0;
	if (lstat(path, st) < 0) {
		if (errno == ENOENT)
			return 0;
		res = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-res));
		return res;
	}
	if (S_ISLNK(st->st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link; not writing "
			 "through it", path);
		return -ELOOP;
	}
	if (S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s is a directory", path);
		return -EISDIR;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s exists and is not a regular file; "
			 "not replacing it", path);
		return -EEXIST;
	}
	if (!want)
		return 1;
	/* Swapped for a link or a FIFO since the lstat: O_NOFOLLOW fails,
	 * O_NONBLOCK does not wait for a writer, and fstat says which. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		res = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-res));
		return res;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s changed while being looked at; not "
			 "replacing it", path);
		return -EEXIST;
	}
	while (got < want) {
		ssize_t n = read(fd, head + got, want - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*headlen = got;
	return 1;
}

int nsk_outfile__create(struct nsk_outfile *of, const char *path, char *err,
			size_t errlen)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	struct stat st;
	int res;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->path = strdup(path);
	/* "dir/.name.XXXXXX": hidden, and in the same file system as path
	 * so that the rename is atomic. */
	if (of->path && asprintf(&of->tmp, "%.*s.%s.XXXXXX", dirlen, path,
				 path + dirlen) < 0)
		of->tmp = NULL;
	if (!of->path || !of->tmp) {
		nsk_outfile__release(of);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* mkostemp: O_CREAT | O_EXCL, mode 0600 */
	of->fd = mkostemp(of->tmp, O_CLOEXEC);
	if (of->fd < 0 || fstat(of->fd, &st) < 0) {
		res = -errno;
		snprintf(err, errlen, "cannot create %s: %s", path,
			 strerror(-res));
		nsk_outfile__discard(of);
		return res;
	}
	of->dev = st.st_dev;
	of->ino = st.st_ino;
	return 0;
}

int nsk_outfile__commit(struct nsk_outfile *of, char *err, size_t errlen)
{
	int res;

	if (!of->tmp)
		return 0;
	if (!same_file(of->tmp, of)) {
		snprintf(err, errlen, "%s: the temporary file %s was replaced "
			 "by something else; not using it", of->path, of->tmp);
		return -EEXIST;
	}
	if (rename(of->tmp, of->path) < 0) {
		res = -errno;
		snprintf(err, errlen, "cannot create %s: %s", of->path,
			 strerror(-res));
		return res;
	}
	free(of->tmp);
	of->tmp = NULL;
	return 0;
}

void nsk_outfile__discard(struct nsk_outfile *of)
{
	const char *name = of->tmp ? of->tmp : of->path;

	/* Only the file made here, and only while the name still holds it. */
	if (name && of->ino && same_file(name, of))
		unlink(name);
	nsk_outfile__release(of);
}

void nsk_outfile__release(struct nsk_outfile *of)
{
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	free(of->path);
	free(of->tmp);
	of->path = of->tmp = NULL;
	of->ino = 0;
}

int nsk_outfile__create_recording(struct nsk_outfile *of, const char *path,
				  char *err, size_t errlen)
{
	uint8_t head[NSK_MAGIC_LEN];
	size_t n = sizeof(head);
	struct stat st;
	int res;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	res = nsk_outfile__probe(path, &st, head, &n, err, errlen);
	if (res < 0)
		return res;
	/* An empty file (touch, mktemp) holds nothing to lose; anything
	 * else that is not a recording is someone's data. */
	if (res == 1 && st.st_size > 0 &&
	    (n < NSK_MAGIC_LEN || memcmp(head, NSK_MAGIC, NSK_MAGIC_LEN))) {
		snprintf(err, errlen, "%s exists and is not a .nsk recording; "
			 "not replacing it", path);
		return -EEXIST;
	}
	return nsk_outfile__create(of, path, err, errlen);
}
