/* rtid serve's batches, as rtid's CRIU plugin uses them for a tree: one
 * request, every pid answered in its order under the rules of one request
 * (who may ask, the same process before and after, never beside a call in
 * the driver), a worker that dies mid-batch, the record of work in flight
 * naming each pid until its answer, and malformed batches refused. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "basic/basic.h"
#include "helpers.h"
#include "proto/serve-proto.h"
#include "proto/service-client.h"
#include "serve-harness.h"

#define CASE_HEAD "title serve batch\nproves serve\ndriver 580.159.03\nbackend api\n"

static const char basic_case[] = CASE_HEAD
	"task 100 100 python3\ntask 100 101 cuda00001400006\n"
	"task 500 500 python3\ntask 500 501 cuda00001400006\n"
	"answer 100 tid 101\nanswer 200 none\nanswer 300 crash 11\nanswer 400 hang\n"
	"answer 500 tid 501\nanswer 800 not-initialized\n"
	"expect driver 100 tid=101\n";
static const int basic_pids[] = { 100, 200, 300, 400, 500, 800, 0 };

static struct daemon d;

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, basic_case, basic_pids);
	return 0;
}

/* The batch whose worker dies: its own case file (cases/). */
static int setup_crash(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-batch-worker-crash", basic_pids);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hd_cleanup(&d);
	return 0;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int batch(const int *pids, size_t n, struct rtid__svc_ans *a)
{
	struct rtid__svc_conn c;
	int r;

	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	r = rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, n, rtid__now() + 30, a);
	rtid__svc_close(&c);
	return r;
}

/* Every pid answered, in the batch's order, as a request of its own would
 * be: tids, the driver's none, its not-initialized; one worker's queries. */
static void test_batch_answers_in_order(void **state)
{
	static const int pids[] = { 500, 200, 800, 100 };
	struct rtid__svc_ans a[4];

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(batch(pids, 4, a), 0);
	assert_int_equal(a[0].kind, RTID__SVC_TID);
	assert_int_equal(a[0].value, 501);
	assert_int_equal(a[1].kind, RTID__SVC_CUERR);
	assert_string_equal(a[1].name, "CUDA_ERROR_INVALID_VALUE");
	assert_int_equal(a[2].kind, RTID__SVC_CUERR);
	assert_string_equal(a[2].name, "CUDA_ERROR_NOT_INITIALIZED");
	assert_int_equal(a[3].kind, RTID__SVC_TID);
	assert_int_equal(a[3].value, 101);
	for (int i = 0; i < 4; i++)
		assert_int_equal(a[i].pid, pids[i]);
	/* One worker, one attach: the four went to the driver in order. */
	assert_int_equal(hd_log_count(&d, "\"event\":\"start\""), 4);
	assert_true(hd_log_time(&d, "start", 500, 0) <= hd_log_time(&d, "start", 100, 0));
	/* A second batch on the same connection, as the plugin keeps one. */
	{
		struct rtid__svc_conn c;

		assert_int_equal(rtid__svc_open(d.sock, &c), 0);
		assert_int_equal(rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, 2,
						 rtid__now() + 30, a), 0);
		assert_int_equal(rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids + 2, 2,
						 rtid__now() + 30, a), 0);
		assert_int_equal(a[1].value, 101);
		rtid__svc_close(&c);
	}
}

/* The rules of one request, pid by pid: a thread is no process (denied), a
 * pid of nothing is denied, a process named twice is asked once (the second
 * not-batched: its client asks it alone); the others are answered. */
static void test_batch_rules_per_pid(void **state)
{
	static const int pids[] = { 101, 100, 4242, 100 };
	struct rtid__svc_ans a[4];

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(batch(pids, 4, a), 0);
	assert_int_equal(a[0].kind, RTID__SVC_DENIED);
	assert_non_null(strstr(a[0].text, "a thread, not a process"));
	assert_int_equal(a[1].kind, RTID__SVC_TID);
	assert_int_equal(a[2].kind, RTID__SVC_DENIED);
	assert_int_equal(a[3].kind, RTID__SVC_ERROR);
	assert_string_equal(a[3].name, RTID__SVC_NOT_BATCHED);
	assert_int_equal(hd_log_count(&d, "\"event\":\"start\""), 1);
}

