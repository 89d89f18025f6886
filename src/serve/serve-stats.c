/* What an operator sees of the daemon: one log line per answered request
 * (unless --quiet), and the counters "rtid serve status" asks for over the
 * socket: the daemon's version and start, the driver, attaches and failed
 * ones, requests by operation and outcome (errors by reason too), a latency
 * histogram and percentiles, requests with a worker and waiting. Every
 * series that can be counted is said to exist from the start (the ops,
 * outcomes and reasons messages), so that a client can show it at 0: a
 * rate over a series that appears at its first event misses that event. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "config.h"
#include "proc/proc.h"
#include "serve/serve.h"

static const char *const kind_words[ST_OUTCOMES] = {
	"tid", "state", "done", "cuerr", "error", "denied", "started", "unknown",
	"not-served", "no-such-process", "not-a-process",
};

/* The reasons of the errors this daemon gives (sv_fail, sv_worker_down and
 * the translation of a worker's reply), known before any is seen. */
static const char *const known_reasons[] = {
	"worker-failed", "worker-crashed", "timeout", "shutting-down", "unsupported",
	"no-record", "busy", RTID__SVC_IN_DRIVER, "protocol-1", "process-changed",
	"not-a-thread", "bad-output",
};

/* The latency histogram's upper bounds in seconds: a driver call takes
 * milliseconds when attached, an attach seconds, a hung call up to the
 * deadline (10 s for a query, minutes for an action). */
static const double bounds[ST_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};

void st_init(struct sstats *st)
{
	struct timespec ts;

	st->started = rtid__now();
	clock_gettime(CLOCK_REALTIME, &ts);
	st->start_unix = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	for (size_t k = 0; k < sizeof(known_reasons) / sizeof(*known_reasons); k++)
		snprintf(st->reason[k], sizeof(st->reason[k]), "%s", known_reasons[k]);
}

/* A denial by the request rule that is no matter of permission: the number
 * names no process, or a thread where a process is asked for. Told by the
 * rule's own words (sa_check answers with them). */
static int denial(const struct rtid__svc_ans *a)
{
	if (!strcmp(a->text, rtid__request_why(RTID__REQ_NO_PROCESS)))
		return ST_NO_PROCESS;
	if (!strcmp(a->text, rtid__request_why(RTID__REQ_A_THREAD)))
		return ST_NOT_A_PROCESS;
	return RTID__SVC_DENIED;
}

/* An answer in the counters. "not-served" (a queries-only daemon asked for
 * an action) is an outcome of its own, not an error: alerts on errors must
 * not fire on a node that is set up as meant. An error is counted by its
 * reason too, the first ST_REASONS reasons apart and the rest as "other". */
