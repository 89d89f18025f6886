/* The driver-API backend: one worker process (rtid-cuda-worker) loads libcuda
 * and pays the driver attach once for the whole batch; the caller never loads
 * libcuda. Queries are pipelined over a SOCK_SEQPACKET socketpair and each
 * reply is awaited under the query timeout and the batch deadline. A worker
 * that hangs is killed; one that dies ends the batch's outstanding queries
 * with an error, never a tid. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "driver/driver.h"
#include "proto/worker-proto.h"
#include "rules/rules.h"


/* Kept in the context for the length of one rtid_resolve_many, so that a
 * batch split in groups (canary) still attaches once. */
struct rtid__worker {
	struct rtid__child child;
	int sock;
};

static double until_of(const struct rtid__driver *d, double deadline)
{
	double t = rtid__now() + d->timeout_s;

	return deadline > 0 && deadline < t ? deadline : t;
}

static int start_worker(struct rtid__driver *d, struct rtid__worker *w, char *why, size_t len)
{
	struct rtid__worker_cmd cmd;
	char path[PATH_MAX];
	int sv[2], r;

	r = rtid__worker_path(path, sizeof(path), why, len);
	if (r < 0)
		return r;
	if ((r = rtid__worker_pair(sv)) < 0)
		return r;
	rtid__worker_argv(&cmd, path, d->libcuda);
	/* The worker lives as long as the batch; its own deadline is not used. */
	r = rtid__child_start_fd(&w->child, path, cmd.argv, 1e9, sv[1]);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	w->sock = sv[0];
	return 0;
}

/* One message, without waiting. A worker that died with queries unread
 * resets the socket: the first recv says ECONNRESET (once), and the replies
 * it sent before are still there to read. */
static ssize_t recv_msg(int sock, void *buf, size_t len)
{
	ssize_t n = recv(sock, buf, len, MSG_DONTWAIT);

	if (n < 0 && errno == ECONNRESET)
		n = recv(sock, buf, len, MSG_DONTWAIT);
	return n;
}

/* Wait for one message. Returns its length, -ETIMEDOUT, or -EPIPE when the
 * worker closed the socket or died. */
static ssize_t wait_msg(struct rtid__worker *w, void *buf, size_t len, double until)
{
	for (;;) {
		struct pollfd p[4] = { { .fd = w->sock, .events = POLLIN } };
		int np = 1 + rtid__child_pollfds(&w->child, p + 1);
		double left = (until - rtid__now()) * 1000.0;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (w->child.pidfd < 0 && left > RTID__NOPIDFD_POLL_MS)
			left = RTID__NOPIDFD_POLL_MS;
		if (poll(p, (nfds_t)np, (int)left + 1) < 0 && errno != EINTR)
			return -errno;
		if (p[0].revents) {
			n = recv_msg(w->sock, buf, len);
			if (n > 0)
				return n;
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				return -EPIPE;
		}
		rtid__child_handle(&w->child, p + 1, np - 1);
		if (w->child.reaped) {
			/* Replies sent before it died are still in the socket. */
			n = recv_msg(w->sock, buf, len);
			return n > 0 ? n : -EPIPE;
		}
	}
}

static void stop_worker(struct rtid__driver *d)
{
	struct rtid__worker *w = d->worker;
	struct rtid__child *v[1];

	if (!w)
		return;
	close(w->sock);
	/* It exits on EOF: let it (and libcuda) end cleanly, briefly, before the kill. */
	v[0] = &w->child;
	rtid__children_wait(v, 1, rtid__now() + RTID__EXIT_GRACE_S, false);
	rtid__child_abort(&w->child, false);
	free(w);
	d->worker = NULL;
}


static const char *death(const struct rtid__worker *w, char *buf, size_t len)
{
	if (w->child.reaped && WIFSIGNALED(w->child.status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(w->child.status));
	else if (w->child.reaped)
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(w->child.status));
	else
		snprintf(buf, len, "closed its socket");
	return buf;
}

/* Every pid from i on that still needs the driver gets e. */
static void fail_rest(const bool *need, size_t i, size_t n, struct rtid__answer *out,
		      enum rtid_error e, const char *detail)
{
	for (; i < n; i++)
		if (need[i] && out[i].error == RTID_OK && out[i].tid == 0)
			rtid__answer_fail(&out[i], e, "%s", detail);
}

