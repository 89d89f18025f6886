/* rtid serve for a whole node: several CRIU runs side by side (a long action
 * on one process holds up no other process), one process's requests in
 * order, every action applied exactly once (no path from a started action
 * to a second run, by the daemon or the real tool), and a daemon that stays
 * fair and bounded under a flood or a low fd limit. The stand-in driver is
 * the mock libcuda with a slow checkpoint (RTID_MOCK_SLOW_OPS/_S). */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "helpers.h"
#include "plugin-call.h"
#include "serve-harness.h"
#include "serve/serve.h"

#define TOOL_CALLS "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NOBODY 65534

static const int node_pids[] = { 100, 200, 300, 400, 0 };

static struct daemon d;

static int greeted(int v);

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-node", node_pids);
	setenv("RTID_MOCK_SLOW_OPS", "checkpoint", 1);
	{
		char slow[32];

		snprintf(slow, sizeof(slow), "%g", 2 * time_factor());
		setenv("RTID_MOCK_SLOW_S", slow, 1);
		/* A query about a process waits for that process's action: the
		 * shim's wait must outlast the stand-in's checkpoint. */
		snprintf(slow, sizeof(slow), "%g", 30 * time_factor());
		setenv("RTID_SERVICE_TIMEOUT", slow, 1);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("RTID_MOCK_SLOW_OPS");
	unsetenv("RTID_MOCK_SLOW_S");
	unsetenv("RTID_MOCK_FAULT_OPS");
	unsetenv("RTID_SERVICE_ACTION_TIMEOUT");
	unsetenv("RTID_SERVICE_TIMEOUT");
	hd_cleanup(&d);
	return 0;
}

static void expect_shim(const char *const *args, int status, const char *out)
{
	struct shim_run r = hd_shim(&d, NULL, args);

	assert_string_equal(r.out, out);
	assert_int_equal(r.status, status);
}

/* Driver calls of one kind for one pid (the libcuda mock's own events). */
static int driver_calls(const char *event, int pid)
{
	int n = 0;

	while (hd_log_time(&d, event, pid, n) >= 0)
		n++;
	return n;
}

static void lock(int pid)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", pid);
	expect_shim(ARGS("--action", "lock", "--pid", p, "--timeout", "1000"), 0, "");
}

/* A checkpoint of pid through the shim in the background, once the driver
 * has it (the stand-in's checkpoint is slow). */
static void checkpoint_running(struct shim_bg *b, const char *pid)
{
	hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", pid), b);
	hd_log_wait(&d, "checkpoint", (int)strtol(pid, NULL, 10), 0);
}

/* During a long checkpoint of one process, another process's query and lock
 * are answered by the daemon while it runs (the checkpoint not yet ended is
 * the bound, not a time that load could pass); the same process's next
 * requests wait for it, never overlapping it. */
static void test_long_action_holds_up_no_one(void **state)
{
	struct shim_bg ck, ck2, rs;
	struct shim_run r;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	lock(100);
	lock(300);
	checkpoint_running(&ck, "100");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
	lock(200);
	assert_true(hd_log_time(&d, "checkpoint-end", 100, 0) < 0); /* still running */
	/* The same process: its query waits for the action and sees its result. */
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "checkpointed\n");
	assert_true(hd_log_time(&d, "get-state", 100, 0) >= hd_log_time(&d, "checkpoint-end", 100, 0));
	r = hd_shim_wait(&ck);
	assert_string_equal(r.out, "");
	assert_int_equal(r.status, 0);
	/* Two actions on one process asked at once: one after the other, in
	 * the order asked. */
	checkpoint_running(&ck2, "300");
	hd_shim_start(&d, ARGS("--action", "restore", "--pid", "300"), &rs);
	assert_int_equal(hd_shim_wait(&ck2).status, 0);
	assert_int_equal(hd_shim_wait(&rs).status, 0);
	assert_true(hd_log_time(&d, "restore", 300, 0) >= hd_log_time(&d, "checkpoint-end", 300, 0));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The daemon's count of requests queued and not yet at a worker. */
static long queued_now(void)
{
	return hd_stat(&d, "queued");
}

/* The line of the driver's log where the nth event for pid is, or -1. */
static int log_line(const char *event, int pid)
{
	char *text = strdup(slurp(d.log)), *line = text, *next, we[80], wp[32];
	int at = -1;

	snprintf(we, sizeof(we), "\"event\":\"%s\"", event);
	snprintf(wp, sizeof(wp), "\"pid\":%d,", pid);
	for (int i = 0; line && *line; line = next, i++) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (strstr(line, we) && strstr(line, wp))
			at = i; /* the last */
	}
	free(text);
	return at;
}

/* Two queries about one process, asked one after the other while its
 * action runs: both wait for the action, and the later never passes the
 * earlier, queued as it is (each process's requests in the order asked),
 * also when the later holds a lower place among the daemon's clients (it
 * takes the first free one): four connections held while the first query
 * comes, closed before the second. */
static void test_queued_requests_keep_their_order(void **state)
{
	struct rtid__svc_conn hold[4];
	struct shim_bg ck, q1, q2;
	struct shim_run r;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	lock(100);
	checkpoint_running(&ck, "100");
	for (int i = 0; i < 4; i++)
		assert_int_equal(rtid__svc_open(d.sock, &hold[i]), 0);
	hd_shim_start(&d, ARGS("--get-state", "--pid", "100"), &q1);
	while (queued_now() < 1) /* the daemon has it: the next is later */
		;
	for (int i = 0; i < 4; i++)
		rtid__svc_close(&hold[i]);
	/* Two round trips: the daemon has seen the four leave (a place each). */
	assert_int_equal(queued_now(), 1);
	assert_int_equal(queued_now(), 1);
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "100"), &q2);
	while (queued_now() < 2)
		;
	assert_true(hd_log_time(&d, "checkpoint-end", 100, 0) < 0); /* both behind it */
	assert_int_equal(hd_shim_wait(&ck).status, 0);
	r = hd_shim_wait(&q1);
	assert_string_equal(r.out, "checkpointed\n");
	r = hd_shim_wait(&q2);
	assert_int_equal(r.status, 0);
	assert_true(log_line("get-state", 100) > log_line("checkpoint-end", 100));
	assert_true(log_line("start", 100) > log_line("get-state", 100));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The daemon's workers blocked reading a query: attached, their greeting
 * sent (a worker reads its socket with recv, which is recvfrom here). */
