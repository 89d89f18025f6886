/* rtid serve as its users meet it: the shim answered by the daemon exactly as
 * the real tool answers, one attach for many shim processes, the worker kept
 * right (crash, hang, driver change), clients that misbehave, who may ask
 * what, and a clean stop. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>
#include <poll.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "helpers.h"
#include "plugin-call.h"
#include "rtid.h"
#include "serve-harness.h"

#define CASE_HEAD "title serve\nproves serve\ndriver 580.159.03\nbackend api\n"
#define TOOL_CALLS "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""

static const char basic_case[] = CASE_HEAD
	"task 100 100 python3\ntask 100 101 cuda00001400006\n"
	"task 500 500 python3\ntask 500 501 cuda00001400006\n"
	"answer 100 tid 101\nanswer 200 none\nanswer 300 crash 11\nanswer 400 hang\n"
	"answer 500 tid 501\nanswer 600 exit 700\nanswer 700 exit 77\nanswer 800 not-initialized\n"
	"answer 900 tid 0\n"
	"expect driver 100 tid=101\n";
static const int basic_pids[] = { 100, 200, 300, 400, 500, 600, 700, 800, 900, 0 };

static struct daemon d;

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, basic_case, basic_pids);
	return 0;
}

/* The scenarios that have their own case file in cases/. */
#define CASE_SETUP(name, file)                               \
	static int name(void **state)                        \
	{                                                    \
		(void)state;                                 \
		hd_prepare(&d, "@" file, basic_pids);        \
		return 0;                                    \
	}
CASE_SETUP(setup_crash, "serve-worker-crash")
CASE_SETUP(setup_hang, "serve-worker-hang")
CASE_SETUP(setup_change, "serve-driver-change")
CASE_SETUP(setup_silent, "serve-silent-client")
CASE_SETUP(setup_missing, "serve-socket-missing")
CASE_SETUP(setup_one, "serve-one-attach")
CASE_SETUP(setup_noattach, "serve-attach-fails")
CASE_SETUP(setup_noattach_again, "serve-attach-fails-after-service")
CASE_SETUP(setup_query_error, "serve-query-driver-error")

static int teardown(void **state)
{
	(void)state;
	hd_cleanup(&d);
	return 0;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void expect_shim(const char *const *args, int status, const char *out)
{
	struct shim_run r = hd_shim(&d, NULL, args);

	assert_string_equal(r.out, out);
	assert_int_equal(r.status, status);
}

/* The whole plugin sequence of one process, answered by the daemon alone. */
static void test_shim_answers_as_the_tool(void **state)
{
	(void)state;
	hd_start(&d, ARGS("--actions"));
	expect_shim(ARGS("--get-restore-tid", "--pid", "100"), 0, "101\n");
	expect_shim(ARGS("--pid", "100", "--get-restore-tid"), 0, "101\n");
	expect_shim(ARGS("--get-restore-tid", "--pid", "200"), 1,
		    "Could not get restore thread ID for process ID 200: \"invalid argument\"\n");
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "running\n");
	expect_shim(ARGS("--action", "lock", "--pid", "100", "--timeout", "10000"), 0, "");
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "locked\n");
	expect_shim(ARGS("--action", "checkpoint", "--pid", "100"), 0, "");
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "checkpointed\n");
	/* The driver's own error, with its exit status truncated as the tool
	 * does; the shim's log names the error. */
	{
		char shim_log[400];

		snprintf(shim_log, sizeof(shim_log), "%s/shim.log", d.dir);
		setenv("RTID_SHIM_LOG", shim_log, 1);
		expect_shim(ARGS("--action", "checkpoint", "--pid", "100"), 401 & 0xff,
			    "Could not checkpoint process ID 100: \"the operation cannot be "
			    "performed in the present state\"\n");
		unsetenv("RTID_SHIM_LOG");
		assert_non_null(strstr(slurp(shim_log), "checkpoint --pid 100: answered by rtid serve: "
				       "driver error CUDA_ERROR_ILLEGAL_STATE, exit 145\n"));
	}
	expect_shim(ARGS("--action", "restore", "--pid", "100"), 0, "");
	expect_shim(ARGS("--action", "unlock", "--pid", "100"), 0, "");
	/* --timeout 0: the driver's "no timeout" (timeoutMs 0) reaches it as 0. */
	expect_shim(ARGS("--action", "lock", "--pid", "100", "--timeout", "0"), 0, "");
	expect_shim(ARGS("--action", "unlock", "--pid", "100"), 0, "");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	/* "Success" with tid 0 is no answer: the daemon says so, the tool is asked. */
	{
		struct rtid__svc_ans a;

		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 900, 0, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_ERROR);
		assert_string_equal(a.name, "bad-output");
		assert_string_equal(a.text, "the driver answered 0"); /* words for the log */
	}
	/* One attach, and a spare started while an action ran. */
	assert_in_range(hd_log_count(&d, "cuInit"), 1, 2);
	/* Lock's timeout reached the driver in its argument struct. */
	assert_int_equal(hd_log_count(&d, "timeout 10000"), 1);
	assert_int_equal(hd_log_count(&d, "\"timeout 0\""), 1);
	assert_int_equal(hd_stop(&d), 0);
	assert_int_equal(access(d.sock, F_OK), -1); /* the socket it made is gone */
}

/* A query the driver failed (an error, not its "none": 700 illegal
 * address, 77 a code without a string) is the real tool's to answer, by its
 * own attach: read as CRIU reads it, a failure would leave a CUDA process
 * out of the dump. The stand-in tool says "error N". */