/* A process whose call hangs in the driver is never asked beside it: the
 * batch leaves it to be asked alone (not-batched) and answers the rest at
 * once; the hung call ends at its deadline as ever. */
static void test_batch_beside_a_call_in_the_driver(void **state)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 400 };
	static const int pids[] = { 400, 100 };
	struct rtid__svc_ans a[2], h;
	struct rtid__svc_conn c;
	char buf[64];
	size_t n;

	(void)state;
	hd_start(&d, ARGS("--timeout", "2"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	n = rtid__svc_req_format(&q, buf);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0); /* in the driver now */
	assert_int_equal(batch(pids, 2, a), 0);
	assert_int_equal(a[0].kind, RTID__SVC_ERROR);
	assert_string_equal(a[0].name, RTID__SVC_NOT_BATCHED);
	assert_int_equal(a[1].kind, RTID__SVC_TID);
	assert_int_equal(hd_log_count(&d, "\"pid\":400"), 1); /* asked once, by the first */
	assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 30, &h), -EIO); /* a second request */
	rtid__svc_close(&c);
}

/* The worker dies on a batch's second pid: the first keeps its answer, the
 * ones not answered get the daemon's reason (their client does not take
 * them for "none"), and the next request has a fresh worker. */
static void test_batch_worker_dies(void **state)
{
	static const int pids[] = { 100, 300, 500 };
	struct rtid__svc_ans a[3], one;

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(batch(pids, 3, a), 0);
	assert_int_equal(a[0].kind, RTID__SVC_TID);
	assert_int_equal(a[1].kind, RTID__SVC_ERROR);
	assert_string_equal(a[1].name, "worker-crashed");
	assert_int_equal(a[2].kind, RTID__SVC_ERROR);
	assert_string_equal(a[2].name, "worker-crashed");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 500, 0, &one), 0);
	assert_int_equal(one.kind, RTID__SVC_TID);
	assert_int_equal(one.value, 501);
}

/* A pid that became another process while the batch was in the driver is
 * answered process-changed, never with the old process's answer. */
static void test_batch_pid_reused(void **state)
{
	static const int pids[] = { 200, 100 };
	char path[600], text[512];
	struct rtid__svc_ans a[2];

	(void)state;
	stat_line(100, 1000, text, sizeof(text));
	write_file(d.proc, "100/stat", text);
	snprintf(path, sizeof(path), "%s/100/stat", d.proc);
	stat_line(100, 2000, text, sizeof(text));
	setenv("RTID_MOCK_REPLACE_FILE", path, 1);
	setenv("RTID_MOCK_REPLACE_TEXT", text, 1);
	hd_start(&d, NULL);
	unsetenv("RTID_MOCK_REPLACE_FILE");
	unsetenv("RTID_MOCK_REPLACE_TEXT");
	assert_int_equal(batch(pids, 2, a), 0);
	assert_int_equal(a[1].kind, RTID__SVC_ERROR);
	assert_string_equal(a[1].name, "process-changed");
}

/* While a batch's pid is in the driver, the record of work in flight names
 * it and the ones queued behind it (a daemon started after a crash must
 * hold them back; one answered may stay named until the next write, as a
 * request's does). */