static int workers_waiting(void)
{
	char path[64], kids[512], want[32], *p, *end;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)d.pid, (int)d.pid);
	snprintf(kids, sizeof(kids), "%s", slurp(path));
	snprintf(want, sizeof(want), "%ld ", (long)SYS_recvfrom);
	for (p = kids;; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		snprintf(path, sizeof(path), "/proc/%ld/syscall", pid);
		n += !strncmp(slurp(path), want, strlen(want));
	}
	return n;
}

/* Requests waiting for workers are all handed out in the pass in which the
 * workers are ready, oldest first whatever their clients' places: a query of
 * 200 (it hangs in the driver) read before one of 100 asked on an older
 * connection (the lower place), both waiting while two workers attach (the
 * first worker crashed on 300: none is left), the daemon stopped meanwhile
 * so that both are ready in one pass. 100 is answered by the second worker
 * while 200 still hangs, not at its own deadline; 200 is cut at its
 * deadline. */
static void test_waiting_requests_all_handed_out(void **state)
{
	struct rtid__svc_req q100 = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
	struct rtid__svc_req q200 = { .op = RTID__OP_RESTORE_TID, .pid = 200 };
	struct rtid__svc_conn a, b;
	struct rtid__svc_ans ans;
	char text[400], buf[RTID__SVC_MSG_MAX], tmo[32];
	size_t n;
	int st, len;

	(void)state;
	snprintf(text, sizeof(text), "title w\nproves w\ndriver 580.159.03\nbackend api\n"
		 "attach-delay %g\ntask 100 100 python3\ntask 100 101 cuda00001400006\n"
		 "task 200 200 python3\ntask 200 201 cuda00001400006\ntask 300 300 python3\n"
		 "answer 100 tid 101\nanswer 200 hang\nanswer 300 crash 11\n"
		 "expect driver 100 tid=101\n", 0.5 * time_factor());
	write_file(d.dir, "t.case", text);
	snprintf(tmo, sizeof(tmo), "%g", 2 * time_factor());
	hd_start(&d, ARGS("--workers", "2", "--timeout", tmo));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 300, 0, &ans), 0);
	assert_string_equal(ans.name, "worker-crashed"); /* no worker now */
	assert_int_equal(rtid__svc_open(d.sock, &a), 0); /* the lower place */
	assert_int_equal(rtid__svc_open(d.sock, &b), 0);
	n = rtid__svc_req_format(&q200, buf);
	assert_int_equal(send(b.fd, buf, n, 0), (ssize_t)n);
	/* Read, waiting for a new worker's attach: the next is later. */
	for (int i = 0; i < 2000 && queued_now() < 1; i++)
		;
	n = rtid__svc_req_format(&q100, buf);
	assert_int_equal(send(a.fd, buf, n, 0), (ssize_t)n);
	for (int i = 0; i < 2000 && queued_now() < 2; i++)
		;
	assert_int_equal(queued_now(), 2); /* neither has a worker yet */
	assert_int_equal(kill(d.pid, SIGSTOP), 0);
	assert_int_equal(waitpid(d.pid, &st, WUNTRACED), d.pid);
	for (int i = 0; i < 4000 * time_factor() && workers_waiting() < 2; i++)
		poll(NULL, 0, 5);
	assert_int_equal(workers_waiting(), 2);
	assert_int_equal(kill(d.pid, SIGCONT), 0);
	assert_true(hd_recv(a.fd, buf, sizeof(buf), 20 * time_factor()) > 0); /* the greeting */
	len = hd_recv(a.fd, buf, sizeof(buf), 20 * time_factor());
	assert_true(len > 0);
	assert_int_equal(rtid__svc_ans_parse(buf, (size_t)len, &ans), 0);
	assert_int_equal(ans.kind, RTID__SVC_TID);
	assert_int_equal(ans.value, 101);
	assert_true(hd_recv(b.fd, buf, sizeof(buf), 20 * time_factor()) > 0); /* the greeting */
	assert_int_equal(hd_recv(b.fd, buf, sizeof(buf), 0), -1); /* 200 still hangs */
	len = hd_recv(b.fd, buf, sizeof(buf), 20 * time_factor());
	assert_true(len > 0);
	assert_int_equal(rtid__svc_ans_parse(buf, (size_t)len, &ans), 0);
	assert_string_equal(ans.name, "timeout");
	rtid__svc_close(&a);
	rtid__svc_close(&b);
}

/* The daemon's count of attaches started (counted as each worker starts). */
static long attaches_now(void)
{
	return hd_stat(&d, "attaches");
}

/* A spare worker is started while an action runs only when no worker is
 * idle: an idle worker is the spare, and another attach would be paid for
 * nothing; one is started with the first action, before a query needs it.
 * Checkpoints of 100 and of 200 run side by side on two workers, a
 * third started as the spare; when 100's ends, its worker is idle beside
 * 200's action: no fourth attach. */