static void test_query_error_reaches_the_tool(void **state)
{
	(void)state;
	hd_start(&d, NULL);
	expect_shim(ARGS("--get-restore-tid", "--pid", "100"), 0, "101\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	{
		char shim_log[400];

		snprintf(shim_log, sizeof(shim_log), "%s/shim.log", d.dir);
		setenv("RTID_SHIM_LOG", shim_log, 1);
		expect_shim(ARGS("--get-restore-tid", "--pid", "600"), 700 & 0xff,
			    "Could not get restore thread ID for process ID 600: \"error 700\"\n");
		unsetenv("RTID_SHIM_LOG");
		/* Why the tool was asked: the driver's error, by its name. */
		assert_non_null(strstr(slurp(shim_log), ": get-restore-tid --pid 600: driver error "
				       "CUDA_ERROR_ILLEGAL_ADDRESS: to the real tool\n"));
	}
	expect_shim(ARGS("--get-restore-tid", "--pid", "700"), 77,
		    "Could not get restore thread ID for process ID 700: \"error 77\"\n");
	/* One tool run each, whose answer CRIU reads: rtid's own resolver is not
	 * asked first (it would ask the same tool, one more attach). */
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 2);
	/* The daemon's answer carries the driver's code and words, which the
	 * shim's log shows beside the tool's answer. */
	{
		struct rtid__svc_ans a;

		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 600, 0, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_CUERR);
		assert_int_equal(a.value, 700);
		assert_string_equal(a.name, "CUDA_ERROR_ILLEGAL_ADDRESS");
		assert_string_equal(a.text, "an illegal memory access was encountered");
	}
}

/* Many separate shim processes, as CRIU spawns them: one attach in all. */
static void test_one_attach_for_many_shims(void **state)
{
	(void)state;
	hd_start(&d, NULL);
	for (int i = 0; i < 25; i++)
		expect_shim(ARGS("--get-restore-tid", "--pid", i % 2 ? "100" : "500"), 0,
			    i % 2 ? "101\n" : "501\n");
	assert_int_equal(hd_log_count(&d, "cuInit"), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* Without the daemon's socket the shim is what it was: the real tool answers. */
static void test_socket_missing_reaches_the_tool(void **state)
{
	char nowhere[400];
	struct shim_run r;

	(void)state;
	snprintf(nowhere, sizeof(nowhere), "%s/none.sock", d.dir);
	r = hd_shim(&d, nowhere, ARGS("--get-restore-tid", "--pid", "100"));
	assert_string_equal(r.out, "101\n");
	assert_int_equal(r.status, 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	/* A socket nobody listens on: the same. */
	hd_start(&d, NULL);
	assert_int_equal(kill(d.pid, SIGKILL), 0);
	waitpid(d.pid, NULL, 0);
	d.pid = -1;
	r = hd_shim(&d, NULL, ARGS("--get-restore-tid", "--pid", "100"));
	assert_string_equal(r.out, "101\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 2);
}

/* A crash in the middle of a request: an error for it, never a tid; the shim
 * asks the real tool; the next request gets a new attach. */
static void test_worker_crash_mid_request(void **state)
{
	struct rtid__svc_ans a;
	struct shim_run r;
	int first;

	(void)state;
	hd_start(&d, NULL);
	first = hd_log_self(&d, "cuInit");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 300, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "worker-crashed");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, 101);
	assert_int_equal(hd_log_count(&d, "cuInit"), 2);
	assert_int_not_equal(hd_log_self(&d, "cuInit"), first);
	assert_int_equal(kill(first, 0), -1); /* the dead one was reaped */
	/* Through the shim: the tool's own answer, here its crash. */
	r = hd_shim(&d, NULL, ARGS("--get-restore-tid", "--pid", "300"));
	assert_int_equal(r.status, 128 + SIGSEGV);
	assert_true(hd_log_count(&d, TOOL_CALLS) >= 1); /* the shim's own query, then the tool */
	assert_true(hd_said(&d, "driver API worker died"));
}

/* The worker crashes while a process the driver started (a plain fork)
 * still holds the worker's socket: the daemon sees the exit by the worker's
 * pidfd and answers worker-crashed at once, not at the request's deadline;
 * the helper, in the worker's process group, goes with it. */
static void test_worker_crash_with_a_helper(void **state)
{
	struct rtid__svc_ans a;
	double t0;
	int helper;

	(void)state;
	setenv("RTID_MOCK_HELPER", "1", 1);
	hd_start(&d, ARGS("--timeout", "30"));
	unsetenv("RTID_MOCK_HELPER");
	t0 = rtid__now();
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 300, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "worker-crashed");
	assert_true(rtid__now() - t0 < 10 * time_factor());
	helper = hd_log_self(&d, "\"helper\"");
	assert_true(helper > 0);
	assert_int_equal(hd_stop(&d), 0);
	/* Killed with the worker's group: its pidfd says it exited (or it is
	 * gone already). */
	{
		int fd = (int)syscall(SYS_pidfd_open, helper, 0);
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (fd >= 0) {
			assert_int_equal(poll(&p, 1, (int)(5000 * time_factor())), 1);
			close(fd);
		}
	}
}

/* A worker let go (the daemon's stop) whose driver started a helper: the
 * worker exits, and the helper left in its process group goes with it. */
static void test_stop_takes_a_helper_along(void **state)
{
	struct rtid__svc_ans a;
	int helper, fd;

	(void)state;
	setenv("RTID_MOCK_HELPER", "1", 1);
	hd_start(&d, NULL);
	unsetenv("RTID_MOCK_HELPER");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	helper = hd_log_self(&d, "\"helper\"");
	assert_true(helper > 0);
	fd = (int)syscall(SYS_pidfd_open, helper, 0);
	assert_int_equal(hd_stop(&d), 0);
	/* Killed by the daemon before its exit: its pidfd says it exited
	 * (SIGKILL lands a moment after kill() returns). Valgrind has no
	 * pidfds: there the test ends here. */
	if (fd >= 0) {
		assert_int_equal(poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1,
				      (int)(5000 * time_factor())), 1);
		close(fd);
	}
}

