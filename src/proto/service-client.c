/* The client side of rtid serve, used by the shim and by the library's
 * service backend. Non-blocking throughout: a daemon that is absent, full,
 * silent or slow costs at most the caller's deadline. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "proto/service-client.h"

/* A test build's default socket lies under its build tree (-Ddefaults):
 * a build directory too deep for a socket path fails here, not at run time. */
_Static_assert(sizeof(RTID__SVC_SOCKET_DEFAULT) <= sizeof(((struct sockaddr_un *)0)->sun_path),
	       "the default socket path is too long for a unix socket: use a shorter build directory");

#define STARTED_MARGIN 5.0 /* seconds past the daemon's deadline for a started action */

const char *rtid__svc_path(const char *path)
{
	const char *env = getenv("RTID_SOCKET");

	if (path && *path)
		return path;
	return env && *env ? env : RTID__SVC_SOCKET_DEFAULT;
}

int rtid__svc_open(const char *path, struct rtid__svc_conn *c)
{
	return rtid__svc_open_version(path, c, RTID__SVC_VERSION_PLAIN);
}

int rtid__svc_open_version(const char *path, struct rtid__svc_conn *c, int version)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char hello[RTID__SVC_MSG_MAX];
	size_t n = rtid__svc_hello_format(hello, version);
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A unix connect never blocks half-way: it succeeds, or EAGAIN when full. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, hello, n, MSG_NOSIGNAL) != (ssize_t)n) {
		e = errno;
		close(fd);
		return -e;
	}
	*c = (struct rtid__svc_conn){ .fd = fd, .version = version };
	return 0;
}

/* One message into buf (NUL-terminated). Returns its length or -errno:
 * -EPIPE when the daemon closed the connection. */
static ssize_t await(int fd, char *buf, double until)
{
	/* A message already there is taken without a poll first: a batch's
	 * answers come together. */
	for (bool wait = false;; wait = true) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = (until - rtid__now()) * 1000.0;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (wait && poll(&p, 1, (int)left + 1) < 0 && errno != EINTR)
			return -errno;
		n = recv(fd, buf, RTID__SVC_MSG_MAX, MSG_DONTWAIT | MSG_TRUNC);
		if (n > 0 && n < RTID__SVC_MSG_MAX) {
			buf[n] = '\0';
			return n;
		}
		if (n == 0)
			return -EPIPE;
		if (n > 0 || (errno != EAGAIN && errno != EINTR))
			return -EIO; /* overlong, or broken */
	}
}

bool rtid__svc_uid_named(const char *want, uid_t uid)
{
	int n;

	return want && rtid__parse_pid(want, &n) == 0 && (uid_t)n == uid;
}

const char *rtid__svc_untrusted(const struct rtid__svc_conn *c, char *buf, size_t len)
{
	const char *want = getenv("RTID_SERVE_UID");
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0) {
		snprintf(buf, len, "its credentials cannot be read: %s", strerror(errno));
		return buf;
	}
	if (cr.uid == 0 || cr.uid == geteuid() || rtid__svc_uid_named(want, cr.uid))
		return NULL;
	snprintf(buf, len, "it runs as uid %u, not root%s", (unsigned)cr.uid,
		 want ? " nor RTID_SERVE_UID" : "");
	return buf;
}

/* Our wait for a queued action ran out: close both halves. From then on the
 * daemon cannot tell us "started" (its send fails, and it never starts an
 * action it could not announce), and what it said before is still queued
 * here: a "started" among it means the action runs (and, our half closed,
 * its outcome stays unknown); none means it never will. */
static ssize_t cancel(struct rtid__svc_conn *c, char *buf)
{
	ssize_t n;

	shutdown(c->fd, SHUT_RDWR);
	n = recv(c->fd, buf, RTID__SVC_MSG_MAX, MSG_DONTWAIT | MSG_TRUNC);
	if (n <= 0)
		return -ETIMEDOUT;
	if (n >= RTID__SVC_MSG_MAX)
		return -EIO;
	buf[n] = '\0';
	return n;
}

/* The daemon's greeting in buf: 0, -EPROTO when it refused us, else -EIO. */
static int welcomed(struct rtid__svc_conn *c, const char *buf, ssize_t n)
{
	int r = rtid__svc_welcome_parse(buf, (size_t)n, c->version, &c->actions);

	if (r < 0)
		return r == -EPROTO ? r : -EIO;
	c->greeted = true;
	return 0;
}