static void test_no_spare_beside_an_idle_worker(void **state)
{
	struct shim_bg ck1, ck2;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	lock(100);
	checkpoint_running(&ck1, "100");
	/* The first action started the spare before anything else was asked:
	 * a query during it would not wait for an attach. */
	assert_int_equal(attaches_now(), 2);
	lock(200);
	checkpoint_running(&ck2, "200");
	assert_int_equal(attaches_now(), 3);
	assert_int_equal(hd_shim_wait(&ck1).status, 0);
	assert_true(hd_log_time(&d, "checkpoint-end", 200, 0) < 0); /* 200's still runs */
	assert_int_equal(attaches_now(), 3);
	assert_int_equal(hd_shim_wait(&ck2).status, 0);
	assert_int_equal(attaches_now(), 3);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The "started" message says the action's deadline in ms as an int: a lock
 * whose own timeout takes it past what that can say (2.1e9 ms) is started
 * with the most it can, 2e9 ms, never a number wrapped round; then done. */
static void test_started_deadline_capped(void **state)
{
	struct rtid__svc_req q = { .op = RTID__OP_LOCK, .pid = 100, .timeout_ms = 2100000000u };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	char buf[RTID__SVC_MSG_MAX];
	size_t n = rtid__svc_req_format(&q, buf);
	int len;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	assert_true(hd_recv(c.fd, buf, sizeof(buf), 20 * time_factor()) > 0); /* the greeting */
	len = hd_recv(c.fd, buf, sizeof(buf), 20 * time_factor());
	assert_true(len > 0);
	assert_int_equal(rtid__svc_ans_parse(buf, (size_t)len, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_STARTED);
	assert_int_equal(a.value, 2000000000);
	len = hd_recv(c.fd, buf, sizeof(buf), 20 * time_factor());
	assert_true(len > 0);
	assert_int_equal(rtid__svc_ans_parse(buf, (size_t)len, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	rtid__svc_close(&c);
}

/* A request waiting for a worker holds back its process's later ones: with
 * the pool full (two workers, a checkpoint of 100 on one, the other still
 * attaching), a query about 200 waits, and a lock of 200 asked next, at a
 * lower client place, is neither refused "busy" (its shim would run the tool
 * beside the daemon's query to come) nor run before the query. The
 * checkpoint ends before the spare attaches: its worker takes the query,
 * then the lock. */
static void test_waiting_query_holds_back_its_action(void **state)
{
	struct rtid__svc_conn hold[4];
	struct shim_bg ck, q, lk;
	struct shim_run r;
	FILE *f;

	(void)state;
	hd_start(&d, ARGS("--actions", "--workers", "2", "--timeout", "600"));
	/* Workers started from now on (the first is attached) attach for
	 * longer than the checkpoint takes: the spare the lock of 100 starts. */
	f = fopen(d.casefile, "a");
	assert_non_null(f);
	fprintf(f, "attach-delay %g\n", 4 * time_factor());
	fclose(f);
	lock(100);
	checkpoint_running(&ck, "100");
	for (int i = 0; i < 4; i++)
		assert_int_equal(rtid__svc_open(d.sock, &hold[i]), 0);
	hd_shim_start(&d, ARGS("--get-state", "--pid", "200"), &q);
	while (queued_now() < 1) /* the daemon has it, waiting for a worker */
		;
	for (int i = 0; i < 4; i++)
		rtid__svc_close(&hold[i]);
	assert_int_equal(queued_now(), 1);
	assert_int_equal(queued_now(), 1);
	hd_shim_start(&d, ARGS("--action", "lock", "--pid", "200", "--timeout", "1000"), &lk);
	/* Until the daemon has the lock: queued behind the query, or answered. */
	while (queued_now() < 2 && !hd_said(&d, "lock 200 for uid"))
		;
	assert_true(hd_log_time(&d, "checkpoint-end", 100, 0) < 0); /* the pool still full */
	assert_int_equal(driver_calls("get-state", 200), 0);      /* the query still waiting */
	assert_false(hd_said(&d, "lock 200 for uid"));
	r = hd_shim_wait(&q);
	assert_string_equal(r.out, "running\n");
	assert_int_equal(r.status, 0);
	r = hd_shim_wait(&lk);
	assert_string_equal(r.out, "");
	assert_int_equal(r.status, 0);
	assert_false(hd_said(&d, "error busy"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	assert_int_equal(driver_calls("lock", 200), 1);
	assert_true(log_line("lock", 200) > log_line("get-state", 200));
	assert_int_equal(hd_shim_wait(&ck).status, 0);
}

/* The pool's only worker runs a query (slow, in the stand-in driver): a
 * query about another process waits for that worker, which is free soon,
 * rather than fail at once (its shim would pay the real tool's attach). */
static void test_query_waits_for_a_running_query(void **state)
{
	struct shim_bg q;
	struct shim_run r;

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "get-restore-tid", 1);
	hd_start(&d, ARGS("--workers", "1", "--timeout", "600"));
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "100"), &q);
	hd_log_wait(&d, "start", 100, 0); /* the worker has it */
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
	r = hd_shim_wait(&q);
	assert_string_equal(r.out, "101\n");
	assert_int_equal(r.status, 0);
	assert_false(hd_said(&d, "worker-failed"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	assert_true(log_line("start", 200) > log_line("start", 100));
}

/* Queries alone start no spare: a query that finds every worker busy waits
 * for one started for it, and one runs per query. Two slow queries about two
 * processes run side by side on two workers: two attaches, never a third
 * (a spare is for the query that comes while an action holds a worker). */
static void test_queries_start_no_spare(void **state)
{
	struct shim_bg q1, q2;

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "get-restore-tid", 1);
	hd_start(&d, ARGS("--timeout", "600"));
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "100"), &q1);
	hd_log_wait(&d, "start", 100, 0); /* a worker has it */
	assert_int_equal(attaches_now(), 1);
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "200"), &q2);
	hd_log_wait(&d, "start", 200, 0); /* the second worker has it */
	assert_int_equal(attaches_now(), 2);
	assert_string_equal(hd_shim_wait(&q1).out, "101\n");
	assert_string_equal(hd_shim_wait(&q2).out, "201\n");
	assert_int_equal(attaches_now(), 2);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* A lock waits for its start past the shim's wait for a query: queued
 * behind a slow query about its process (2 s, scaled), it is still the
 * daemon's to run, never given up on and run by the tool beside it. The
 * shim's query wait is a quarter of that query's time. */
static void test_lock_waits_past_the_query_wait(void **state)
{
	struct shim_bg q;
	char wait[32];

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "get-restore-tid", 1);
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "100"), &q);
	hd_log_wait(&d, "start", 100, 0); /* the query is in the driver */
	snprintf(wait, sizeof(wait), "%g", 0.5 * time_factor());
	setenv("RTID_SERVICE_TIMEOUT", wait, 1);
	expect_shim(ARGS("--action", "lock", "--pid", "100", "--timeout", "1000"), 0, "");
	assert_string_equal(hd_shim_wait(&q).out, "101\n");
	assert_int_equal(driver_calls("lock", 100), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	assert_true(log_line("lock", 100) > log_line("start", 100));
}

