/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Asking rtid serve, through the client of proto/, which keeps every action
 * exactly once (an action the daemon said it started is never run again):
 * queries on one connection kept for the CRIU run, each action on its own
 * (so K actions side by side are K connections). Safe on any thread: it
 * only talks to the daemon. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "conf/conf.h"
#include "config.h"
#include "plugin/plugin.h"
#include "proto/service-client.h"
#include "rules/rules.h"

/* A query (RTID_SERVICE_TIMEOUT): the daemon's own deadline for one (10 s)
 * and some. Longer than the shim's 2 s: the shim hands a late answer to the
 * real tool, the plugin fails the call, as the query may be in the driver. */
#define WAIT_DEFAULT 30.0
#define ACTION_WAIT_DEFAULT 660.0 /* an action to start (RTID_SERVICE_ACTION_TIMEOUT) */

/* Seconds from the environment: a decimal > 0, else def. */
/* The settings of the daemon's clients that the plugin reads, and its own. */
static const char *const names[] = {
	"RTID_SOCKET", "RTID_SERVE_UID", "RTID_SERVICE_TIMEOUT", "RTID_SERVICE_ACTION_TIMEOUT",
	"RTID_PLUGIN_NO_CUDA_ON_ERROR", NULL,
};

/* The plugin's own file: PREFIX/LIBDIR/rtid/criu/cuda_plugin.so, PREFIX
 * RTID_PLUGIN_UP components above it (/proc/self/exe is CRIU here). */
static const char *own_file(void)
{
	Dl_info info;

	/* dli_fname: the path CRIU loaded the plugin by. */
	if (!dladdr((void *)own_file, &info))
		return NULL;
	return info.dli_fname;
}

void plug_serve_settings(void (*note)(void *ctx, const char *what))
{
	char buf[4096];

	/* As the shim reads it (conf/): the same lookup, refusals and syntax;
	 * each line that is no setting said in CRIU's log. */
	rtid__conf_load(rtid__conf_path(own_file(), RTID_PLUGIN_UP, buf, sizeof(buf)), names, note,
			NULL);
}

