/* The rtid serve protocol: every message formats and parses back to itself,
 * and anything not exactly in the grammar (doc/serve.md) is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/serve-proto.h"
#include "proto/service-client.h"

static int req(const char *s, struct rtid__svc_req *q)
{
	return rtid__svc_req_parse(s, strlen(s), q);
}

static int ans(const char *s, struct rtid__svc_ans *a)
{
	return rtid__svc_ans_parse(s, strlen(s), a);
}

static void test_requests(void **state)
{
	struct rtid__svc_req q, back;
	char buf[RTID__SVC_MSG_MAX];

	(void)state;
	for (int op = 0; op < RTID__OP_COUNT; op++) {
		q = (struct rtid__svc_req){ .op = op, .pid = 4242,
					    .timeout_ms = op == RTID__OP_LOCK ? 10000 : 0 };
		size_t n = rtid__svc_req_format(&q, buf);

		assert_int_equal(rtid__svc_req_parse(buf, n, &back), 0);
		assert_memory_equal(&q, &back, sizeof(q));
	}
	assert_int_equal(req("lock 1 0", &q), 0);
	assert_int_equal(q.timeout_ms, 0);
	const char *bad[] = {
		"", "get-restore-tid", "get-restore-tid 0", "get-restore-tid -1", "get-restore-tid 01",
		"get-restore-tid  1", " get-restore-tid 1", "get-restore-tid 1 ", "get-restore-tid 1 2",
		"lock 1", "lock 1 x", "unlock 1 5", "toggle 1", "get-restore-tid 99999999999",
		"get-restore-tid 1\n", "get-state 1\x7f", "GET-STATE 1", "lock 1 2147483648",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(req(bad[i], &q), -EINVAL);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(rtid__svc_req_parse(buf, sizeof(buf), &q), -EINVAL);
}

/* One map from a wire operation to the request rule's kind, for the daemon
 * and the shim alike: get-state alone takes a thread, the four actions need
 * the right to act. */
static void test_op_kinds(void **state)
{
	(void)state;
	assert_int_equal(rtid__svc_op_kind(RTID__OP_RESTORE_TID), RTID__REQ_QUERY);
	assert_int_equal(rtid__svc_op_kind(RTID__OP_GET_STATE), RTID__REQ_STATE);
	for (int op = RTID__OP_LOCK; op < RTID__OP_COUNT; op++)
		assert_int_equal(rtid__svc_op_kind(op), RTID__REQ_ACTION);
}