/* An action whose client cannot hear "started" (its connection shut for
 * reading: the notice's send fails) is never started: a client that is not
 * told runs the tool itself, and the action would be applied twice. The
 * connection ends; the process is as it was. */
static void test_action_unheard_never_starts(void **state)
{
	struct pollfd p;
	int fd;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	fd = greeted(2);
	assert_int_equal(shutdown(fd, SHUT_RD), 0);
	assert_int_equal(send(fd, "lock 100 1000", 13, 0), 13);
	/* The daemon closes its end: both directions shut, a hang-up here (no
	 * event asked for: reading is shut, so POLLIN would be at once). */
	p = (struct pollfd){ .fd = fd, .events = 0 };
	assert_int_equal(poll(&p, 1, (int)(10000 * time_factor())), 1);
	assert_true(p.revents & POLLHUP);
	close(fd);
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "running\n");
	assert_int_equal(driver_calls("lock", 100), 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The client of a started action goes away (its CRIU was killed): the
 * action runs to its end, its answer is dropped, and the process's next
 * request waits for it rather than overlap it. */
static void test_client_leaves_mid_action(void **state)
{
	struct shim_bg ck;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	lock(100);
	checkpoint_running(&ck, "100");
	kill(ck.pid, SIGKILL);
	assert_int_equal(hd_shim_wait(&ck).status, 128 + SIGKILL);
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "checkpointed\n");
	assert_true(hd_log_time(&d, "get-state", 100, 0) >= hd_log_time(&d, "checkpoint-end", 100, 0));
	assert_int_equal(driver_calls("checkpoint", 100), 1);
	assert_true(hd_said(&d, "checkpoint 100 ended after its client left; answer dropped"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* A query that waits for its process's action longer than its own deadline
 * is answered "timeout" before any start, and its shim asks the tool. */
static void test_query_waiting_past_its_deadline(void **state)
{
	struct shim_bg ck;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "0.3"));
	lock(100);
	checkpoint_running(&ck, "100");
	hd_shim(&d, NULL, ARGS("--get-state", "--pid", "100"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	assert_true(hd_log_time(&d, "get-state", 100, 0) < 0); /* the driver was not asked */
	assert_int_equal(hd_shim_wait(&ck).status, 0);
}

/* A get-state named by a thread of the process (as CRIU asks it, with the
 * restore tid) is that process's request: it waits for the action on it. */
static void test_state_by_thread_waits_for_its_process(void **state)
{
	struct shim_bg ck;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
	lock(100);
	checkpoint_running(&ck, "100");
	expect_shim(ARGS("--get-state", "--pid", "101"), 0, "checkpointed\n");
	assert_true(hd_log_time(&d, "get-state", 100, 0) >= hd_log_time(&d, "checkpoint-end", 100, 0));
	assert_int_equal(hd_shim_wait(&ck).status, 0);
}

/* Actions take at most workers - 1: with two workers, a second action while
 * one runs is refused before any start (the shim runs the tool for it, as
 * CRIU would alone), and a query still finds the worker left for it. */
static void test_action_bound(void **state)
{
	struct shim_bg ck;

	(void)state;
	hd_start(&d, ARGS("--actions", "--workers", "2"));
	lock(100);
	checkpoint_running(&ck, "100");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "300", "--timeout", "1000"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	assert_int_equal(driver_calls("lock", 300), 0);
	/* Refused by the daemon at once, not left to the shim's own wait. */
	assert_true(hd_said(&d, ": error busy in "));
	assert_int_equal(hd_shim_wait(&ck).status, 0);
	assert_true(hd_said(&d, "up to 2 workers"));
}

/* The bound counts actions only: with two workers, a lock that comes while
 * a slow query about another process holds one is the daemon's to run, on
 * the other, not refused "busy" (its shim would run the tool). */
static void test_a_query_is_no_action_for_the_bound(void **state)
{
	struct shim_bg q;
	char slow[32];

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "get-restore-tid", 1);
	snprintf(slow, sizeof(slow), "%g", 4 * time_factor());
	setenv("RTID_MOCK_SLOW_S", slow, 1);
	hd_start(&d, ARGS("--actions", "--workers", "2", "--timeout", "600"));
	hd_shim_start(&d, ARGS("--get-restore-tid", "--pid", "200"), &q);
	hd_log_wait(&d, "start", 200, 0); /* the query is in the driver */
	lock(100);
	assert_int_equal(waitpid(q.pid, NULL, WNOHANG), 0); /* while the query ran */
	assert_int_equal(driver_calls("lock", 100), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	assert_false(hd_said(&d, ": error busy in "));
	assert_string_equal(hd_shim_wait(&q).out, "201\n");
}

/* No new worker can attach (the driver broke after the first attach) while
 * an action holds the only one: a query is failed at once, before any
 * start, and the shim asks the tool; it never waits behind the action. */
static void test_query_not_behind_an_action_when_attach_fails(void **state)
{
	struct shim_bg ck;
	FILE *f;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	/* Workers started from now on (the first is attached: the daemon said
	 * ready) read a case whose cuInit fails. */
	f = fopen(d.casefile, "a");
	assert_non_null(f);
	fputs("libcuda-init fail 100\n", f);
	fclose(f);
	lock(100);
	checkpoint_running(&ck, "100");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
	assert_true(hd_log_time(&d, "checkpoint-end", 100, 0) < 0); /* answered while it runs */
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1); /* the tool answered */
	assert_int_equal(hd_shim_wait(&ck).status, 0);
}

/* How the shim fails a started action: non-zero, the tool's words, the
 * reason, and never the tool. */
static void expect_unknown(struct shim_run r, int pid, const char *op)
{
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "not run again"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	assert_int_equal(driver_calls(op, pid), 1);
}

/* The daemon's own deadline cuts a started checkpoint: "unknown", one call. */
static void test_once_past_the_daemon_deadline(void **state)
{
	char shim_log[400];
	struct shim_run r;

	(void)state;
	hd_start(&d, ARGS("--actions", "--action-timeout", "0.3"));
	lock(100);
	snprintf(shim_log, sizeof(shim_log), "%s/shim.log", d.dir);
	setenv("RTID_SHIM_LOG", shim_log, 1);
	r = hd_shim(&d, NULL, ARGS("--action", "checkpoint", "--pid", "100"));
	unsetenv("RTID_SHIM_LOG");
	expect_unknown(r, 100, "checkpoint");
	/* The daemon answered: it could not tell, the answer was not lost; the
	 * shim's log keeps the daemon's words. */
	/* Its reason is the daemon's name for what happened, not its words. */
	assert_non_null(strstr(r.out, "rtid serve started it and could not tell its outcome: timeout; "));
	assert_null(strstr(r.out, "the answer was lost"));
	assert_non_null(strstr(slurp(shim_log), "checkpoint --pid 100 started, outcome unknown "
			       "(started, outcome unknown: "));
	assert_true(hd_said(&d, "past its deadline"));
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n"); /* serves on */
}

/* The worker dies in the middle of a checkpoint: "unknown", one call. */
static void test_once_worker_crash(void **state)
{
	(void)state;
	setenv("RTID_MOCK_FAULT_OPS", "checkpoint", 1);
	hd_start(&d, ARGS("--actions"));
	lock(400);
	expect_unknown(hd_shim(&d, NULL, ARGS("--action", "checkpoint", "--pid", "400")), 400,
		       "checkpoint");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
}

/* The daemon is killed mid-action: the connection is lost after "started". */
static void test_once_daemon_killed(void **state)
{
	struct shim_bg ck;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	lock(100);
	checkpoint_running(&ck, "100");
	kill(d.pid, SIGKILL);
	waitpid(d.pid, NULL, 0);
	d.pid = -1;
	expect_unknown(hd_shim_wait(&ck), 100, "checkpoint");
}

/* SIGTERM mid-action: the daemon lets the action end and answers it, then
 * exits 0; nobody runs it again. The checkpoint takes longer than the grace
 * a query gets at a stop (5 s): an action is never cut by the stop. */
static void test_stop_finishes_the_action(void **state)
{
	struct shim_bg ck;
	struct shim_run r;

	(void)state;
	setenv("RTID_MOCK_SLOW_S", "6", 1);
	hd_start(&d, ARGS("--actions"));
	lock(100);
	checkpoint_running(&ck, "100");
	assert_int_equal(hd_stop(&d), 0);
	r = hd_shim_wait(&ck);
	assert_string_equal(r.out, "");
	assert_int_equal(r.status, 0);
	assert_true(hd_log_time(&d, "checkpoint-end", 100, 0) > 0);
	assert_int_equal(driver_calls("checkpoint", 100), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The shim's own wait runs out after "started" (the daemon frozen): it
 * fails, it does not run the tool. */
static void test_once_shim_wait_after_start(void **state)
{
	struct shim_bg ck;
	struct shim_run r;
	char deadline[32];

	(void)state;
	snprintf(deadline, sizeof(deadline), "%g", 1 * time_factor());
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline));
	lock(100);
	checkpoint_running(&ck, "100");
	kill(d.pid, SIGSTOP);
	r = hd_shim_wait(&ck);
	kill(d.pid, SIGCONT);
	expect_unknown(r, 100, "checkpoint");
	assert_non_null(strstr(r.out, "the answer was lost"));
}

/* The shim's own wait runs out before the start (the daemon frozen with the
 * request still unread): the shim cancels and runs the tool, and the daemon,
 * thawed, never starts it. */
static void test_cancel_before_start(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	setenv("RTID_SERVICE_ACTION_TIMEOUT", "0.3", 1);
	kill(d.pid, SIGSTOP);
	hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "100", "--timeout", "1000"));
	kill(d.pid, SIGCONT);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	/* Served after the cancelled one was read: it has been seen by now. */
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 200, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(driver_calls("lock", 100), 0);
}