/* Started with its standard fds closed (a careless init script): the fds it
 * opens (socket, signalfd, the worker's socketpair) must not take 0-2, where
 * the worker's standard streams go; it attaches and answers as ever. */
static void test_started_with_std_fds_closed(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "exec \"$0\" \"$@\" <&- >&- 2>&-", env_path("RTID_BIN"),
			       "serve", "--socket", d.sock, "--proc", d.proc, "--libcuda",
			       env_path("MOCK_LIBCUDA"), NULL };
	struct rtid__svc_ans a;

	(void)state;
	d.pid = serve_spawn(argv, -1, 20 * time_factor());
	assert_true(d.pid > 0);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, 101);
}

/* A killed worker is never waited for: it is left and reaped later by the
 * loop, while the daemon goes on serving: never a zombie left, never a
 * stalled loop. */
static void test_killed_worker_reaped_later(void **state)
{
	struct rtid__svc_ans a;
	int hung;

	(void)state;
	hd_start(&d, ARGS("--timeout", "0.3"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 400, 0, &a), 0);
	assert_string_equal(a.name, "timeout");
	hung = hd_log_self(&d, "cuInit");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	/* One more round of the loop after that answer has reaped it. */
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(kill(hung, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/* A worker that hangs is killed at the request's deadline. Its answer goes
 * out at once, not after its death: the death follows (its pidfd says so). */
static void test_worker_hang_past_deadline(void **state)
{
	struct rtid__svc_ans a;
	int hung, fd;

	(void)state;
	hd_start(&d, ARGS("--timeout", "0.3"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 400, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "timeout");
	hung = hd_log_self(&d, "cuInit");
	fd = (int)syscall(SYS_pidfd_open, hung, 0);
	if (fd >= 0) { /* else reaped already, or valgrind (no pidfds) */
		assert_int_equal(poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1,
				      (int)(5000 * time_factor())), 1);
		close(fd);
	}
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_true(hd_said(&d, "past its deadline; killing the worker"));
}

/* A driver that cannot be attached: errors at once, the tool answers. */
static void test_attach_fails(void **state)
{
	struct rtid__svc_ans a;
	struct shim_run r;

	(void)state;
	hd_start(&d, NULL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_ERROR);
		assert_string_equal(a.name, "worker-failed");
	}
	r = hd_shim(&d, NULL, ARGS("--get-restore-tid", "--pid", "100"));
	assert_string_equal(r.out, "101\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	assert_true(hd_said(&d, "cuInit failed"));
	assert_true(hd_said(&d, "a new attach after a backoff"));
	/* The backoff doubles: from the second failed attach on, the next is
	 * at least 0.2 s away. Counted from however many attaches there were
	 * by now (a slow run, valgrind's, may have made a third already). */
	{
		double t3 = -1, t4 = -1;
		int n = hd_log_count(&d, "cuInit"), n0 = n;

		assert_true(n >= 2);
		for (int i = 0; i < 1000 * time_factor() && t4 < 0; i++) {
			double t0 = rtid__now();

			assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
			assert_int_equal(a.kind, RTID__SVC_ERROR);
			assert_string_equal(a.name, "worker-failed");
			if (hd_log_count(&d, "cuInit") > n) {
				n++;
				if (n == n0 + 1)
					t3 = t0;
				else
					t4 = rtid__now();
			}
			poll(NULL, 0, 10);
		}
		assert_int_equal(n, n0 + 2);
		assert_true(t4 - t3 >= 0.2);
	}
}

/* The backoff is for failed attaches in a row: once a worker has served,
 * a failed attach is tried again at once, as after the first failure ever;
 * only a second failure in a row waits. */
static void test_backoff_forgotten_after_service(void **state)
{
	char gate[400];
	struct rtid__svc_ans a;

	(void)state;
	snprintf(gate, sizeof(gate), "%s/init-fails", d.dir);
	write_file(d.dir, "init-fails", "");
	setenv("RTID_MOCK_INIT_FAULT_WHILE", gate, 1);
	hd_start(&d, NULL);
	unsetenv("RTID_MOCK_INIT_FAULT_WHILE");
	/* The attach at the start fails: the first failure, no backoff. */
	for (int i = 0; i < 2000 * time_factor() && !hd_said(&d, "when needed"); i++)
		poll(NULL, 0, 5);
	assert_true(hd_said(&d, "cuInit failed"));
	unlink(gate);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID); /* attached, and served */
	assert_int_equal(a.value, 101);
	write_file(d.dir, "init-fails", "");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 300, 0, &a), 0);
	assert_string_equal(a.name, "worker-crashed"); /* the worker that served, gone */
	/* Its attach fails and is tried again at once; the second failure in
	 * a row backs off, and the request fails then. */
	assert_false(hd_said(&d, "a new attach after a backoff"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_string_equal(a.name, "worker-failed");
	assert_int_equal(hd_log_count(&d, "cuInit"), 4);
	assert_true(hd_said(&d, "a new attach after a backoff"));
}

/* A cuInit that never returns: cut at --attach-timeout, errors, no tid. */
static void test_attach_hangs(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	write_file(d.dir, "t.case", CASE_HEAD "libcuda-init hang\ntask 100 100 python3\n"
		   "answer 100 tid 101\nexpect driver 100 error=worker-failed\n");
	hd_start(&d, ARGS("--attach-timeout", "0.3"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "worker-failed");
	assert_true(hd_said(&d, "did not attach in time"));
}

/* A cuInit that crashes: the worker ends before it is ready; errors, no tid. */
static void test_attach_crashes(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	write_file(d.dir, "t.case", CASE_HEAD "libcuda-init crash 11\ntask 100 100 python3\n"
		   "answer 100 tid 101\nexpect driver 100 error=worker-failed\n");
	hd_start(&d, NULL);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "worker-failed");
	assert_true(hd_said(&d, "ended before it was ready"));
}

/* A driver that has the restore-tid query but not the state calls and
 * actions: those are "unsupported", and the shim asks the tool for them; an
 * action is refused before "started" (else the shim could not ask the tool,
 * and would fail it as of unknown outcome). */
static void test_driver_lacks_actions(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	hd_start(&d, ARGS("--actions", "--libcuda", env_path("MOCK_LIBCUDA_NOACT")));
	assert_int_equal(hd_ask(&d, RTID__OP_GET_STATE, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "unsupported");
	/* The words reach the shim's log: what the driver lacks, and for an
	 * action that it never started. */
	assert_string_equal(a.text, "this driver lacks get-state");
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, 100, 10, &a), 0);
	assert_string_equal(a.name, "unsupported");
	assert_string_equal(a.text, "this driver lacks the action; not started");
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, 100, 0, &a), 0);
	assert_string_equal(a.name, "unsupported");
	expect_shim(ARGS("--get-state", "--pid", "100"), 0, "running\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	expect_shim(ARGS("--get-restore-tid", "--pid", "100"), 0, "101\n");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
	expect_shim(ARGS("--action", "lock", "--pid", "100", "--timeout", "1000"), 0, "");
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 2);
}