static void count(struct sstats *st, int op, const struct rtid__svc_ans *a)
{
	unsigned k = 0;

	if (a->kind == RTID__SVC_DENIED) {
		st->n[op][denial(a)]++;
		return;
	}
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
	/* Cumulative, as the exposition format has them: each bound counts
	 * every request within it. */
	for (int k = ST_BUCKETS - 1; k >= 0 && ms / 1e3 <= bounds[k]; k--)
		st->bucket[op][k]++;
	/* A denial has had its line, rate-limited (a flood of them is a
	 * client's doing); a second line here would be unlimited. */
	if (s->cfg->quiet || a->kind == RTID__SVC_DENIED)
		return;
	/* A call the daemon could not answer, or whose outcome it cannot tell,
	 * at warning (journalctl -p warning); an answer, the driver's own
	 * error included, at info. */
#define ANSWERED "%s %d for uid %u pid %d%s%s: %s%s%s in %.1f ms"
	serve_log((a->kind == RTID__SVC_ERROR && strcmp(a->name, "not-served")) ||
		  a->kind == RTID__SVC_UNKNOWN ? SLOG_WARNING ANSWERED : ANSWERED,
		  rtid__svc_op_name(op), c->req.pid, (unsigned)c->uid, (int)c->peer,
		  c->other_ns ? " in " : "",
		  c->other_ns ? (c->ns[0] ? c->ns : "an unknown pid namespace") : "",
		  kind_words[a->kind], a->name[0] ? " " : "", a->name, ms);
#undef ANSWERED
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

/* A list after its name, as one message: "stat outcomes tid state ...".
 * Words that do not fit are left out (the list says which series exist
 * at 0: one left out appears at its first count). */
static void say_list(struct out *o, const char *name, const char *const *w, size_t n)
{
	char buf[RTID__SVC_MSG_MAX];
	size_t len = (size_t)snprintf(buf, sizeof(buf), "stat %s", name);

	for (size_t k = 0; k < n && w[k][0]; k++)
		if (len + 1 + strlen(w[k]) < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s", w[k]);
	say(o, "%s", buf);
}

/* Every operation's latency: sum and count of all, the histogram, and
 * percentiles of the latest ST_SAMPLES (none before its first request). */
static void say_latency(struct out *o, const struct sstats *st, int op)
{
	unsigned n = st->nlat[op] < ST_SAMPLES ? st->nlat[op] : ST_SAMPLES;
	char buf[RTID__SVC_MSG_MAX];
	size_t len;
	float v[ST_SAMPLES];

	say(o, "stat duration_seconds %s %.6f %lu", rtid__svc_op_name(op), st->lat_sum[op],
	    st->lat_n[op]);
	len = (size_t)snprintf(buf, sizeof(buf), "stat duration_buckets %s", rtid__svc_op_name(op));
	for (int k = 0; k < ST_BUCKETS && len < sizeof(buf); k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %lu", st->bucket[op][k]);
	if (len < sizeof(buf))
		say(o, "%s", buf);
	if (!n)
		return;
	memcpy(v, st->lat[op], n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_float);
	say(o, "stat latency_ms %s %.3f %.3f %.3f", rtid__svc_op_name(op), (double)v[n / 2],
	    (double)v[n * 9 / 10], (double)v[n * 99 / 100]);
}

bool st_send(const struct server *s, int fd)
{
	const struct sstats *st = &s->stats;
	struct out o = { .fd = fd, .ok = true };
	const char *w[ST_REASONS > ST_OUTCOMES ? ST_REASONS : ST_OUTCOMES];
	char version[128] = "-", le[RTID__SVC_MSG_MAX] = "stat duration_le";
	unsigned queued = 0, n = 0;

	rtid__driver_version_read(s->cfg->proc_root, version, sizeof(version));
	for (unsigned i = 0; i < s->cfg->max_clients; i++)
		queued += s->c[i].fd >= 0 && s->c[i].queued && !s->c[i].inflight;
	say(&o, "stat version %s", RTID_VERSION);
	say(&o, "stat start_time_seconds %.3f", st->start_unix);
	say(&o, "stat uptime_seconds %.0f", rtid__now() - st->started);
	say(&o, "stat driver %s", version);
	say(&o, "stat attach_seconds %.3f", st->attach_s);
	say(&o, "stat attaches %lu", s->pool.attaches);
	say(&o, "stat attach_failures %lu", s->pool.attach_failures);
	say(&o, "stat worker_failures %lu", st->worker_failures);
	say(&o, "stat workers_max %u", s->pool.n);
	say(&o, "stat inflight %u", busy(s));
	say(&o, "stat queued %u", queued);
	/* The series there are, each at 0 until counted. "started" is no
	 * outcome: an action's note before its answer. */
	for (int op = 0; op < RTID__OP_COUNT; op++)
		w[n++] = rtid__svc_op_name(op);
	say_list(&o, "ops", w, n);
	n = 0;
	for (int k = 0; k < ST_OUTCOMES; k++)
		if (k != RTID__SVC_STARTED)
			w[n++] = kind_words[k];
	say_list(&o, "outcomes", w, n);
	for (n = 0; n < ST_REASONS; n++)
		w[n] = st->reason[n];
	say_list(&o, "reasons", w, n);
	for (int k = 0; k < ST_BUCKETS; k++)
		snprintf(le + strlen(le), sizeof(le) - strlen(le), " %g", bounds[k]);
	say(&o, "%s", le);
	for (int op = 0; op < RTID__OP_COUNT; op++) {
		for (int k = 0; k < ST_OUTCOMES; k++)
			if (st->n[op][k])
				say(&o, "stat requests %s %s %lu", rtid__svc_op_name(op), kind_words[k],
				    st->n[op][k]);
		for (int k = 0; k <= ST_REASONS; k++)
			if (st->err[op][k])
				say(&o, "stat errors %s %s %lu", rtid__svc_op_name(op),
				    k < ST_REASONS ? st->reason[k] : "other", st->err[op][k]);
		say_latency(&o, st, op);
	}
	say(&o, "end");
	return o.ok;
}