/* A client of protocol 1 has no "started": its actions are refused before
 * any start (so its fallback runs them once), its queries still answered. */
static void test_protocol_1_client(void **state)
{
	char buf[256];
	int fd;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	fd = hd_connect_raw(d.sock);
	assert_int_equal(send(fd, "hello 1", 7, 0), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "hello 1 actions");
	assert_int_equal(send(fd, "lock 100 1000", 13, 0), 13);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "error lock 100 protocol-1 actions need protocol 2; not started");
	assert_int_equal(send(fd, "get-restore-tid 100", 19, 0), 19);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "tid get-restore-tid 100 101");
	close(fd);
	assert_int_equal(driver_calls("lock", 100), 0);
}

/* A raw connection that greets with hello (version v; 0: no greeting sent). */
static int greeted(int v)
{
	char msg[32], buf[64];
	int fd = hd_connect_raw(d.sock), n;

	assert_true(fd >= 0);
	if (v == 0)
		return fd;
	n = snprintf(msg, sizeof(msg), "hello %d", v);
	assert_int_equal(send(fd, msg, (size_t)n, 0), n);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	return fd;
}

/* What ends a connection and what does not: status only in protocol 2 (to
 * protocol 1 it is a malformed request); an unknown version refused with
 * the one spoken; a message longer than any allowed; a second request while
 * one is open. The daemon answers others all along. */
