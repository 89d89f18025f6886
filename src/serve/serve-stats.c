/* What an operator sees of the daemon: one log line per answered request
 * (unless --quiet), and the counters "rtid serve status" asks for over the
 * socket: uptime, the driver, attaches, requests by operation and outcome,
 * latency percentiles, requests with a worker and waiting. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proc/proc.h"
#include "serve/serve-loop.h"

static const char *const kind_words[RTID__SVC_KINDS] = {
	"tid", "state", "done", "cuerr", "error", "denied", "started", "unknown",
};

void st_answered(struct server *s, const struct client *c, const struct rtid__svc_ans *a)
{
	struct sstats *st = &s->stats;
	double ms = (rtid__now() - c->asked) * 1e3;
	int op = c->req.op;

	if (op < 0 || op >= RTID__OP_COUNT || a->kind >= RTID__SVC_KINDS)
		return;
	st->n[op][a->kind]++;
	st->lat[op][st->nlat[op]++ % ST_SAMPLES] = (float)ms;
	if (s->cfg->quiet)
		return;
	serve_log("%s %d for uid %u pid %d%s%s: %s%s%s in %.1f ms", rtid__svc_op_name(op),
		  c->req.pid, (unsigned)c->uid, (int)c->peer, c->other_ns ? " in " : "",
		  c->other_ns ? (c->ns[0] ? c->ns : "an unknown pid namespace") : "",
		  kind_words[a->kind], a->name[0] ? " " : "", a->name, ms);
}

static int cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;

	return a < b ? -1 : a > b;
}

/* Workers with a request (counted here: the dispatch answers through the
 * clients, which count through us). */
static unsigned busy(const struct server *s)
{
	unsigned n = 0;

	for (unsigned k = 0; k < s->pool.n; k++)
		n += s->pool.w[k].busy;
	return n;
}

/* One "stat ..." message; false when the client cannot take it. */
static bool say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool say(int fd, const char *fmt, ...)
{
	char buf[RTID__SVC_MSG_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n <= 0 || n >= (int)sizeof(buf))
		return true; /* never sent cut */
	return send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == n;
}

bool st_send(const struct server *s, int fd)
{
	const struct sstats *st = &s->stats;
	char version[128] = "-";
	unsigned queued = 0;
	bool ok = true;

	rtid__driver_version_read(s->cfg->proc_root, version, sizeof(version));
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		queued += s->c[i].fd >= 0 && s->c[i].queued && !s->c[i].inflight;
	ok = ok && say(fd, "stat uptime_seconds %.0f", rtid__now() - st->started);
	ok = ok && say(fd, "stat driver %s", version);
	ok = ok && say(fd, "stat attach_seconds %.3f", st->attach_s);
	ok = ok && say(fd, "stat attaches %lu", s->pool.attaches);
	ok = ok && say(fd, "stat worker_failures %lu", st->worker_failures);
	ok = ok && say(fd, "stat workers_max %u", s->pool.n);
	ok = ok && say(fd, "stat inflight %u", busy(s));
	ok = ok && say(fd, "stat queued %u", queued);
	for (int op = 0; op < RTID__OP_COUNT && ok; op++) {
		unsigned n = st->nlat[op] < ST_SAMPLES ? st->nlat[op] : ST_SAMPLES;
		float v[ST_SAMPLES];

		for (int k = 0; k < RTID__SVC_KINDS && ok; k++)
			if (st->n[op][k])
				ok = say(fd, "stat requests %s %s %lu", rtid__svc_op_name(op),
					 kind_words[k], st->n[op][k]);
		if (!n || !ok)
			continue;
		memcpy(v, st->lat[op], n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_float);
		ok = say(fd, "stat latency_ms %s %.3f %.3f %.3f", rtid__svc_op_name(op),
			 (double)v[n / 2], (double)v[n * 9 / 10], (double)v[n * 99 / 100]);
	}
	return ok && say(fd, "end");
}