/* A thread where a process is expected, as every entry point rules it: the
 * daemon refuses actions and get-restore-tid for it and answers get-state
 * (CRIU asks with the restore tid); the shim refuses an action on it as the
 * tool refuses an invalid pid, asking neither the daemon nor the real tool:
 * the driver never acts on a thread through rtid. */
static void test_thread_is_not_a_process(void **state)
{
	struct rtid__svc_ans a;
	struct shim_run r;

	(void)state;
	hd_start(&d, ARGS("--actions"));
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, 101, 1000, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DENIED);
	assert_non_null(strstr(a.text, "a thread, not a process"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 101, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DENIED);
	assert_int_equal(hd_ask(&d, RTID__OP_GET_STATE, 101, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_STATE);
	r = hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "101"));
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "Could not lock process ID 101: \"invalid argument\"\n");
	assert_int_equal(hd_log_count(&d, "\"mock\":\"libcuda\",\"event\":\"lock\""), 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The driver names a thread of another process (or 1): the daemon answers it
 * as an error, never as a tid, and the shim leaves the call to the real tool. */
static void test_tid_of_another_process(void **state)
{
	struct rtid__svc_ans a;

	(void)state;
	write_file(d.dir, "t.case", CASE_HEAD "task 100 100 python3\ntask 500 500 python3\n"
		   "task 500 501 cuda00001400006\nanswer 100 tid 501\nanswer 500 tid 1\n"
		   "expect driver 100 error=not-a-thread\n");
	hd_start(&d, NULL);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "not-a-thread");
	/* Its words say which wrong the driver did: they reach the log. */
	assert_string_equal(a.text, "the driver named tid 501, a thread of another process");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 500, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "not-a-thread");
	assert_string_equal(a.text, "the driver named tid 1, which is no thread of it");
}

/* The pid asked about is reused while the driver answers (the mock rewrites
 * its stat: a new start time): the daemon answers process-changed, never the
 * tid it got. Asked again, the new process is asked about, and answered. */
static void test_pid_reused_during_the_query(void **state)
{
	char path[600], text[512];
	struct rtid__svc_ans a;

	(void)state;
	stat_line(100, 1000, text, sizeof(text));
	write_file(d.proc, "100/stat", text);
	snprintf(path, sizeof(path), "%s/100/stat", d.proc);
	stat_line(100, 2000, text, sizeof(text));
	setenv("RTID_MOCK_REPLACE_FILE", path, 1);
	setenv("RTID_MOCK_REPLACE_TEXT", text, 1);
	hd_start(&d, NULL); /* its worker takes the two along */
	unsetenv("RTID_MOCK_REPLACE_FILE");
	unsetenv("RTID_MOCK_REPLACE_TEXT");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "process-changed");
	assert_string_equal(a.text, "process 100 exited or its pid was reused meanwhile");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, 101);
}

/* No worker program: worker-failed, and the daemon still answers. */
static void test_worker_missing(void **state)
{
	char *saved = strdup(env_path("RTID_WORKER"));
	struct rtid__svc_ans a;

	(void)state;
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	hd_start(&d, NULL);
	setenv("RTID_WORKER", saved, 1);
	free(saved);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "worker-failed");
	/* Under valgrind posix_spawn cannot report the failed exec: the worker
	 * then ends before it is ready instead. */
	assert_true(hd_said(&d, "cannot start the worker") ||
		    (getenv("RTID_UNDER_VALGRIND") && hd_said(&d, "ended before it was ready")));
}

/* Two requests read in the same pass while no worker can start (the worker
 * program is missing: a backoff of seconds) both fail in that pass: about
 * one process, the second, held behind the first, fails with it; about two
 * processes, both wait for a worker and grow fails each. Their clients ask
 * the tool at once, not at their own deadline or the backoff's end. */