static void test_what_ends_a_connection(void **state)
{
	struct rtid__svc_ans a;
	char buf[512];
	int fd;

	(void)state;
	hd_start(&d, ARGS("--actions", "--timeout", "600")); /* the get-state waits for a checkpoint */
	fd = greeted(1);
	assert_int_equal(send(fd, "status", 6, 0), 6);
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	fd = greeted(2);
	assert_int_equal(send(fd, "statux", 6, 0), 6);
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	fd = greeted(0);
	assert_int_equal(send(fd, "hello 0", 7, 0), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "refused 3 version");
	close(fd);
	fd = greeted(2);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(send(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	/* A second request while the first runs (the stand-in's checkpoint is
	 * slow): the connection ends; the checkpoint runs on. */
	lock(300);
	fd = greeted(2);
	assert_int_equal(send(fd, "checkpoint 300", 14, 0), 14);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	/* Its deadline in ms: the default action timeout, 600 s. */
	assert_string_equal(buf, "started checkpoint 300 600000");
	assert_int_equal(send(fd, "get-state 300", 13, 0), 13);
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	expect_shim(ARGS("--get-state", "--pid", "300"), 0, "checkpointed\n");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 200, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
}

/* A flood of bad clients: the daemon serves on, and its log does not grow
 * with the flood. */
static void test_flood_log_is_bounded(void **state)
{
	struct rtid__svc_ans a;
	char buf[64];

	(void)state;
	hd_start(&d, NULL);
	for (int i = 0; i < 60; i++) {
		int fd = hd_connect_raw(d.sock);

		assert_true(fd >= 0);
		assert_int_equal(send(fd, "hello 2", 7, 0), 7);
		assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
		assert_int_equal(send(fd, "nonsense", 8, 0), 8);
		assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
		close(fd);
	}
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(count_lines(d.stderr_path) < 15, true);
	/* Denials in a flood (a number nothing has, asked 200 times): each is
	 * answered, and the log says a few and how many it left out. */
	for (int i = 0; i < 200; i++) {
		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 99999, 0, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_DENIED);
	}
	assert_int_equal(count_lines(d.stderr_path) < 25, true);
}

/* One uid other than root holds at most --max-per-uid connections. */
static void test_per_uid_limit(void **state)
{
	int p[2], st;
	char got[3] = { 0 };
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(chmod(d.dir, 0711), 0); /* nobody may reach the socket */
	hd_start(&d, ARGS("--group", "65534", "--max-per-uid", "2"));
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd[3];
		char buf[64];

		if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(3);
		for (int i = 0; i < 3; i++) {
			fd[i] = hd_connect_raw(d.sock);
			buf[0] = '\0';
			/* A refused one may be closed before its greeting goes out. */
			if (fd[i] >= 0) {
				send(fd[i], "hello 2", 7, MSG_NOSIGNAL);
				hd_recv(fd[i], buf, sizeof(buf), 5);
			}
			got[i] = !strcmp(buf, "hello 2 queries") ? 'y' : !strcmp(buf, "refused 2 busy") ? 'n' : '?';
		}
		_exit(write(p[1], got, 3) == 3 ? 0 : 4);
	}
	close(p[1]);
	assert_int_equal(read(p[0], got, 3), 3);
	close(p[0]);
	waitpid(pid, &st, 0);
	assert_int_equal(st, 0);
	assert_memory_equal(got, "yyn", 3);
	assert_true(hd_said(&d, "uid 65534 holds 2 connections"));
	{
		struct rtid__svc_ans a;

		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0); /* root: served */
	}
}

/* CPU seconds the process has used (utime + stime). */
static double cpu_of(pid_t pid)
{
	char path[64];
	const char *stat, *p;
	unsigned long long ut, st;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = slurp(path);
	p = strrchr(stat, ')');
	assert_non_null(p);
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	for (int i = 0; i < 12; i++)
		p = strchr(p + 1, ' ');
	ut = strtoull(p + 1, (char **)&p, 10);
	st = strtoull(p + 1, NULL, 10);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Out of fds: accept fails with EMFILE while the connection waits; the
 * daemon rests instead of spinning, says so, and serves it once fds are
 * back. */
static void test_accept_out_of_fds(void **state)
{
	struct rlimit low, old;
	char buf[64];
	double before;
	int fd;

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, NULL, &old), 0);
	low.rlim_cur = 3; /* below every fd it holds: the next one fails */
	low.rlim_max = old.rlim_max;
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &low, NULL), 0);
	fd = hd_connect_raw(d.sock);
	assert_true(fd >= 0);
	assert_int_equal(send(fd, "hello 2", 7, 0), 7);
	before = cpu_of(d.pid);
	poll(NULL, 0, 1000); /* a measurement window, not a wait for anything */
	assert_true(cpu_of(d.pid) - before < 0.3); /* resting, not spinning */
	assert_true(hd_said(&d, "cannot accept"));
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &old, NULL), 0);
	assert_true(hd_recv(fd, buf, sizeof(buf), 10 * time_factor()) > 0);
	assert_string_equal(buf, "hello 2 queries");
	close(fd);
}

