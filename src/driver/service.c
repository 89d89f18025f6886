/* The service backend: the driver's answers from rtid serve, over one
 * connection for the whole batch. The daemon holds the attach, so a batch
 * pays none; an unreachable or failing daemon is a clear error per pid,
 * never a tid. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "basic/basic.h"
#include "driver/driver.h"
#include "proto/service-client.h"
#include "rules/rules.h"

static void interpret(const struct rtid__svc_ans *a, struct rtid__answer *r)
{
	if (a->kind == RTID__SVC_TID) {
		r->tid = a->value;
	} else if (a->kind == RTID__SVC_CUERR) {
		r->code = a->value;
		if (rtid__driver_said(a->value) != RTID__SAID_NONE)
			rtid__answer_fail(r, RTID_ERR_API_FAILED, "%s (CUresult %d)",
					  strcmp(a->name, "-") ? a->name : "CUDA error", a->value);
	} else if (a->kind == RTID__SVC_ERROR) {
		enum rtid_error e = !strcmp(a->name, "timeout") ? RTID_ERR_TIMEOUT
				    : !strcmp(a->name, "worker-crashed") ? RTID_ERR_WORKER_CRASHED
				    : RTID_ERR_WORKER_FAILED;

		rtid__answer_fail(r, e, "rtid serve: %s: %s", a->name, a->text);
	} else {
		rtid__answer_fail(r, RTID_ERR_WORKER_FAILED, "rtid serve denied the query: %s",
				  a->text);
	}
}

static void fail_from(const bool *need, size_t i, size_t n, struct rtid__answer *out,
		      enum rtid_error e, const char *msg)
{
	for (; i < n; i++)
		if (need[i])
			rtid__answer_fail(&out[i], e, "%s", msg);
}

/* RTID_ERR_DEADLINE once the batch's deadline has passed, else e. */
static enum rtid_error late(double deadline, enum rtid_error e)
{
	return deadline > 0 && rtid__now() >= deadline ? RTID_ERR_DEADLINE : e;
}

static void service_batch(struct rtid__driver *d, const int *pids, const bool *need, size_t n,
			 struct rtid__answer *out, double deadline)
{
	const char *path = rtid__svc_path(d->service_socket);
	struct rtid__svc_conn c = { .fd = -1 };
	char msg[160];
	int r = -ENOENT;
	size_t i = 0;

	while (i < n && !need[i])
		i++;
	if (i < n && (r = rtid__svc_open(path, &c)) < 0) {
		snprintf(msg, sizeof(msg), "cannot reach rtid serve at %s: %s", path, strerror(-r));
		fail_from(need, i, n, out, RTID_ERR_WORKER_FAILED, msg);
		return;
	}
	/* Believed as the shim believes it, or not asked at all. */
	if (i < n) {
		char why[120];
		const char *w = rtid__svc_untrusted(&c, why, sizeof(why));

		if (w) {
			snprintf(msg, sizeof(msg), "rtid serve at %s: not trusted: %s", path, w);
			fail_from(need, i, n, out, RTID_ERR_WORKER_FAILED, msg);
			rtid__svc_close(&c);
			return;
		}
	}
	for (; i < n; i++) {
		struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = pids[i] };
		double t0 = rtid__now(), until = t0 + d->timeout_s;
		struct rtid__svc_ans a;

		if (!need[i])
			continue;
		if (deadline > 0 && deadline < until)
			until = deadline;
		r = rtid__svc_call(&c, &q, until, &a);
		out[i].ms += (rtid__now() - t0) * 1000.0;
		if (r == 0) {
			interpret(&a, &out[i]);
			continue;
		}
		/* The connection is out of step now: this pid and the rest fail. */
		snprintf(msg, sizeof(msg), "rtid serve at %s: %s", path,
			 r == -ETIMEDOUT ? "no answer in time" : "connection failed");
		fail_from(need, i, i + 1, out, r == -ETIMEDOUT ? late(deadline, RTID_ERR_TIMEOUT)
							       : RTID_ERR_WORKER_FAILED, msg);
		fail_from(need, i + 1, n, out, late(deadline, RTID_ERR_WORKER_FAILED), msg);
		break;
	}
	rtid__svc_close(&c);
}

const struct rtid__backend rtid__service_backend = { .batch = service_batch, .end = NULL };