static void test_held_request_fails_with_the_first(void **state)
{
	static const int pids[][2] = { { 100, 100 }, { 100, 200 } };
	char *saved = strdup(env_path("RTID_WORKER"));
	struct rtid__svc_conn c[2];
	struct rtid__svc_ans a;
	int st;

	(void)state;
	if (getenv("RTID_UNDER_VALGRIND")) {
		/* posix_spawn cannot report the failed exec there: no backoff. */
		free(saved);
		skip();
	}
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	hd_start(&d, ARGS("--timeout", "3"));
	setenv("RTID_WORKER", saved, 1);
	free(saved);
	for (size_t v = 0; v < sizeof(pids) / sizeof(pids[0]); v++) {
		/* Stopped, so that both requests wait in their sockets and are
		 * read in one pass when it goes on. */
		assert_int_equal(kill(d.pid, SIGSTOP), 0);
		assert_int_equal(waitpid(d.pid, &st, WUNTRACED), d.pid);
		assert_true(WIFSTOPPED(st));
		for (int i = 0; i < 2; i++) {
			struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = pids[v][i] };
			char buf[RTID__SVC_MSG_MAX];
			size_t n = rtid__svc_req_format(&q, buf);

			assert_int_equal(rtid__svc_open(d.sock, &c[i]), 0);
			assert_int_equal(send(c[i].fd, buf, n, 0), (ssize_t)n);
		}
		assert_int_equal(kill(d.pid, SIGCONT), 0);
		for (int i = 0; i < 2; i++) {
			char msg[RTID__SVC_MSG_MAX];
			int len;

			assert_int_equal(hd_recv(c[i].fd, msg, sizeof(msg), 20),
					 (int)strlen("hello 2 queries"));
			len = hd_recv(c[i].fd, msg, sizeof(msg), 20);
			assert_true(len > 0);
			assert_int_equal(rtid__svc_ans_parse(msg, (size_t)len, &a), 0);
			assert_int_equal(a.kind, RTID__SVC_ERROR);
			if (strcmp(a.name, "worker-failed")) /* not timeout */
				fail_msg("pids %d and %d: request %d answered %s", pids[v][0],
					 pids[v][1], i, a.name);
		}
		/* Closed only now: a hang-up would wake the daemon for the other. */
		rtid__svc_close(&c[0]);
		rtid__svc_close(&c[1]);
	}
	assert_true(hd_said(&d, "cannot start the worker"));
}

/* Two clients, the first one's call hangs: the second, about another
 * process, is answered by another worker meanwhile, not after the hang. */
static void test_queue_behind_a_hang(void **state)
{
	struct rtid__svc_req q1 = { .op = RTID__OP_RESTORE_TID, .pid = 400 };
	struct rtid__svc_req q2 = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
	struct rtid__svc_conn c1, c2;
	struct rtid__svc_ans a1, a2;
	char buf[64];
	size_t n;

	(void)state;
	hd_start(&d, ARGS("--timeout", "0.4"));
	assert_int_equal(rtid__svc_open(d.sock, &c1), 0);
	assert_int_equal(rtid__svc_open(d.sock, &c2), 0);
	n = rtid__svc_req_format(&q1, buf);
	assert_int_equal(send(c1.fd, buf, n, 0), (ssize_t)n);
	assert_int_equal(rtid__svc_call(&c2, &q2, rtid__now() + 20, &a2), 0);
	assert_int_equal(hd_recv(c1.fd, buf, sizeof(buf), 0), (int)strlen("hello 2 queries"));
	c1.greeted = false;
	assert_true(hd_recv(c1.fd, buf, sizeof(buf), 20) > 0); /* still hanging then */
	assert_int_equal(rtid__svc_ans_parse(buf, strlen(buf), &a1), 0);
	assert_int_equal(a1.kind, RTID__SVC_ERROR);
	assert_string_equal(a1.name, "timeout");
	assert_int_equal(a2.kind, RTID__SVC_TID);
	assert_int_equal(a2.value, 101);
	rtid__svc_close(&c1);
	rtid__svc_close(&c2);
}

/* A stop while a query hangs in the driver: the query has the stop's grace,
 * then its client is told shutting-down (not left without an answer), and
 * the daemon exits 0; a second stop signal meanwhile changes nothing, and a
 * request on a connection made before the stop is refused at once. */