static void test_answers(void **state)
{
	const struct rtid__svc_ans cases[] = {
		{ RTID__SVC_TID, RTID__OP_RESTORE_TID, 7, 9, "", "" },
		{ RTID__SVC_STATE, RTID__OP_GET_STATE, 7, 2, "", "" },
		{ RTID__SVC_DONE, RTID__OP_UNLOCK, 7, 0, "", "" },
		{ RTID__SVC_CUERR, RTID__OP_LOCK, 7, 401, "CUDA_ERROR_ILLEGAL_STATE",
		  "the operation cannot be performed in the present state" },
		{ RTID__SVC_ERROR, RTID__OP_CHECKPOINT, 7, 0, "timeout", "no driver answer in time" },
		{ RTID__SVC_DENIED, RTID__OP_RESTORE, 7, 0, "", "actions are for root" },
		{ RTID__SVC_STARTED, RTID__OP_CHECKPOINT, 7, 600000, "", "" },
		{ RTID__SVC_UNKNOWN, RTID__OP_LOCK, 7, 0, "worker-crashed", "the worker died" },
	};
	char buf[RTID__SVC_MSG_MAX];
	struct rtid__svc_ans a;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = rtid__svc_ans_format(&cases[i], buf);

		assert_int_equal(rtid__svc_ans_parse(buf, n, &a), 0);
		assert_int_equal(a.kind, cases[i].kind);
		assert_int_equal(a.op, cases[i].op);
		assert_int_equal(a.pid, 7);
		assert_int_equal(a.value, cases[i].value);
		if (cases[i].text[0])
			assert_string_equal(a.text, cases[i].text);
	}
	/* Unknown names and empty text travel as "-"; foreign bytes as '?'. */
	a = (struct rtid__svc_ans){ RTID__SVC_CUERR, RTID__OP_LOCK, 7, 5, "", "caf\xc3\xa9\n" };
	rtid__svc_ans_format(&a, buf);
	assert_string_equal(buf, "cuerr lock 7 5 - caf???");
	/* A name with a space cannot split the answer. */
	a = (struct rtid__svc_ans){ RTID__SVC_ERROR, RTID__OP_LOCK, 7, 0, "two words", "" };
	rtid__svc_ans_format(&a, buf);
	assert_string_equal(buf, "error lock 7 two?words -");
	assert_int_equal(rtid__svc_ans_parse(buf, strlen(buf), &a), 0);
	assert_string_equal(a.name, "two?words");
	/* A name or text longer than its field is refused, not cut. */
	{
		char longer[RTID__SVC_MSG_MAX];

		snprintf(longer, sizeof(longer), "error lock 7 %0*d x", 40, 0);
		assert_int_equal(ans(longer, &a), -EINVAL);
		snprintf(longer, sizeof(longer), "denied lock 7 %0*d", RTID__SVC_TEXT_MAX, 0);
		assert_int_equal(ans(longer, &a), -EINVAL);
		snprintf(longer, sizeof(longer), "denied lock 7 %0*d", RTID__SVC_TEXT_MAX - 1, 0);
		assert_int_equal(ans(longer, &a), 0);
	}
	/* A state the protocol has no name for is not sent as a state. */
	a = (struct rtid__svc_ans){ RTID__SVC_STATE, RTID__OP_GET_STATE, 7, 9, "", "" };
	rtid__svc_ans_format(&a, buf);
	assert_int_equal(rtid__svc_ans_parse(buf, strlen(buf), &a), -EINVAL);
	const char *bad[] = {
		"tid get-restore-tid 7", "tid get-restore-tid 7 0", "tid get-restore-tid 7 9 9",
		"state get-state 7 sleeping", "done unlock 7 x", "cuerr lock 7 0 N T",
		"cuerr lock 7 5 N", "error lock 7 timeout", "denied lock 7", "hello lock 7 9",
		"tid nothing 7 9", "tid get-restore-tid x 9", "tid", "tid get-restore-tid",
		"tid get-restore-tid 7 2147483648", "tid get-restore-tid 7 -1", "state get-state 7",
		"done unlock 0", "error lock 7 timeout ", "cuerr lock 7 401 N", "tid  get-state 7 1",
		"denied", "done\x01 unlock 7", "started lock 7", "started lock 7 -1",
		"started lock 7 1 2", "unknown lock 7 timeout",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ans(bad[i], &a), -EINVAL);
}