static void test_batch_recorded(void **state)
{
	static const int pids[] = { 100, 400, 500 };
	struct rtid__svc_conn c;
	char path[400], buf[RTID__SVC_MSG_MAX], rec[4096] = "";
	size_t n = rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, 3, buf);
	ssize_t got;
	int fd;

	(void)state;
	hd_start(&d, ARGS("--timeout", "1"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0);
	snprintf(path, sizeof(path), "%s.inflight", d.sock);
	assert_true((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
	got = read(fd, rec, sizeof(rec) - 1);
	close(fd);
	assert_true(got > 0);
	assert_non_null(strstr(rec, " 400 "));
	assert_non_null(strstr(rec, " 500 "));
	rtid__svc_close(&c);
}

/* A process queued in a batch behind a call that hangs is the batch's until
 * answered: a request of its own for it waits (nothing for it goes to a
 * second worker beside the batch's), and runs once the batch has ended. */
static void test_batch_holds_its_processes(void **state)
{
	static const int pids[] = { 400, 500 };
	struct rtid__svc_ans a[2], one;
	struct rtid__svc_conn c;
	char buf[RTID__SVC_MSG_MAX];
	size_t n = rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, 2, buf);

	(void)state;
	hd_start(&d, ARGS("--timeout", "1"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 500, 0, &one), 0);
	/* Its own deadline is the batch's: it ends with the batch (its worker
	 * killed then), held back, or is answered once the batch is over, by
	 * the one call for 500 that reached the driver. Never beside it. */
	if (one.kind == RTID__SVC_TID) {
		assert_int_equal(hd_log_count(&d, "\"pid\":500"), 1);
		assert_true(hd_log_time(&d, "start", 500, 0) - hd_log_time(&d, "start", 400, 0) >=
			    0.9);
	} else {
		assert_int_equal(one.kind, RTID__SVC_ERROR);
		assert_int_equal(hd_log_count(&d, "\"pid\":500"), 0);
	}
	assert_int_equal(rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, 0, rtid__now() + 1, a),
			 -EINVAL);
	rtid__svc_close(&c);
}

/* One batch with a worker at a time: a second waits while the first hangs
 * (it is not answered before the first has ended), then either runs or ends
 * at its own deadline, every pid with the one answer. */
static void test_batch_waits_for_a_batch(void **state)
{
	static const int hang[] = { 400 }, pids[] = { 100, 500 };
	struct rtid__svc_ans a[2];
	struct rtid__svc_conn c;
	char buf[RTID__SVC_MSG_MAX];
	size_t n = rtid__svc_batch_format(RTID__OP_RESTORE_TID, hang, 1, buf);
	double t0;

	(void)state;
	hd_start(&d, ARGS("--timeout", "1"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0);
	t0 = rtid__now();
	assert_int_equal(batch(pids, 2, a), 0);
	assert_true(rtid__now() - t0 >= 0.5); /* held while the first ran */
	if (a[0].kind == RTID__SVC_ERROR) {
		assert_string_equal(a[0].name, "timeout");
		assert_int_equal(a[1].kind, RTID__SVC_ERROR);
		assert_string_equal(a[1].name, "timeout");
		assert_int_equal(hd_log_count(&d, "\"pid\":100"), 0);
	} else {
		assert_int_equal(a[0].kind, RTID__SVC_TID);
		assert_int_equal(a[1].kind, RTID__SVC_TID);
	}
	assert_true(hd_recv(c.fd, buf, sizeof(buf), 10) > 0); /* the greeting */
	assert_true(hd_recv(c.fd, buf, sizeof(buf), 10) > 0); /* the first's answer */
	assert_non_null(strstr(buf, " 400 "));
	rtid__svc_close(&c);
}

/* A batch on a connection made before a stop began is refused at once, each
 * pid shutting-down, while a query still hangs in the driver. */
static void test_batch_while_stopping(void **state)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 400 };
	static const int pids[] = { 100, 500 };
	struct rtid__svc_ans a[2];
	struct rtid__svc_conn c, c2;
	char buf[RTID__SVC_MSG_MAX];
	size_t n;

	(void)state;
	hd_start(&d, ARGS("--timeout", "60"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	n = rtid__svc_req_format(&q, buf);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0);
	assert_int_equal(rtid__svc_open(d.sock, &c2), 0);
	assert_int_equal(rtid__svc_greeted(&c2, rtid__now() + 20), 0);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	for (int i = 0; i < 2000 * time_factor() && !hd_said(&d, "rtid serve: stopping"); i++)
		poll(NULL, 0, 10);
	assert_int_equal(rtid__svc_batch(&c2, RTID__OP_RESTORE_TID, pids, 2, rtid__now() + 20, a),
			 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(a[i].kind, RTID__SVC_ERROR);
		assert_string_equal(a[i].name, "shutting-down");
	}
	rtid__svc_close(&c2);
	rtid__svc_close(&c);
	assert_int_equal(hd_stop(&d), 0);
}