static void test_stop_with_a_query_hanging(void **state)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 400 };
	struct rtid__svc_req q2 = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
	struct rtid__svc_conn c, c2;
	struct rtid__svc_ans a;
	char buf[256];
	size_t n;

	(void)state;
	hd_start(&d, ARGS("--timeout", "60"));
	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	n = rtid__svc_req_format(&q, buf);
	assert_int_equal(send(c.fd, buf, n, 0), (ssize_t)n);
	assert_int_equal(hd_recv(c.fd, buf, sizeof(buf), 20), (int)strlen("hello 2 queries"));
	hd_log_wait(&d, "start", 400, 0); /* in the driver now */
	assert_int_equal(rtid__svc_open(d.sock, &c2), 0);
	/* Accepted before the stop (its greeting read here): one still in
	 * the backlog when the stop begins is closed unanswered. */
	assert_int_equal(hd_recv(c2.fd, buf, sizeof(buf), 20), (int)strlen("hello 2 queries"));
	c2.greeted = true;
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	/* Its stderr is all that says the stop has begun: polled, bounded. */
	for (int i = 0; i < 2000 * time_factor() && !hd_said(&d, "rtid serve: stopping"); i++)
		poll(NULL, 0, 10);
	assert_true(hd_said(&d, "rtid serve: stopping"));
	/* A connection made before: a new request is refused at once. */
	assert_int_equal(rtid__svc_call(&c2, &q2, rtid__now() + 20, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "shutting-down");
	rtid__svc_close(&c2);
	assert_true(hd_recv(c.fd, buf, sizeof(buf), 20 * time_factor()) > 0);
	assert_int_equal(rtid__svc_ans_parse(buf, strlen(buf), &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "shutting-down");
	rtid__svc_close(&c);
	assert_int_equal(hd_stop(&d), 0);
	assert_true(hd_said(&d, "stopping"));
}

/* Whether the daemon has reaped pid (a worker it let go): waits for its exit
 * by its pidfd where there is one (not under valgrind, which lacks the call),
 * then asks again, each request a turn of the daemon's loop, until it is
 * gone or 10 s (scaled) have passed. */
static bool reaped_by_daemon(int pid)
{
	struct pollfd p = { .fd = (int)syscall(SYS_pidfd_open, pid, 0), .events = POLLIN };
	double end = rtid__now() + 10 * time_factor();
	struct rtid__svc_ans a;

	if (p.fd >= 0) {
		poll(&p, 1, (int)(5000 * time_factor()));
		close(p.fd);
	}
	do {
		if (hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a) < 0 || a.kind != RTID__SVC_TID)
			return false;
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
	} while (rtid__now() < end);
	return false;
}

/* A driver upgrade: the next answer comes from a new attach, and the old
 * one is let go: its worker exits and the daemon reaps it (how soon is the
 * worker's own exit, which a sanitizer's exit checks make slow, so it is
 * waited for, not assumed to come before the next answer). */
static void test_driver_version_change(void **state)
{
	struct rtid__svc_ans a;
	int old;

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	old = hd_log_self(&d, "cuInit");
	write_file(d.proc, "driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.44.01  Wed\n");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(hd_log_count(&d, "cuInit"), 2);
	assert_true(reaped_by_daemon(old));
	/* Unchanged since: no third attach. */
	assert_int_equal(hd_log_count(&d, "cuInit"), 2);
	/* The driver unloaded (no version file) is a change too. */
	{
		char path[400];

		snprintf(path, sizeof(path), "%s/driver/nvidia/version", d.proc);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(hd_log_count(&d, "cuInit"), 3);
	assert_true(hd_said(&d, "driver version changed"));
}

/* A client that connects and sends nothing delays nobody, and is closed at
 * its own deadline. */
static void test_silent_client(void **state)
{
	struct rtid__svc_ans a;
	char buf[300];
	int silent, slow;

	(void)state;
	hd_start(&d, ARGS("--client-timeout", "1"));
	silent = hd_connect_raw(d.sock);
	slow = hd_connect_raw(d.sock);
	assert_true(silent >= 0 && slow >= 0);
	assert_int_equal(send(slow, "hello 1", 7, 0), 7); /* greets, then stalls */
	assert_int_equal(hd_recv(slow, buf, sizeof(buf), 5), 15);
	assert_string_equal(buf, "hello 1 queries");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.value, 101);
	/* Both still open while the other was served ... */
	assert_int_equal(hd_recv(silent, buf, sizeof(buf), 0), -1);
	/* ... and closed by the daemon at their deadline. */
	assert_int_equal(hd_recv(silent, buf, sizeof(buf), 10 * time_factor()), 0);
	assert_int_equal(hd_recv(slow, buf, sizeof(buf), 10 * time_factor()), 0);
	close(silent);
	close(slow);
	assert_true(hd_said(&d, "sent nothing in time"));
	/* A connection kept between questions is closed as quietly: one line
	 * per connection that never asked (two, above), none for this one. */
	{
		struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
		struct rtid__svc_conn c;
		char log[16384];
		int n = 0;
		FILE *f;

		assert_int_equal(rtid__svc_open(d.sock, &c), 0);
		assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 10, &a), 0);
		assert_int_equal(hd_recv(c.fd, buf, sizeof(buf), 10 * time_factor()), 0);
		rtid__svc_close(&c);
		assert_non_null(f = fopen(d.stderr_path, "r"));
		while (fgets(log, sizeof(log), f))
			n += strstr(log, "sent nothing in time") != NULL;
		fclose(f);
		assert_int_equal(n, 2);
	}
}

/* Malformed, overlong and wrong-version messages: refused, the daemon serves on. */
static void test_bad_messages(void **state)
{
	struct rtid__svc_ans a;
	char buf[RTID__SVC_MSG_MAX + 100];
	int fd;

	(void)state;
	/* The bound on all clients, not the one on each uid's: a test run as a
	 * user holds every connection under one uid. */
	hd_start(&d, ARGS("--max-clients", "2", "--max-per-uid", "3"));
	fd = hd_connect_raw(d.sock);
	assert_int_equal(send(fd, "hi", 2, 0), 2);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "refused 3 version");
	close(fd);
	fd = hd_connect_raw(d.sock);
	assert_int_equal(send(fd, "hello 4", 7, 0), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), 5) > 0);
	assert_string_equal(buf, "refused 3 version");
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	fd = hd_connect_raw(d.sock);
	send(fd, "hello 1", 7, 0);
	hd_recv(fd, buf, sizeof(buf), 5);
	send(fd, "get-restore-tid  100", 20, 0);
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	fd = hd_connect_raw(d.sock);
	memset(buf, 'a', sizeof(buf)); /* longer than any message may be */
	send(fd, buf, sizeof(buf), 0);
	assert_int_equal(hd_recv(fd, buf, sizeof(buf), 5), 0);
	close(fd);
	/* Clients at the bound: a connection that has not greeted gives its
	 * slot to a new one; when every slot is held by a client that greeted,
	 * the next one hears "busy" at once, and those already in are still
	 * served. */
	{
		int a1 = hd_connect_raw(d.sock), a2 = hd_connect_raw(d.sock), a3;

		assert_int_equal(send(a1, "hello 1", 7, 0), 7);
		assert_true(hd_recv(a1, buf, sizeof(buf), 5) > 0);
		a3 = hd_connect_raw(d.sock);
		assert_int_equal(send(a3, "hello 2", 7, 0), 7);
		assert_true(hd_recv(a3, buf, sizeof(buf), 5) > 0);
		assert_string_equal(buf, "hello 2 queries");
		assert_int_equal(hd_recv(a2, buf, sizeof(buf), 5), 0); /* a2 made room */
		close(a2);
		a2 = hd_connect_raw(d.sock);
		assert_true(hd_recv(a2, buf, sizeof(buf), 5) > 0);
		assert_string_equal(buf, "refused 2 busy");
		assert_true(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a) < 0);
		assert_int_equal(send(a1, "get-restore-tid 100", 19, 0), 19);
		assert_true(hd_recv(a1, buf, sizeof(buf), 5) > 0);
		assert_string_equal(buf, "tid get-restore-tid 100 101");
		close(a1);
		close(a2);
		close(a3);
	}
	(void)a;
}

