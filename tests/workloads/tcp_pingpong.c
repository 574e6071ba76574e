/* tcp_pingpong: a TCP client and server exchanging a known number of messages.
 *
 *     tcp_pingpong [-6] [-n MESSAGES] [-s BYTES]
 *
 * The process listens on the loopback address (127.0.0.1, or ::1 with -6) on
 * a port the kernel picks, forks a server child, and is itself the client:
 * MESSAGES times it sends a request of BYTES bytes (send_request) and waits
 * for the reply of the same size (fetch_reply), which is where it blocks.
 * The server echoes each request back (serve_client) and exits at end of
 * stream.  Prints one line with the counts; exits 0 when every reply arrived
 * intact.  Only loopback addresses are ever used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Named functions stay in the frame-pointer chain: a stack taken in recv()
 * shows fetch_reply, because read_all keeps a frame of its own. */
#define NOINLINE __attribute__((noinline))

NOINLINE static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly len bytes; 0 at a clean end of stream before any, -1 on error. */
NOINLINE static int read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 1;
}

NOINLINE int send_request(int fd, char *buf, size_t len, unsigned int i)
{
	memset(buf, 'a' + (int)(i % 26), len);
	return write_all(fd, buf, len);
}

/* The client's waiting code: a test asserts waits are charged here. */
NOINLINE int fetch_reply(int fd, char *buf, size_t len, unsigned int i)
{
	size_t k;

	if (read_all(fd, buf, len) != 1)
		return -1;
	for (k = 0; k < len; k++)
		if (buf[k] != 'a' + (int)(i % 26))
			return -1;
	return 0;
}

NOINLINE int serve_client(int fd, char *buf, size_t len)
{
	int r;

	while ((r = read_all(fd, buf, len)) == 1)
		if (write_all(fd, buf, len) < 0)
			return -1;
	return r;
}

/* The last FIN of a connection can be lost and retransmitted after both
 * processes are gone, outside any recording.  The server closes last (the
 * client's FIN came first), so it waits until its own FIN was acknowledged,
 * and every retransmit of the exchange happens while both ends live. */
static void wait_last_ack(int fd)
{
	struct tcp_info ti;
	socklen_t len;
	int i;

	for (i = 0; i < 20000; i++) {
		len = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
		    ti.tcpi_state != TCP_LAST_ACK)
			return;
		usleep(1000);
	}
}

static int server(int lfd, size_t len)
{
	char *buf = malloc(len);
	int fd, r;

	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || !buf)
		return 1;
	r = serve_client(fd, buf, len);
	shutdown(fd, SHUT_WR);
	wait_last_ack(fd);
	close(fd);
	free(buf);
	return r == 0 ? 0 : 1;
}

static int client(const struct sockaddr *sa, socklen_t salen, int family,
		  unsigned int n, size_t len)
{
	char *buf = malloc(len);
	unsigned int i, ok = 0;
	int one = 1;
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || !buf || connect(fd, sa, salen) < 0) {
		perror("tcp_pingpong: connect");
		return -1;
	}
	/* One request per segment: no Nagle delay between round trips. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; i < n; i++) {
		if (send_request(fd, buf, len, i) < 0 || fetch_reply(fd, buf, len, i) < 0)
			break;
		ok++;
	}
	/* Our FIN first, then the server's: see wait_last_ack. */
	shutdown(fd, SHUT_WR);
	while (read_all(fd, buf, len) == 1)
		;
	close(fd);
	free(buf);
	return (int)ok;
}

int main(int argc, char **argv)
{
	unsigned int n = 100;
	size_t len = 64;
	int family = AF_INET, opt, lfd, status = 0, got;
	struct sockaddr_storage ss = {0};
	socklen_t salen;
	pid_t child;
	struct timespec t0, t1;

	while ((opt = getopt(argc, argv, "6n:s:")) != -1) {
		switch (opt) {
		case '6': family = AF_INET6; break;
		case 'n': n = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 's': len = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: tcp_pingpong [-6] [-n MESSAGES] [-s BYTES]\n");
			return 2;
		}
	}
	if (len == 0 || len > (1u << 20)) {
		fprintf(stderr, "tcp_pingpong: -s must be 1..1048576\n");
		return 2;
	}
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		salen = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		salen = sizeof(*in6);
	}
	lfd = socket(family, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, salen) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&ss, &salen) < 0) {
		perror("tcp_pingpong: listen");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("tcp_pingpong: fork");
		return 1;
	}
	if (child == 0)
		_exit(server(lfd, len));
	close(lfd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	got = client((struct sockaddr *)&ss, salen, family, n, len);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (waitpid(child, &status, 0) < 0)
		status = 1;
	/* The exchange's own time, for bench/net.sh (the recorder's start and
	 * end are not the signal's overhead). */
	printf("tcp_pingpong: %d/%u messages of %zu bytes in %lld us, server %s\n",
	       got, n, len,
	       (long long)((t1.tv_sec - t0.tv_sec) * 1000000LL +
			   (t1.tv_nsec - t0.tv_nsec) / 1000),
	       WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
	return got == (int)n && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