static void interpret(const struct rtid__reply *r, struct rtid__answer *res)
{
	res->code = r->cuerr;
	if (rtid__driver_said(r->cuerr) == RTID__SAID_TID && r->tid > 0)
		res->tid = r->tid;
	else if (rtid__driver_said(r->cuerr) == RTID__SAID_TID)
		rtid__answer_fail(res, RTID_ERR_BAD_OUTPUT, "driver returned tid %d", r->tid);
	else if (rtid__driver_said(r->cuerr) == RTID__SAID_NONE)
		res->tid = 0;
	else
		rtid__answer_fail(res, RTID_ERR_API_FAILED, "%s (CUresult %d)",
				  r->name[0] ? r->name : "CUDA error", r->cuerr);
}

static int hello(struct rtid__driver *d, struct rtid__worker *w, double deadline, char *why, size_t len)
{
	struct rtid__hello h;
	char dd[64];
	ssize_t n = wait_msg(w, &h, sizeof(h), until_of(d, deadline));

	if (rtid__worker_greeting(&h, n, why, len) == 0)
		return 0;
	if (n == (ssize_t)sizeof(h))
		; /* why says what the worker said */
	else if (n == -ETIMEDOUT)
		snprintf(why, len, "driver API worker did not start in time");
	else
		snprintf(why, len, "driver API worker %s before it was ready", death(w, dd, sizeof(dd)));
	return n == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
}

/* Send queries for need[] from *next on while the socket takes them. */
static void send_some(struct rtid__worker *w, const int *pids, const bool *need, size_t n, size_t *next)
{
	for (; *next < n; (*next)++) {
		struct rtid__query q = { .pid = pids[*next] };

		if (!need[*next])
			continue;
		if (send(w->sock, &q, sizeof(q), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(q))
			return;
	}
}

static void await_replies(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
			  struct rtid__answer *out, double deadline)
{
	struct rtid__worker *w = d->worker;
	size_t sent = 0;
	char dd[64], msg[160];

	for (size_t i = 0; i < n; i++) {
		struct rtid__reply r;
		double t0 = rtid__now();
		ssize_t got;

		send_some(w, pids, need, n, &sent);
		if (!need[i])
			continue;
		got = wait_msg(w, &r, sizeof(r), until_of(d, deadline));
		out[i].ms += (rtid__now() - t0) * 1000.0;
		if (got == (ssize_t)sizeof(r) && r.pid == pids[i]) {
			interpret(&r, &out[i]);
			continue;
		}
		if (got == -ETIMEDOUT) {
			bool dl = deadline > 0 && rtid__now() >= deadline;

			fail_rest(need, i, i + 1, out, dl ? RTID_ERR_DEADLINE : RTID_ERR_TIMEOUT,
				  "the driver API did not answer in time");
			fail_rest(need, i + 1, n, out, dl ? RTID_ERR_DEADLINE : RTID_ERR_WORKER_FAILED,
				  "driver API worker stopped after a query timed out");
			stop_worker(d);
			return;
		}
		snprintf(msg, sizeof(msg), "driver API worker %s", death(w, dd, sizeof(dd)));
		fail_rest(need, i, n, out, RTID_ERR_WORKER_CRASHED, msg);
		stop_worker(d);
		return;
	}
}

/* The context's worker, started and greeted if there is none yet. */
static int get_worker(struct rtid__driver *d, double deadline, char *why, size_t len)
{
	struct rtid__worker *w;
	int r;

	if (d->worker)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	r = start_worker(d, w, why, len);
	if (r < 0) {
		if (!*why)
			snprintf(why, len, "cannot start the driver API worker: %s", strerror(-r));
		free(w);
		return r;
	}
	d->worker = w;
	r = hello(d, w, deadline, why, len);
	if (r < 0)
		stop_worker(d);
	return r;
}

static void api_batch(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
		      struct rtid__answer *out, double deadline)
{
	char why[200] = "";
	bool any = false;
	int r;

	for (size_t i = 0; i < n; i++)
		any |= need[i];
	if (!any)
		return;
	r = get_worker(d, deadline, why, sizeof(why));
	if (r < 0)
		fail_rest(need, 0, n, out,
			  r == -ETIMEDOUT && deadline > 0 && rtid__now() >= deadline
				  ? RTID_ERR_DEADLINE : RTID_ERR_WORKER_FAILED, why);
	else
		await_replies(d, pids, need, n, out, deadline);
}

const struct rtid__backend rtid__api_backend = { .batch = api_batch, .end = stop_worker };