bool plug_serve_present(void)
{
	struct stat st;

	return stat(rtid__svc_path(NULL), &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The daemon's refusals that leave the call to the tool: nothing was started
 * for it, and the refusal is about the daemon (it serves no actions, the
 * driver lacks the call, every action worker is busy, none could attach, its
 * record of work in flight cannot be written), not about a call for the
 * process. Any other error (in-driver: a call about the process is still in
 * the driver; a query's timeout or crash: its own call may be) fails the
 * plugin's call: a tool run beside a call in the driver is what must never
 * happen, and the plugin, unlike the shim, can fail the dump loudly. */
static bool tool_may_run(const char *reason)
{
	static const char *const ok[] = { "not-served", "unsupported", "protocol-1", "busy",
					  "worker-failed", "no-record", "no-device-map",
					  "protocol-2" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(reason, ok[i]))
			return true;
	return false;
}

static enum plug_ans failed(char *msg, size_t len, const struct rtid__svc_ans *a, int r)
{
	if (r < 0)
		snprintf(msg, len, "rtid serve started it and the answer was lost: %s; its "
			 "outcome is unknown, so it is not run again", strerror(-r));
	else if (a->kind == RTID__SVC_CUERR)
		snprintf(msg, len, "%s (%s)", strcmp(a->text, "-") ? a->text : "driver error",
			 a->name);
	else
		snprintf(msg, len, "rtid serve started it and could not tell its outcome (%s); "
			 "it is not run again", a->name);
	return ANS_FAILED;
}

/* The connection CRIU's run keeps for its queries: opened and its peer
 * proven once, then one round trip per question (a connection per question
 * cost a connect, a greeting and the daemon's proof of the peer each time).
 * Whoever takes the lock uses it; a thread that finds it taken opens its
 * own, as actions always do (an action cancelled at its deadline closes its
 * connection, which is how the daemon learns not to start it). */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rtid__svc_conn kept = { .fd = -1 };

/* This restore's device map (n 0: none), set once at init. */
static struct rtid__devmap map;

void plug_serve_map(const struct rtid__devmap *m)
{
	map = *m;
}

size_t plug_serve_map_text(char *buf, size_t len)
{
	return rtid__devmap_format(&map, buf, len);
}

/* An open, trusted connection into *c: 0, or ANS_TO_TOOL with msg. One
 * greeted for maps (protocol 3) where version says so. */
static int connect_version(const char *path, struct rtid__svc_conn *c, char *msg, size_t len,
			   int version)
{
	char whybuf[160];
	const char *why;
	int r;

	if ((r = rtid__svc_open_version(path, c, version)) < 0) {
		snprintf(msg, len, "rtid serve at %s: cannot connect: %s", path, strerror(-r));
		return -1;
	}
	if ((why = rtid__svc_untrusted(c, whybuf, sizeof(whybuf)))) {
		snprintf(msg, len, "rtid serve at %s: not trusted: %s", path, why);
		rtid__svc_close(c);
		c->fd = -1;
		return -1;
	}
	return 0;
}

static int connect_to(const char *path, struct rtid__svc_conn *c, char *msg, size_t len)
{
	return connect_version(path, c, msg, len, RTID__SVC_VERSION_PLAIN);
}

/* q on the kept connection, under kept_lock: a connection the daemon closed
 * since (idle, or restarted) is opened again once; a query changes nothing,
 * and the daemon holds it back behind any call still in the driver. */
static int ask_kept(const char *path, const struct rtid__svc_req *q, double wait,
		    struct rtid__svc_ans *a, struct rtid__svc_conn *c, char *msg, size_t len)
{
	bool fresh = kept.fd < 0;
	int r;

	if (fresh && connect_to(path, &kept, msg, len) < 0)
		return 1;
	r = rtid__svc_call(&kept, q, rtid__now() + wait, a);
	if (r < 0 && !fresh && !kept.started) {
		rtid__svc_close(&kept);
		kept.fd = -1;
		if (connect_to(path, &kept, msg, len) < 0)
			return 1;
		r = rtid__svc_call(&kept, q, rtid__now() + wait, a);
	}
	*c = kept;
	if (r < 0) { /* a query unanswered: this connection is done */
		rtid__svc_close(&kept);
		kept.fd = -1;
	}
	return r;
}

void plug_serve_open(void)
{
	char msg[200];

	pthread_mutex_lock(&kept_lock);
	if (kept.fd < 0 && connect_to(rtid__svc_path(NULL), &kept, msg, sizeof(msg)) == 0 &&
	    rtid__svc_greeted(&kept, rtid__now() + rtid__env_seconds("RTID_SERVICE_TIMEOUT",
									 WAIT_DEFAULT)) < 0) {
		rtid__svc_close(&kept); /* the first question tries again, and says why */
		kept.fd = -1;
	}
	pthread_mutex_unlock(&kept_lock);
}

void plug_serve_close(void)
{
	pthread_mutex_lock(&kept_lock);
	if (kept.fd >= 0)
		rtid__svc_close(&kept);
	kept.fd = -1;
	pthread_mutex_unlock(&kept_lock);
}

/* What answer a (or failure r) to op for pid means for the plugin. */
static enum plug_ans judge(const char *path, int op, int pid, bool started, int r,
			   const struct rtid__svc_ans *a, int *value, char *msg, size_t len)
{
	bool action = op >= RTID__OP_LOCK;

	if (started && (r < 0 || a->kind == RTID__SVC_UNKNOWN || a->kind == RTID__SVC_ERROR ||
			  a->kind == RTID__SVC_DENIED))
		return failed(msg, len, a, r);
	if (r < 0) {
		/* Asked and not answered: the daemon may have the call in the
		 * driver (an action it did not start is not; a call about the
		 * process before it may be), so not the tool's turn. */
		snprintf(msg, len, "rtid serve at %s: no answer: %s; it may still be inside the "
			 "driver, so cuda-checkpoint is not run beside it", path, strerror(-r));
		return ANS_FAILED;
	}
	switch (a->kind) {
	case RTID__SVC_TID:
	case RTID__SVC_STATE:
		*value = a->value;
		return ANS_VALUE;
	case RTID__SVC_DONE:
		*value = 0;
		return ANS_VALUE;
	case RTID__SVC_CUERR:
		if (action)
			return failed(msg, len, a, 0);
		/* A query the driver failed, other than its "none": the daemon's
		 * own attach may be what failed; the tool asks with its own. */
		if (op == RTID__OP_RESTORE_TID && rtid__driver_said(a->value) == RTID__SAID_NONE)
			return ANS_NONE;
		snprintf(msg, len, "rtid serve at %s: %s --pid %d: driver error %s", path,
			 rtid__svc_op_name(op), pid, a->name);
		return ANS_TO_TOOL;
	default: { /* error, denied: nothing was started */
		/* But e.g. in-driver: cuda-checkpoint would run beside that call. */
		bool tool = a->kind == RTID__SVC_DENIED || tool_may_run(a->name);

		snprintf(msg, len, "rtid serve at %s: %s --pid %d: %s%s: %s", path,
			 rtid__svc_op_name(op), pid, a->kind == RTID__SVC_DENIED ? "denied" : a->name,
			 tool ? "" : " (cuda-checkpoint is not run beside it)", a->text);
		return tool ? ANS_TO_TOOL : ANS_FAILED;
	}
	}
}

enum plug_ans plug_serve_ask(int op, int pid, unsigned timeout_ms, int *value, char *msg,
			     size_t len)
{
	struct rtid__svc_req q = { .op = op, .pid = pid, .timeout_ms = timeout_ms,
				   .map = op == RTID__OP_RESTORE ? map : (struct rtid__devmap){ 0 } };
	const char *path = rtid__svc_path(NULL);
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	bool action = op >= RTID__OP_LOCK;
	double wait = action ? rtid__env_seconds("RTID_SERVICE_ACTION_TIMEOUT",
						 ACTION_WAIT_DEFAULT) + timeout_ms / 1000.0
			     : rtid__env_seconds("RTID_SERVICE_TIMEOUT", WAIT_DEFAULT);
	int r;

	msg[0] = '\0';
	if (!action && pthread_mutex_trylock(&kept_lock) == 0) {
		r = ask_kept(path, &q, wait, &a, &c, msg, len);
		pthread_mutex_unlock(&kept_lock);
		if (r > 0)
			return ANS_TO_TOOL;
	} else {
		if (connect_version(path, &c, msg, len, q.map.n ? RTID__SVC_VERSION_MAP
								: RTID__SVC_VERSION_PLAIN) < 0)
			return ANS_TO_TOOL;
		r = rtid__svc_call(&c, &q, rtid__now() + wait, &a);
		rtid__svc_close(&c);
	}
	/* Refused at the greeting (as ever, or for the map), or closed before it
	 * greeted: an old daemon's refusal may come as a closed connection. */
	if (r < 0 && q.map.n && (r == -EPROTO || !c.greeted)) {
		snprintf(msg, len, "rtid serve at %s refused protocol %d: a daemon without device "
			 "maps, or too busy; the restore is not run without its map, nor beside it",
			 path, RTID__SVC_VERSION_MAP);
		return ANS_FAILED;
	}
	return judge(path, op, pid, c.started, r, &a, value, msg, len);
}

/* One chunk on the kept connection (under kept_lock): 0 with a[], -EIO when
 * the daemon does not take batches, or the call's failure. */
static int batch_kept(const char *path, int op, const int *pids, size_t n, double wait,
		      struct rtid__svc_ans *a)
{
	char msg[200];
	bool fresh = kept.fd < 0;
	int r;

	if (fresh && connect_to(path, &kept, msg, sizeof(msg)) < 0)
		return -ENOTCONN;
	r = rtid__svc_batch(&kept, op, pids, n, rtid__now() + wait, a);
	if (r == -EIO && !fresh) { /* closed since (idle, restarted): once more */
		rtid__svc_close(&kept);
		if (connect_to(path, &kept, msg, sizeof(msg)) < 0)
			return -ENOTCONN;
		r = rtid__svc_batch(&kept, op, pids, n, rtid__now() + wait, a);
	}
	if (r < 0) {
		rtid__svc_close(&kept);
		kept.fd = -1;
	}
	return r;
}

void plug_serve_batch(int op, const int *pids, size_t n, enum plug_ans *ans, int *values,
		      char (*msgs)[160])
{
	const char *path = rtid__svc_path(NULL);
	double wait = rtid__env_seconds("RTID_SERVICE_TIMEOUT", WAIT_DEFAULT);
	struct rtid__svc_ans a[RTID__SVC_BATCH_MAX];

	for (size_t at = 0; at < n;) {
		char buf[RTID__SVC_MSG_MAX];
		size_t k = n - at < RTID__SVC_BATCH_MAX ? n - at : RTID__SVC_BATCH_MAX;
		int r;

		while (k > 1 && !rtid__svc_batch_format(op, pids + at, k, buf))
			k--; /* long numbers: fewer per message */
		pthread_mutex_lock(&kept_lock);
		r = batch_kept(path, op, pids + at, k, wait, a);
		pthread_mutex_unlock(&kept_lock);
		for (size_t j = 0; j < k; j++) {
			msgs[at + j][0] = '\0';
			/* No batch (absent, not known, closed): each asked alone, under
			 * every rule of a single request. */
			if (r == -ENOTCONN || r == -EIO || r == -EINVAL ||
			    (r == 0 && a[j].kind == RTID__SVC_ERROR &&
			     !strcmp(a[j].name, RTID__SVC_NOT_BATCHED)))
				ans[at + j] = ANS_ALONE;
			else
				ans[at + j] = judge(path, op, pids[at + j], false, r, &a[j],
						    &values[at + j], msgs[at + j], sizeof(msgs[0]));
		}
		at += k;
	}
}