static void test_greetings(void **state)
{
	char buf[RTID__SVC_MSG_MAX];
	bool actions = false;
	int v = 0;
	size_t n = rtid__svc_hello_format(buf, RTID__SVC_VERSION);

	(void)state;
	assert_int_equal(rtid__svc_hello_parse(buf, n, &v), 0);
	assert_int_equal(v, RTID__SVC_VERSION);
	assert_int_equal(rtid__svc_hello_parse("hello 0", 7, &v), -EINVAL);
	assert_int_equal(rtid__svc_hello_parse("hello", 5, &v), -EINVAL);
	assert_int_equal(rtid__svc_hello_parse("hi 1", 4, &v), -EINVAL);
	assert_int_equal(rtid__svc_hello_parse("hello 1 2", 9, &v), -EINVAL);
	assert_int_equal(rtid__svc_hello_parse("hello x", 7, &v), -EINVAL);
	assert_int_equal(rtid__svc_hello_parse("hello  1", 8, &v), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("hello x actions", 15, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("howdy 1 actions", 15, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("hello 1 actions x", 17, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("", 0, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("hello 1 actions", 15, 1, &actions), 0);
	assert_true(actions);
	assert_int_equal(rtid__svc_welcome_parse("hello 1 queries", 15, 1, &actions), 0);
	assert_false(actions);
	assert_int_equal(rtid__svc_welcome_parse("refused 1 busy", 14, 1, &actions), -EPROTO);
	assert_int_equal(rtid__svc_welcome_parse("hello 2 actions", 15, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("hello 1 all", 11, 1, &actions), -EINVAL);
	assert_int_equal(rtid__svc_welcome_parse("hello 1", 7, 1, &actions), -EINVAL);
	assert_null(rtid__svc_op_name(RTID__OP_COUNT));
	assert_null(rtid__svc_state_name(4));
}

static void test_paths(void **state)
{
	struct rtid__svc_conn c;
	char longp[200];

	(void)state;
	unsetenv("RTID_SOCKET");
	assert_string_equal(rtid__svc_path(NULL), RTID__SVC_SOCKET_DEFAULT);
	setenv("RTID_SOCKET", "/x/y", 1);
	assert_string_equal(rtid__svc_path(NULL), "/x/y");
	assert_string_equal(rtid__svc_path("/a"), "/a");
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(rtid__svc_open(longp, &c), -ENAMETOOLONG);
	assert_int_equal(rtid__svc_open("/nonexistent/rtid.sock", &c), -ENOENT);
}

/* The client against a daemon that misbehaves (the other end of a
 * socketpair, written by the test): every departure is an error, never an
 * answer. */
static int call_against(const char *const *said, size_t n, double wait)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 7 };
	struct rtid__svc_conn c = { .fd = -1, .version = RTID__SVC_VERSION_PLAIN };
	struct rtid__svc_ans a;
	int sv[2], r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	c.fd = sv[0];
	for (size_t i = 0; i < n; i++)
		assert_true(send(sv[1], said[i], strlen(said[i]), 0) >= 0);
	if (n && !said[n - 1][0])
		close(sv[1]); /* "" last: the daemon hangs up */
	r = rtid__svc_call(&c, &q, rtid__now() + wait, &a);
	rtid__svc_close(&c);
	rtid__svc_close(&c); /* twice is harmless */
	if (!n || said[n - 1][0])
		close(sv[1]);
	return r;
}

static void test_client_against_bad_daemons(void **state)
{
	char big[400];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "tid get-restore-tid 7 9" }, 2, 5), 0);
	assert_int_equal(call_against((const char *[]){ "refused 1 version" }, 1, 5), -EPROTO);
	assert_int_equal(call_against((const char *[]){ "hello 2 everything" }, 1, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "tid get-restore-tid 8 9" }, 2, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "tid get-state 7 9" }, 2, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "garbage" }, 2, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", big }, 2, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "" }, 2, 5), -EIO);
	assert_int_equal(call_against((const char *[]){ "" }, 1, 5), -EIO);
	assert_int_equal(call_against(NULL, 0, 0.05), -ETIMEDOUT);
	assert_int_equal(call_against((const char *[]){ "hello 2 queries" }, 1, 0.05), -ETIMEDOUT);
	/* A daemon of another version than the one we greeted with. */
	assert_int_equal(call_against((const char *[]){ "hello 1 queries", "tid get-restore-tid 7 9" }, 2, 5), -EIO);
	/* A query is never "started". */
	assert_int_equal(call_against((const char *[]){ "hello 2 queries", "started get-restore-tid 7 5",
							 "tid get-restore-tid 7 9" }, 3, 5), -EIO);
}

/* A scripted daemon on the other end of a socketpair: the messages said,
 * sent before the client reads ("": the daemon closes its writing half).
 * The client's connection in *c; the daemon's end is returned. */
static int scripted(const char *const *said, size_t n, struct rtid__svc_conn *c)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	*c = (struct rtid__svc_conn){ .fd = sv[0], .version = RTID__SVC_VERSION_PLAIN };
	for (size_t i = 0; i < n; i++)
		if (said[i][0])
			assert_true(send(sv[1], said[i], strlen(said[i]), 0) >= 0);
		else
			shutdown(sv[1], SHUT_WR); /* the client's request still goes out */
	return sv[1];
}

/* An action against a scripted daemon: the answer, and whether the client
 * holds it as started. late: after the call, the daemon tries to say
 * "started" (it must fail: a cancelled action can no longer start). */
static int act_against(const char *const *said, size_t n, double wait, bool late, bool *started)
{
	struct rtid__svc_req q = { .op = RTID__OP_CHECKPOINT, .pid = 7 };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a = { 0 };
	int daemon = scripted(said, n, &c), r;

	r = rtid__svc_call(&c, &q, rtid__now() + wait, &a);
	*started = c.started;
	if (late) {
		assert_int_equal(send(daemon, "started checkpoint 7 1", 22, MSG_NOSIGNAL), -1);
		assert_int_equal(errno, EPIPE);
	}
	rtid__svc_close(&c);
	close(daemon);
	if (r == 0 && a.kind == RTID__SVC_STARTED)
		return -1000; /* "started" is never the answer */
	return r == 0 ? (int)a.kind : r;
}

/* A batch's wire form: what is formatted parses back to the same; what the
 * daemon must refuse is neither formatted nor parsed. */