/* rtid serve status with the given format option: its output. */
static const char *status_of(const char *fmt)
{
	static char out[8192];
	char *argv[] = { "rtid", "serve", "status", (char *)fmt, "--socket", d.sock, NULL };

	assert_int_equal(plugin_call(env_path("RTID_BIN"), argv, NULL, out, sizeof(out)), 0);
	return out;
}

/* What an operator sees: a log line per request, the counters of rtid serve
 * status (words, JSON, Prometheus), and the shim's log of every call with
 * the path it took, successes included. */
static void test_operator_view(void **state)
{
	char shim_log[400];
	json_t *o;

	(void)state;
	snprintf(shim_log, sizeof(shim_log), "%s/shim.log", d.dir);
	setenv("RTID_SHIM_LOG", shim_log, 1);
	hd_start(&d, ARGS("--actions"));
	expect_shim(ARGS("--get-restore-tid", "--pid", "100"), 0, "101\n");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 0, "201\n");
	lock(100);
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "locked\n");
	{
		struct rtid__svc_ans a;

		/* Its worker dies on it: another outcome of the same operation. */
		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 400, 0, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_ERROR);
	}
	unsetenv("RTID_SHIM_LOG");
	{
		char said[64];

		/* The asker's uid: this test's, root or a user. */
		snprintf(said, sizeof(said), "get-restore-tid 100 for uid %u pid ",
			 (unsigned)geteuid());
		assert_true(hd_said(&d, said));
		snprintf(said, sizeof(said), "lock 100 for uid %u pid ", (unsigned)geteuid());
		assert_true(hd_said(&d, said));
	}
	assert_true(hd_said(&d, "driver attached (worker pid "));
	o = json_loads(status_of("--json"), 0, NULL);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(o,
			 "requests"), "get-restore-tid"), "tid")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(o,
			 "requests"), "lock"), "done")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(o,
			 "requests"), "get-restore-tid"), "error")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "worker_failures")), 1);
	assert_string_equal(json_string_value(json_object_get(o, "driver")), "580.159.03");
	assert_true(json_integer_value(json_object_get(o, "attaches")) >= 1);
	/* The latest attach's own time: the stand-in driver's attach is quick. */
	assert_true(json_is_number(json_object_get(o, "attach_seconds")));
	assert_true(json_number_value(json_object_get(o, "attach_seconds")) >= 0);
	assert_true(json_number_value(json_object_get(o, "attach_seconds")) < 30 * time_factor());
	assert_true(json_is_number(json_object_get(json_object_get(json_object_get(o,
			"latency_ms"), "get-restore-tid"), "p99")));
	json_decref(o);
	assert_non_null(strstr(status_of("--prometheus"),
			       "rtid_requests_total{op=\"get-restore-tid\",outcome=\"tid\"} 2\n"));
	assert_non_null(strstr(status_of("--json"), "\"uptime_seconds\""));
	/* The shim's note names what the daemon answered, each kind its word. */
	assert_non_null(strstr(slurp(shim_log), "get-restore-tid --pid 100: answered by rtid serve: tid 101, exit 0\n"));
	assert_non_null(strstr(slurp(shim_log), "lock --pid 100: answered by rtid serve: done, exit 0\n"));
	assert_non_null(strstr(slurp(shim_log), "get-state --pid 100: answered by rtid serve: state locked, exit 0\n"));
	assert_non_null(strstr(slurp(shim_log), "Z ")); /* each line stamped with the time (UTC) */
}

/* --quiet: no line per request. */
static void test_quiet(void **state)
{
	(void)state;
	hd_start(&d, ARGS("--quiet"));
	expect_shim(ARGS("--get-restore-tid", "--pid", "100"), 0, "101\n");
	assert_false(hd_said(&d, "get-restore-tid 100 for uid"));
	assert_non_null(strstr(status_of("--json"), "\"tid\": 1"));
}

/* The lowest fd number the process does not hold. */
static int lowest_free_fd(pid_t pid)
{
	char path[64];
	int fd = 0;

	for (;; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (access(path, F_OK) < 0)
			return fd;
	}
}

/* Stopped while an accept pause had begun and an action runs on: the loop
 * waits for the action without spinning, then exits 0. */
static void test_stop_after_an_accept_pause(void **state)
{
	struct rlimit low, old;
	struct shim_bg ck;
	double before;
	int fd, st;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	lock(100);
	checkpoint_running(&ck, "100");
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, NULL, &old), 0);
	low.rlim_cur = (rlim_t)lowest_free_fd(d.pid);
	low.rlim_max = old.rlim_max;
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &low, NULL), 0);
	fd = hd_connect_raw(d.sock);
	assert_true(fd >= 0);
	for (int i = 0; i < 500 && !hd_said(&d, "cannot accept"); i++)
		poll(NULL, 0, 10); /* the daemon's log has no signal to wait on */
	assert_true(hd_said(&d, "cannot accept"));
	kill(d.pid, SIGTERM);
	for (int i = 0; i < 500 && !hd_said(&d, "stopping"); i++)
		poll(NULL, 0, 10);
	before = cpu_of(d.pid);
	poll(NULL, 0, 500); /* a measurement window */
	assert_true(cpu_of(d.pid) - before < 0.15);
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &old, NULL), 0); /* for its exit */
	assert_int_equal(hd_shim_wait(&ck).status, 0);
	while (waitpid(d.pid, &st, 0) < 0 && errno == EINTR)
		;
	d.pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
}

/* poll itself fails (the fd limit lowered below the fds it watches): the
 * daemon pauses between tries, says so once in a while, and still stops on
 * SIGTERM, exiting 0. */