/* Queries only by default: an action goes to the real tool; so does every
 * call the daemon does not answer (other options, repeated ones). */
static void test_actions_not_served(void **state)
{
	struct shim_run r;

	(void)state;
	hd_start(&d, NULL);
	expect_shim(ARGS("--get-restore-tid", "--pid", "100", "--pid", "100"), 0, "101\n");
	r = hd_shim(&d, NULL, ARGS("--get-state", "--pid", "100", "--timeout", "5"));
	assert_int_equal(r.status, 0);
	r = hd_shim(&d, NULL, ARGS("--action", "toggle", "--pid", "100"));
	assert_int_equal(r.status, 0);
	{
		/* None of these is a call the daemon answers: each reaches the tool. */
		const char *const *odd[] = {
			ARGS("--pid", "x", "--get-state"), ARGS("--get-state", "--pid"),
			ARGS("--action", "lock", "--timeout", "5"), ARGS("--action"),
			ARGS("--get-state", "--get-state", "--pid", "100"),
			ARGS("--action", "lock", "--pid", "100", "--timeout", "5", "--timeout", "5"),
			ARGS("--action", "lock", "--pid", "100", "--timeout", "-5"),
			ARGS("--get-state", "--action", "lock", "--pid", "100"),
		};

		for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
			hd_shim(&d, NULL, odd[i]);
	}
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 7);
	r = hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "100", "--timeout", "500"));
	assert_int_equal(r.status, 0);
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock\""), 0);
	/* Nothing reached the driver through the daemon. */
	assert_int_equal(hd_log_count(&d, "\"mock\":\"libcuda\",\"event\":\"start\""), 0);
}

/* The library's service backend: the daemon's answers per pid, read as the
 * api backend reads the driver's; failures are errors, never tids. */
static void test_service_backend(void **state)
{
	const int pids[] = { 100, 200, 600, 300, 500, 700, 800 };
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_SERVICE, .service_socket = d.sock,
				   .proc_root = d.proc, .timeout_s = 10 };
	struct rtid_result r[7];
	struct rtid_ctx *ctx = NULL;
	char nowhere[400];

	(void)state;
	hd_start(&d, NULL);
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 7, r), 0);
	assert_int_equal(r[0].tid, 101);
	assert_string_equal(rtid_source_name(r[0].source), "service");
	assert_int_equal(r[1].tid, 0);
	assert_int_equal(r[1].error, RTID_OK);
	assert_int_equal(r[2].error, RTID_ERR_API_FAILED);
	assert_int_equal(r[2].code, 700);
	assert_int_equal(r[3].error, RTID_ERR_WORKER_CRASHED);
	assert_int_equal(r[3].tid, 0);
	assert_int_equal(r[4].tid, 501);
	assert_int_equal(r[5].error, RTID_ERR_API_FAILED);
	assert_string_equal(r[5].detail, "CUDA error (CUresult 77)");
	assert_int_equal(r[6].error, RTID_OK); /* not initialized: none */
	assert_int_equal(r[6].tid, 0);
	rtid_ctx_free(ctx);
	/* Pids the driver need not be asked about (gone before the scan) are
	 * skipped; the others still get the daemon's answer. */
	{
		const int some[] = { 999, 100, 998 };
		struct rtid_config xc = cfg;

		xc.mode = RTID_MODE_CROSSCHECK;
		write_file(d.proc, "100/task/100/comm", "python3\n");
		assert_int_equal(rtid_ctx_new(&xc, &ctx), 0);
		assert_int_equal(rtid_resolve_many(ctx, some, 3, r), 0);
		assert_int_equal(r[0].error, RTID_ERR_NO_SUCH_PROCESS);
		assert_int_equal(r[1].tid, 101);
		assert_int_equal(r[2].error, RTID_ERR_NO_SUCH_PROCESS);
		rtid_ctx_free(ctx);
	}
	/* No daemon there: worker-failed for each pid. */
	snprintf(nowhere, sizeof(nowhere), "%s/none.sock", d.dir);
	cfg.service_socket = nowhere;
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
	assert_int_equal(r[0].error, RTID_ERR_WORKER_FAILED);
	assert_int_equal(r[1].error, RTID_ERR_WORKER_FAILED);
	assert_non_null(strstr(r[0].detail, "cannot reach rtid serve"));
	rtid_ctx_free(ctx);
	/* Someone else's listener (not root's, not ours) is not believed, as
	 * the shim does not believe it: no answer taken from it. Root only. */
	if (geteuid() == 0) {
		char sockdir[] = "/tmp/rtid-other-XXXXXX", sock[64];
		int release;
		pid_t pid;

		assert_non_null(mkdtemp(sockdir));
		assert_int_equal(chmod(sockdir, 01777), 0);
		snprintf(sock, sizeof(sock), "%s/s", sockdir);
		pid = hd_listener_as(65534, sock, &release);
		cfg.service_socket = sock;
		assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
		assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
		rtid_ctx_free(ctx);
		hd_listener_end(pid, release);
		unlink(sock);
		rmdir(sockdir);
		assert_int_equal(r[0].error, RTID_ERR_WORKER_FAILED);
		assert_int_equal(r[1].error, RTID_ERR_WORKER_FAILED);
		assert_non_null(strstr(r[0].detail, "not trusted: it runs as uid 65534"));
	}
}