static void test_batch_wire(void **state)
{
	int pids[RTID__SVC_BATCH_MAX + 1], got[RTID__SVC_BATCH_MAX], op;
	char buf[RTID__SVC_MSG_MAX];
	size_t n, len;
	static const char *const bad[] = {
		"batch", "batch get-restore-tid", "batch lock 1", "batch checkpoint 1",
		"batch get-restore-tid 0", "batch get-restore-tid -1", "batch get-restore-tid 01",
		"batch get-restore-tid 1  2", "batch get-restore-tid 1 2 ", "batch nothing 1",
		"batchget-restore-tid 1", "get-restore-tid 1", "batch get-restore-tid 2147483648",
	};

	(void)state;
	for (int i = 0; i <= RTID__SVC_BATCH_MAX; i++)
		pids[i] = 4194000 + i;
	len = rtid__svc_batch_format(RTID__OP_GET_STATE, pids, RTID__SVC_BATCH_MAX, buf);
	assert_true(len > 0 && len < RTID__SVC_MSG_MAX);
	assert_int_equal(rtid__svc_batch_parse(buf, len, &op, got, &n), 0);
	assert_int_equal(op, RTID__OP_GET_STATE);
	assert_int_equal(n, RTID__SVC_BATCH_MAX);
	assert_memory_equal(got, pids, n * sizeof(int));
	len = rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, 1, buf);
	assert_string_equal(buf, "batch get-restore-tid 4194000");
	assert_int_equal(rtid__svc_batch_parse(buf, len, &op, got, &n), 0);
	assert_int_equal(n, 1);
	/* Out of range: too many, none, an action, a message too long. */
	assert_int_equal(rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, RTID__SVC_BATCH_MAX + 1,
						buf), 0);
	assert_int_equal(rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, 0, buf), 0);
	assert_int_equal(rtid__svc_batch_format(RTID__OP_LOCK, pids, 1, buf), 0);
	/* The longest batch fits in one message, and reads back whole. */
	for (int i = 0; i < RTID__SVC_BATCH_MAX; i++)
		pids[i] = 2000000000 + i;
	len = rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, RTID__SVC_BATCH_MAX, buf);
	assert_true(len > 0);
	assert_int_equal(rtid__svc_batch_parse(buf, len, &op, got, &n), 0);
	assert_int_equal(n, RTID__SVC_BATCH_MAX);
	assert_int_equal(got[RTID__SVC_BATCH_MAX - 1], 2000000000 + RTID__SVC_BATCH_MAX - 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rtid__svc_batch_parse(bad[i], strlen(bad[i]), &op, got, &n), -EINVAL);
	len = (size_t)snprintf(buf, sizeof(buf), "batch get-restore-tid");
	for (int i = 0; i <= RTID__SVC_BATCH_MAX; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %d", i + 1);
	assert_int_equal(rtid__svc_batch_parse(buf, len, &op, got, &n), -EINVAL); /* 25 */
}

/* The client's batch against scripted daemons: answers in the batch's order
 * and about its pids, or -EIO (one out of order, another pid, a "started",
 * a daemon that closes: one that does not know batches). */
static int batch_against(const char *const *said, size_t n)
{
	static const int pids[] = { 7, 8 };
	struct rtid__svc_ans a[2] = { 0 };
	struct rtid__svc_conn c;
	int daemon = scripted(said, n, &c), r;

	r = rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, 2, rtid__now() + 5, a);
	rtid__svc_close(&c);
	close(daemon);
	if (r == 0 && (a[0].pid != 7 || a[1].pid != 8 || a[0].value != 9 ||
		       a[1].kind != RTID__SVC_CUERR))
		return -1000;
	return r;
}

