/* What an operator sees of the daemon: one log line per answered request
 * (unless --quiet), and the counters "rtid serve status" asks for over the
 * socket: uptime, the driver, attaches, requests by operation and outcome
 * (errors by reason too), latency percentiles with the sum and count of all
 * latencies, requests with a worker and waiting. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proc/proc.h"
#include "serve/serve-loop.h"

static const char *const kind_words[RTID__SVC_KINDS + 1] = {
	"tid", "state", "done", "cuerr", "error", "denied", "started", "unknown", "not-served",
};

/* An answer in the counters. "not-served" (a queries-only daemon asked for
 * an action) is an outcome of its own, not an error: alerts on errors must
 * not fire on a node that is set up as meant. An error is counted by its
 * reason too, the first ST_REASONS reasons apart and the rest as "other". */
static void count(struct sstats *st, int op, const struct rtid__svc_ans *a)
{
	unsigned k = 0;

	if (a->kind != RTID__SVC_ERROR) {
		st->n[op][a->kind]++;
		return;
	}
	if (!strcmp(a->name, "not-served")) {
		st->n[op][ST_NOT_SERVED]++;
		return;
	}
	st->n[op][RTID__SVC_ERROR]++;
	while (k < ST_REASONS && st->reason[k][0] && strcmp(st->reason[k], a->name))
		k++;
	if (k < ST_REASONS && !st->reason[k][0])
		snprintf(st->reason[k], sizeof(st->reason[k]), "%s", a->name[0] ? a->name : "-");
	st->err[op][k]++;
}

void st_answered(struct server *s, const struct client *c, const struct rtid__svc_ans *a)
{
	struct sstats *st = &s->stats;
	double ms = (rtid__now() - c->asked) * 1e3;
	int op = c->req.op; /* a parsed request's, and an answer the daemon built */

	count(st, op, a);
	st->lat[op][st->nlat[op]++ % ST_SAMPLES] = (float)ms;
	st->lat_sum[op] += ms / 1e3;
	st->lat_n[op]++;
	/* A denial has had its line, rate-limited (a flood of them is a
	 * client's doing); a second line here would be unlimited. */
	if (s->cfg->quiet || a->kind == RTID__SVC_DENIED)
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

/* The messages to one client; once one is not taken, none is sent. */
struct out {
	int fd;
	bool ok;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct out *o, const char *fmt, ...)
{
	char buf[RTID__SVC_MSG_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Never sent cut: a message that does not fit is left out. */
	if (o->ok && n < (int)sizeof(buf))
		o->ok = send(o->fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == n;
}

bool st_send(const struct server *s, int fd)
{
	const struct sstats *st = &s->stats;
	struct out o = { .fd = fd, .ok = true };
	char version[128] = "-";
	unsigned queued = 0;

	rtid__driver_version_read(s->cfg->proc_root, version, sizeof(version));
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		queued += s->c[i].fd >= 0 && s->c[i].queued && !s->c[i].inflight;
	say(&o, "stat uptime_seconds %.0f", rtid__now() - st->started);
	say(&o, "stat driver %s", version);
	say(&o, "stat attach_seconds %.3f", st->attach_s);
	say(&o, "stat attaches %lu", s->pool.attaches);
	say(&o, "stat worker_failures %lu", st->worker_failures);
	say(&o, "stat workers_max %u", s->pool.n);
	say(&o, "stat inflight %u", busy(s));
	say(&o, "stat queued %u", queued);
	for (int op = 0; op < RTID__OP_COUNT; op++) {
		unsigned n = st->nlat[op] < ST_SAMPLES ? st->nlat[op] : ST_SAMPLES;
		float v[ST_SAMPLES];

		for (int k = 0; k <= ST_NOT_SERVED; k++)
			if (st->n[op][k])
				say(&o, "stat requests %s %s %lu", rtid__svc_op_name(op), kind_words[k],
				    st->n[op][k]);
		for (int k = 0; k <= ST_REASONS; k++)
			if (st->err[op][k])
				say(&o, "stat errors %s %s %lu", rtid__svc_op_name(op),
				    k < ST_REASONS ? st->reason[k] : "other", st->err[op][k]);
		if (!n)
			continue;
		say(&o, "stat duration_seconds %s %.6f %lu", rtid__svc_op_name(op), st->lat_sum[op],
		    st->lat_n[op]);
		memcpy(v, st->lat[op], n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_float);
		say(&o, "stat latency_ms %s %.3f %.3f %.3f", rtid__svc_op_name(op), (double)v[n / 2],
		    (double)v[n * 9 / 10], (double)v[n * 99 / 100]);
	}
	say(&o, "end");
	return o.ok;
}