/* A daemon slower than the batch's timeout: that pid times out, the rest fail. */
static void test_service_backend_timeout(void **state)
{
	const int pids[] = { 400, 100 };
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_SERVICE, .service_socket = d.sock,
				   .proc_root = d.proc, .timeout_s = 0.3 };
	struct rtid_result r[2];
	struct rtid_ctx *ctx = NULL;

	(void)state;
	hd_start(&d, ARGS("--timeout", "1.5"));
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
	assert_int_equal(r[0].error, RTID_ERR_TIMEOUT);
	assert_int_equal(r[1].error, RTID_ERR_WORKER_FAILED);
	assert_int_equal(r[1].tid, 0);
	rtid_ctx_free(ctx);
}

/* The daemon's own deadline cuts the driver call: timeout, never a tid. */
static void test_service_backend_daemon_timeout(void **state)
{
	const int pids[] = { 400, 100 };
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_SERVICE, .service_socket = d.sock,
				   .proc_root = d.proc, .timeout_s = 20 };
	struct rtid_result r[2];
	struct rtid_ctx *ctx = NULL;

	(void)state;
	hd_start(&d, ARGS("--timeout", "0.3"));
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
	assert_int_equal(r[0].error, RTID_ERR_TIMEOUT);
	assert_non_null(strstr(r[0].detail, "rtid serve: timeout"));
	assert_int_equal(r[1].tid, 101); /* a new attach for the next one */
	rtid_ctx_free(ctx);
}

/* The batch's deadline passes while the daemon is still busy: deadline. */
static void test_service_backend_deadline(void **state)
{
	const int pids[] = { 100, 400, 500 };
	struct rtid_config cfg = { RTID_CONFIG_INIT, .backend = RTID_BACKEND_SERVICE, .service_socket = d.sock,
				   .proc_root = d.proc, .timeout_s = 10, .deadline_s = 0.3 };
	struct rtid_result r[3];
	struct rtid_ctx *ctx = NULL;

	(void)state;
	hd_start(&d, ARGS("--timeout", "1.5"));
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 3, r), 0);
	assert_int_equal(r[0].tid, 101);
	assert_int_equal(r[1].error, RTID_ERR_DEADLINE);
	assert_int_equal(r[2].error, RTID_ERR_DEADLINE);
	assert_int_equal(r[2].tid, 0);
	rtid_ctx_free(ctx);
}

/* rtid resolve --backend service, through RTID_SOCKET. */
static void test_resolve_backend_service(void **state)
{
	char cmd[1200], out[512] = "";
	FILE *f;

	(void)state;
	hd_start(&d, NULL);
	snprintf(cmd, sizeof(cmd), "RTID_SOCKET=%s %s resolve --backend service --proc %s --json 100",
		 d.sock, env_path("RTID_BIN"), d.proc);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_true(fread(out, 1, sizeof(out) - 1, f) > 0);
	assert_int_equal(pclose(f), 0);
	assert_non_null(strstr(out, "\"tid\":101,\"source\":\"service\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shim_answers_as_the_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_attach_for_many_shims, setup_one, teardown),
		cmocka_unit_test_setup_teardown(test_query_error_reaches_the_tool, setup_query_error, teardown),
		cmocka_unit_test_setup_teardown(test_socket_missing_reaches_the_tool, setup_missing, teardown),
		cmocka_unit_test_setup_teardown(test_worker_crash_mid_request, setup_crash, teardown),
		cmocka_unit_test_setup_teardown(test_worker_crash_with_a_helper, setup_crash, teardown),
		cmocka_unit_test_setup_teardown(test_stop_takes_a_helper_along, setup, teardown),
		cmocka_unit_test_setup_teardown(test_started_with_std_fds_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_hang_past_deadline, setup_hang, teardown),
		cmocka_unit_test_setup_teardown(test_killed_worker_reaped_later, setup_hang, teardown),
		cmocka_unit_test_setup_teardown(test_driver_version_change, setup_change, teardown),
		cmocka_unit_test_setup_teardown(test_attach_fails, setup_noattach, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_forgotten_after_service, setup_noattach_again,
						teardown),
		cmocka_unit_test_setup_teardown(test_attach_hangs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_request_fails_with_the_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_crashes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_driver_lacks_actions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_is_not_a_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tid_of_another_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reused_during_the_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_behind_a_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_a_query_hanging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_client, setup_silent, teardown),
		cmocka_unit_test_setup_teardown(test_bad_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_actions_not_served, setup, teardown),
		cmocka_unit_test_setup_teardown(test_service_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_service_backend_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_service_backend_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_service_backend_daemon_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_backend_service, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