static void test_client_batch(void **state)
{
	(void)state;
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries", "tid get-restore-tid 7 9",
		"cuerr get-restore-tid 8 1 CUDA_ERROR_INVALID_VALUE -" }, 3), 0);
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries",
		"cuerr get-restore-tid 8 1 CUDA_ERROR_INVALID_VALUE -", "tid get-restore-tid 7 9" }, 3),
		-EIO);
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries", "tid get-restore-tid 7 9",
		"tid get-state 8 1" }, 3), -EIO);
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries", "started get-restore-tid 7 5",
		"tid get-restore-tid 7 9" }, 3), -EIO);
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries", "tid get-restore-tid 7 9",
		"unknown get-restore-tid 8 x -" }, 3), -EIO);
	assert_int_equal(batch_against((const char *[]){ "hello 2 queries", "" }, 2), -EIO);
	assert_int_equal(batch_against((const char *[]){ "refused 2 version" }, 1), -EPROTO);
	{
		char big[RTID__SVC_MSG_MAX + 40];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(batch_against((const char *[]){ "hello 2 queries", big }, 2), -EIO);
	}
	/* A connection whose daemon has gone: the request cannot go out. */
	{
		static const int one[] = { 7 };
		struct rtid__svc_ans a[1];
		struct rtid__svc_conn c;
		int daemon = scripted(NULL, 0, &c);

		close(daemon);
		assert_int_equal(rtid__svc_batch(&c, RTID__OP_RESTORE_TID, one, 1, rtid__now() + 5, a),
				 -EIO);
		assert_int_equal(rtid__svc_status(&c, rtid__now() + 5, NULL, NULL), -EIO);
		rtid__svc_close(&c);
	}
	/* Greeted early, as the plugin does at init. */
	{
		struct rtid__svc_conn c;
		int daemon = scripted((const char *[]){ "hello 2 actions" }, 1, &c);

		assert_int_equal(rtid__svc_greeted(&c, rtid__now() + 5), 0);
		assert_true(c.greeted && c.actions);
		assert_int_equal(rtid__svc_greeted(&c, rtid__now() + 5), 0); /* once */
		rtid__svc_close(&c);
		close(daemon);
		daemon = scripted((const char *[]){ "" }, 1, &c);
		assert_int_equal(rtid__svc_greeted(&c, rtid__now() + 5), -EIO);
		rtid__svc_close(&c);
		close(daemon);
		daemon = scripted(NULL, 0, &c);
		assert_int_equal(rtid__svc_greeted(&c, rtid__now() + 0.05), -ETIMEDOUT);
		rtid__svc_close(&c);
		close(daemon);
	}
}

static void test_client_exactly_once(void **state)
{
	bool started = true;

	(void)state;
	/* Started, then done: the answer, and it is known to have run. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "started checkpoint 7 1000",
							"done checkpoint 7" }, 3, 5, false, &started),
			 RTID__SVC_DONE);
	assert_true(started);
	/* Refused before any start: the tool may run it. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "error checkpoint 7 busy x" },
				     2, 5, false, &started), RTID__SVC_ERROR);
	assert_false(started);
	/* Started, then the daemon hangs up: an error, and started. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "started checkpoint 7 1000", "" },
				     3, 5, false, &started), -EIO);
	assert_true(started);
	/* "unknown" with no "started" before it still counts as started. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "unknown checkpoint 7 timeout x" },
				     2, 5, false, &started), RTID__SVC_UNKNOWN);
	assert_true(started);
	/* Started twice is a broken daemon. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "started checkpoint 7 1",
							"started checkpoint 7 1" }, 3, 5, false, &started), -EIO);
	/* Our wait runs out while it is queued: cancelled, known not to have
	 * run, and the daemon can no longer say "started" for it. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions" }, 1, 0.05, true, &started),
			 -ETIMEDOUT);
	assert_false(started);
	/* A "started" that came just before the cancel: it runs, outcome unknown. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "started checkpoint 7 0" },
				     2, 0, false, &started), -EIO);
	assert_true(started);
	/* The answer itself came just before: it is the answer. */
	assert_int_equal(act_against((const char *[]){ "hello 2 actions", "done checkpoint 7" },
				     2, 0, false, &started), RTID__SVC_DONE);
}

static void count_stat(void *ctx, const char *stat)
{
	(void)stat;
	(*(int *)ctx)++;
}

/* "status" against scripted daemons: stats until "end"; anything else is an
 * error, and a refusal is -EPROTO. */
static int status_against(const char *const *said, size_t n, int *stats)
{
	struct rtid__svc_conn c;
	int daemon = scripted(said, n, &c), r;

	*stats = 0;
	r = rtid__svc_status(&c, rtid__now() + 0.2, count_stat, stats);
	rtid__svc_close(&c);
	close(daemon);
	return r;
}

static void test_client_status(void **state)
{
	int n;

	(void)state;
	assert_int_equal(status_against((const char *[]){ "hello 2 queries", "stat a 1", "stat b x",
							  "end" }, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(status_against((const char *[]){ "refused 2 busy" }, 1, &n), -EPROTO);
	assert_int_equal(status_against((const char *[]){ "hello 7 queries" }, 1, &n), -EIO);
	assert_int_equal(status_against((const char *[]){ "hello 2 queries", "tid x" }, 2, &n), -EIO);
	assert_int_equal(status_against((const char *[]){ "hello 2 queries", "stat a 1", "" }, 3, &n),
			 -EIO);
	assert_int_equal(status_against((const char *[]){ "hello 2 queries" }, 1, &n), -ETIMEDOUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_op_kinds),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_greetings),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_client_against_bad_daemons),
		cmocka_unit_test(test_client_exactly_once),
		cmocka_unit_test(test_batch_wire),
		cmocka_unit_test(test_client_batch),
		cmocka_unit_test(test_client_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