int rtid__svc_greeted(struct rtid__svc_conn *c, double until)
{
	char buf[RTID__SVC_MSG_MAX];
	ssize_t n;

	if (c->greeted)
		return 0;
	if ((n = await(c->fd, buf, until)) < 0)
		return n == -EPIPE ? -EIO : (int)n;
	return welcomed(c, buf, n);
}

int rtid__svc_call(struct rtid__svc_conn *c, const struct rtid__svc_req *q, double until,
		   struct rtid__svc_ans *out)
{
	char buf[RTID__SVC_MSG_MAX];
	struct rtid__svc_ans a;
	size_t len = rtid__svc_req_format(q, buf);
	bool action = q->op >= RTID__OP_LOCK;
	ssize_t n;
	int r;

	c->started = false;
	/* A map goes only with a restore, on a connection greeted for maps: a
	 * daemon that does not know them never gets the restore without it. */
	if (q->map.n && (q->op != RTID__OP_RESTORE || c->version < RTID__SVC_VERSION_MAP))
		return -EINVAL;
	if (send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -EIO;
	/* The request is out: from here on, a wait that runs out on an action
	 * cancels it (the greeting's wait too: it may be queued already). */
	for (;;) {
		n = await(c->fd, buf, until);
		if (n == -ETIMEDOUT && action && !c->started)
			n = cancel(c, buf);
		if (n < 0)
			return n == -EPIPE ? -EIO : (int)n;
		if (!c->greeted) {
			if ((r = welcomed(c, buf, n)) < 0)
				return r;
			continue;
		}
		if (rtid__svc_ans_parse(buf, (size_t)n, &a) < 0 || a.op != q->op || a.pid != q->pid)
			return -EIO;
		if (a.kind == RTID__SVC_UNKNOWN)
			c->started = true; /* whatever came before: it may have run */
		if (a.kind != RTID__SVC_STARTED)
			break;
		if (!action || c->started)
			return -EIO; /* a query is never started; an action once */
		c->started = true;
		until = rtid__now() + a.value / 1000.0 + STARTED_MARGIN;
	}
	*out = a;
	return 0;
}

int rtid__svc_batch(struct rtid__svc_conn *c, int op, const int *pids, size_t n, double until,
		    struct rtid__svc_ans *out)
{
	struct rtid__svc_ans got[RTID__SVC_BATCH_MAX];
	char buf[RTID__SVC_MSG_MAX];
	size_t len = rtid__svc_batch_format(op, pids, n, buf), k = 0;
	ssize_t r;
	int e;

	c->started = false;
	if (!len)
		return -EINVAL;
	if (send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -EIO;
	while (k < n) {
		if ((r = await(c->fd, buf, until)) < 0)
			return r == -EPIPE ? -EIO : (int)r;
		if (!c->greeted) {
			if ((e = welcomed(c, buf, r)) < 0)
				return e;
			continue;
		}
		/* In the batch's order, each about its own pid; a query is never
		 * "started". */
		if (rtid__svc_ans_parse(buf, (size_t)r, &got[k]) < 0 || got[k].op != op ||
		    got[k].pid != pids[k] || got[k].kind == RTID__SVC_STARTED ||
		    got[k].kind == RTID__SVC_UNKNOWN)
			return -EIO;
		k++;
	}
	memcpy(out, got, n * sizeof(*out));
	return 0;
}

int rtid__svc_status(struct rtid__svc_conn *c, double until,
		     void (*fn)(void *ctx, const char *stat), void *ctx)
{
	char buf[RTID__SVC_MSG_MAX];
	ssize_t n;
	int r;

	if (send(c->fd, "status", 6, MSG_NOSIGNAL | MSG_DONTWAIT) != 6)
		return -EIO;
	for (;;) {
		if ((n = await(c->fd, buf, until)) < 0)
			return n == -EPIPE ? -EIO : (int)n;
		if (!c->greeted) {
			if ((r = welcomed(c, buf, n)) < 0)
				return r;
		} else if (!strcmp(buf, "end")) {
			return 0;
		} else if (!strncmp(buf, "stat ", 5)) {
			fn(ctx, buf + 5);
		} else {
			return -EIO;
		}
	}
}

void rtid__svc_close(struct rtid__svc_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