static void test_poll_failure_still_stops(void **state)
{
	struct rlimit low = { 1, 1 }, old;
	char asan[512], *saved = NULL;
	double before;
	int st, fd;

	(void)state;
	/* LeakSanitizer opens /proc/PID/task at exit, and the limit below
	 * leaves it no fd if the daemon exits before the test gives them back
	 * (a race the daemon may win): its leak check is left to the other stops. */
	if (getenv("RTID_UNDER_SANITIZER")) {
		const char *a = getenv("ASAN_OPTIONS");

		snprintf(asan, sizeof(asan), "%s%sdetect_leaks=0", a ? a : "", a && *a ? ":" : "");
		saved = a ? strdup(a) : NULL;
		setenv("ASAN_OPTIONS", asan, 1);
	}
	hd_start(&d, NULL);
	if (getenv("RTID_UNDER_SANITIZER")) {
		if (saved)
			setenv("ASAN_OPTIONS", saved, 1);
		else
			unsetenv("ASAN_OPTIONS");
		free(saved);
	}
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, NULL, &old), 0);
	low.rlim_max = old.rlim_max;
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &low, NULL), 0);
	fd = hd_connect_raw(d.sock); /* wakes the loop, whose next poll fails */
	assert_true(fd >= 0);
	for (int i = 0; i < 500 && !hd_said(&d, "poll: "); i++)
		poll(NULL, 0, 10); /* the daemon's log has no signal to wait on */
	assert_true(hd_said(&d, "poll: "));
	before = cpu_of(d.pid);
	poll(NULL, 0, 500); /* a measurement window */
	assert_true(cpu_of(d.pid) - before < 0.15);
	kill(d.pid, SIGTERM);
	for (int i = 0; i < 500 && !hd_said(&d, "stopping"); i++)
		poll(NULL, 0, 10);
	assert_true(hd_said(&d, "stopping")); /* heard while poll still fails */
	/* Fds back for its exit (a coverage build writes its counts then). */
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, &old, NULL), 0);
	while (waitpid(d.pid, &st, 0) < 0 && errno == EINTR)
		;
	d.pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
}

/* --max-clients is fitted to the fd limit at start, and says so; a limit
 * with no room for a client beside the workers stops it with the reason. */
static void test_max_clients_fits_fd_limit(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	hd_start_limited(&d, 48, false, ARGS("--max-clients", "200", "--workers", "4"));
	assert_true(hd_said(&d, "--max-clients 200 does not fit the fd limit (RLIMIT_NOFILE 48): "
			   "serving at most 20 clients"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(hd_stop(&d), 0);
	{
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "ulimit -n 20 && exec %s serve --socket %s --proc %s "
			 "--workers 4 2>>%s", env_path("RTID_BIN"), d.sock, d.proc, d.stderr_path);
		assert_int_equal(WEXITSTATUS(system(cmd)), 1);
	}
	assert_true(hd_said(&d, "leaves no room for a client beside 4 workers"));
}

/* A soft limit too low under a hard one high enough is raised: no fewer
 * clients, nothing said. */
static void test_soft_fd_limit_raised(void **state)
{
	struct rlimit now;

	(void)state;
	hd_start_limited(&d, 48, true, ARGS("--max-clients", "200", "--workers", "4"));
	assert_false(hd_said(&d, "does not fit the fd limit"));
	assert_int_equal(prlimit(d.pid, RLIMIT_NOFILE, NULL, &now), 0);
	assert_true(now.rlim_cur >= 200 + 3 * 4);
}

/* Killed workers stuck in the kernel (a hung driver) fill a slot's list of
 * those to reap: the slot then starts no new worker, and the daemon never
 * blocks waiting for one (it did, in a blocking waitpid, at the ninth). The
 * stuck ones here are children in our own group, which killpg of their
 * number cannot reach, as SIGKILL cannot end a task stuck in the kernel. */
static void test_stuck_workers_never_block(void **state)
{
	struct serve_cfg cfg = { .worker = "/nonexistent/rtid-cuda-worker", .libcuda = "x",
				 .proc_root = "/nonexistent" };
	struct spool p;
	pid_t kids[8];

	(void)state;
	assert_int_equal(sp_init(&p, 1), 0);
	for (int i = 0; i < 8; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0)
			for (;;)
				pause();
		p.w[0].reap[i] = kids[i];
	}
	assert_int_equal(sw_start(&p, &p.w[0], &cfg), -EBUSY);
	assert_int_equal(p.w[0].state, SW_DOWN);
	assert_int_equal(p.failures, 0);
	for (int i = 0; i < 8; i++) {
		siginfo_t si;

		kill(kids[i], SIGKILL);
		assert_int_equal(waitid(P_PID, (id_t)kids[i], &si, WEXITED | WNOWAIT), 0);
	}
	/* Gone: reaped, and the slot may start again (here the worker is
	 * missing: a spawn that fails, or under valgrind a child that exits 127). */
	{
		int r = sw_start(&p, &p.w[0], &cfg);

		assert_true(r == 0 || r == -ENOENT);
		for (int i = 0; i < 8; i++)
			assert_int_equal(p.w[0].reap[i], 0);
		if (r == 0)
			sw_stop(&p, &p.w[0], SW_KILL);
	}
	sp_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_long_action_holds_up_no_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queued_requests_keep_their_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiting_requests_all_handed_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_spare_beside_an_idle_worker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_started_deadline_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiting_query_holds_back_its_action, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_query_waits_for_a_running_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queries_start_no_spare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_waits_past_the_query_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_unheard_never_starts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_leaves_mid_action, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_waiting_past_its_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_query_is_no_action_for_the_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_not_behind_an_action_when_attach_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_once_past_the_daemon_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_once_worker_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_once_daemon_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_finishes_the_action, setup, teardown),
		cmocka_unit_test_setup_teardown(test_once_shim_wait_after_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_before_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol_1_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_ends_a_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_log_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_uid_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accept_out_of_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_clients_fits_fd_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_soft_fd_limit_raised, setup, teardown),
		cmocka_unit_test(test_stuck_workers_never_block),
		cmocka_unit_test_setup_teardown(test_stop_after_an_accept_pause, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll_failure_still_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_operator_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_by_thread_waits_for_its_process, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