/* get-state in a batch, asked as CRIU's plugin asks it, of restore threads
 * (the rule of get-state takes a thread). */
static void test_batch_get_state(void **state)
{
	static const int pids[] = { 501, 101 };
	struct rtid__svc_ans a[2];
	struct rtid__svc_conn c;

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(rtid__svc_batch(&c, RTID__OP_GET_STATE, pids, 2, rtid__now() + 30, a), 0);
	assert_int_equal(a[0].kind, RTID__SVC_STATE);
	assert_int_equal(a[1].kind, RTID__SVC_STATE);
	assert_int_equal(a[1].pid, 101);
	rtid__svc_close(&c);
}

/* A client that leaves while its batch is in the driver: the batch ends
 * (its hung pid at the deadline), its answers dropped, and the daemon serves
 * the next client. */
static void test_batch_client_leaves(void **state)
{
	static const int pids[] = { 400, 100 };
	struct rtid__svc_ans one;
	struct rtid__svc_conn c;
	char buf[RTID__SVC_MSG_MAX];
	size_t n = rtid__svc_batch_format(RTID__OP_RESTORE_TID, pids, 2, buf);

	(void)state;
	hd_start(&d, ARGS("--timeout", "0.5"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	hd_log_wait(&d, "start", 400, 0);
	rtid__svc_close(&c);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 500, 0, &one), 0);
	assert_int_equal(one.kind, RTID__SVC_TID);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &one), 0); /* after the batch */
	assert_int_equal(one.kind, RTID__SVC_TID);
	assert_int_equal(hd_stop(&d), 0);
}

/* Malformed batches close the connection, as any malformed request: an
 * action, no pid, too many pids, a pid that is no number. */
static void test_batch_malformed(void **state)
{
	static const char *const bad[] = {
		"batch lock 100", "batch get-restore-tid", "batch get-restore-tid 100 x",
		"batch get-restore-tid 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 "
		"24 25",
	};
	int pids[RTID__SVC_BATCH_MAX + 1] = { 0 };
	struct rtid__svc_ans a[RTID__SVC_BATCH_MAX + 1];
	struct rtid__svc_conn c;
	char buf[RTID__SVC_MSG_MAX];

	(void)state;
	hd_start(&d, NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = hd_connect_raw(d.sock);

		assert_true(fd >= 0);
		assert_int_equal(send(fd, "hello 2", 7, 0), 7);
		assert_true(hd_recv(fd, buf, sizeof(buf), 10) > 0);
		assert_int_equal(send(fd, bad[i], strlen(bad[i]), 0), (ssize_t)strlen(bad[i]));
		assert_int_equal(hd_recv(fd, buf, sizeof(buf), 10), 0); /* closed */
		close(fd);
	}
	/* The client refuses to send what the daemon would refuse. */
	for (int i = 0; i <= RTID__SVC_BATCH_MAX; i++)
		pids[i] = 100;
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, RTID__SVC_BATCH_MAX + 1,
					 rtid__now() + 5, a), -EINVAL);
	assert_int_equal(rtid__svc_batch(&c, RTID__OP_LOCK, pids, 1, rtid__now() + 5, a), -EINVAL);
	rtid__svc_close(&c);
	assert_true(hd_said(&d, "malformed request"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_batch_answers_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_rules_per_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_beside_a_call_in_the_driver, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_worker_dies, setup_crash, teardown),
		cmocka_unit_test_setup_teardown(test_batch_pid_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_holds_its_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_waits_for_a_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_while_stopping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_get_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_client_leaves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_malformed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
