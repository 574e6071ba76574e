/* struct nsk_io on a file descriptor: the I/O the recorder and reporter use
 * outside tests.  Retries EINTR; reports short writes as they are so the
 * writer's loop handles them in one place. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <nusku/format.h>

struct fd_ctx {
	int fd;
	int close_fd;
};

static ssize_t fd_write(void *ctx, const void *buf, size_t len)
{
	struct fd_ctx *c = ctx;
	ssize_t n;

	do
		n = write(c->fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
	struct fd_ctx *c = ctx;
	ssize_t n;

	do
		n = read(c->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EWOULDBLOCK)
		return -EAGAIN;
	return n < 0 ? -errno : n;
}

static int fd_close(void *ctx)
{
	struct fd_ctx *c = ctx;
	int err = 0;

	if (c->close_fd && close(c->fd) < 0)
		err = -errno;
	free(c);
	return err;
}

struct nsk_io *nsk_io__from_fd(int fd, int close_fd)
{
	struct nsk_io *io = calloc(1, sizeof(*io));
	struct fd_ctx *c = calloc(1, sizeof(*c));

	if (!io || !c) {
		free(io);
		free(c);
		return NULL;
	}
	c->fd = fd;
	c->close_fd = close_fd;
	io->write = fd_write;
	io->read = fd_read;
	io->close = fd_close;
	io->ctx = c;
	return io;
}

void nsk_io__free(struct nsk_io *io)
{
	if (!io)
		return;
	if (io->close)
		io->close(io->ctx);
	free(io);
}
