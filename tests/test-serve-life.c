/* rtid serve's life: workers stuck in the kernel never stall the loop, a call
 * left inside the driver holds its process back (within one daemon and
 * across a restart) and an action held back so fails rather than go to the
 * real tool, every stop signal stops gracefully, and a second daemon leaves
 * the first alone. A driver call stuck in the kernel, which SIGKILL cannot
 * end, is the mock libcuda reading a file of stuck-fs (RTID_MOCK_STUCK_FILE):
 * those tests need FUSE and skip without it. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "plugin-call.h"
#include "basic/parse.h"
#include "serve-harness.h"
#include "serve/serve.h"
#include "plugin/plugin.h"
#include "plug-log.h"
#include "proto/serve-proto.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define TOOL_CALLS "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""
#define NOBODY 65534
#define NSTUCK 16 /* the default --workers, every one of them stuck */

static const int node_pids[] = { 100, 200, 300, 400, 0 };
static struct daemon d;
static pid_t stuck = -1;
static int stuck_events = -1; /* stuck-fs says "read" for each reader it holds */
static char stuck_mnt[400];

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-node", node_pids);
	return 0;
}

/* NSTUCK processes whose restore-tid query hangs, and 100 answered. */
static int setup_stuck(void **state)
{
	char text[2048];
	int pids[NSTUCK + 2], n;

	(void)state;
	n = snprintf(text, sizeof(text), "title stuck workers\nproves nothing waits in the loop\n"
		     "driver 580.159.03\nbackend api\ntask 100 100 python3\n"
		     "task 100 101 cuda00001400006\nanswer 100 tid 101\n");
	for (int i = 0; i < NSTUCK; i++) {
		n += snprintf(text + n, sizeof(text) - (size_t)n, "answer %d hang\n", 1001 + i);
		pids[i] = 1001 + i;
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "expect driver 100 tid=101\n");
	pids[NSTUCK] = 100;
	pids[NSTUCK + 1] = 0;
	hd_prepare(&d, text, pids);
	return 0;
}

/* stuck-fs goes first: its end frees the stuck workers, and only then can
 * the daemon reap them and the directory be removed. */
static void stuck_release(void)
{
	if (stuck > 0) {
		kill(stuck, SIGTERM);
		waitpid(stuck, NULL, 0);
		stuck = -1;
	}
	if (stuck_events >= 0)
		close(stuck_events);
	stuck_events = -1;
	if (stuck_mnt[0] && mounted(stuck_mnt))
		fuse_detach(stuck_mnt);
	stuck_mnt[0] = '\0';
	unsetenv("RTID_MOCK_STUCK_FILE");
}

static int teardown(void **state)
{
	(void)state;
	stuck_release();
	unsetenv("RTID_MOCK_STUCK_OPS");
	unsetenv("RTID_MOCK_SLOW_OPS");
	unsetenv("RTID_MOCK_SLOW_S");
	hd_cleanup(&d);
	return 0;
}

/* stuck-fs mounted under the daemon's directory, its file in
 * RTID_MOCK_STUCK_FILE for the workers; where FUSE cannot be used the test
 * is skipped (it fails under RTID_REQUIRE_FUSE=1). */
static void stuck_start(void)
{
	const char *why = fuse_unusable();
	char file[480], fdarg[16], buf[8] = { 0 };
	struct pollfd pf;
	int p[2];

	if (why) {
		assert_int_equal(skip_or_fail("stuck-fs", why), 77);
		skip();
	}
	snprintf(stuck_mnt, sizeof(stuck_mnt), "%s/stuck-mnt", d.dir);
	assert_int_equal(mkdir(stuck_mnt, 0700), 0);
	assert_int_equal(pipe(p), 0);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	stuck = fork();
	assert_true(stuck >= 0);
	if (stuck == 0) {
		execl(env_path("STUCK_FS"), "stuck-fs", stuck_mnt, fdarg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, (int)(20000 * time_factor())), 1);
	assert_int_equal(read(p[0], buf, 6), 6);
	assert_string_equal(buf, "ready\n");
	stuck_events = p[0];
	snprintf(file, sizeof(file), "%s/stuck", stuck_mnt);
	setenv("RTID_MOCK_STUCK_FILE", file, 1);
}

static double seconds(double s)
{
	return s * time_factor();
}

/* Wait until n more readers are stuck: stuck-fs has taken their reads, and
 * from then on SIGKILL cannot end them. */
static void stuck_wait(int n)
{
	char buf[5];

	for (int i = 0; i < n; i++) {
		struct pollfd pf = { .fd = stuck_events, .events = POLLIN };

		assert_int_equal(poll(&pf, 1, (int)(seconds(20) * 1000)), 1);
		assert_int_equal(read(stuck_events, buf, 5), 5);
		assert_memory_equal(buf, "read\n", 5);
	}
}

/* How long a new client waits for its greeting. */
static double greet_time(void)
{
	double t = rtid__now();
	char buf[64] = { 0 };
	int fd = hd_connect_raw(d.sock);

	assert_true(fd >= 0);
	assert_int_equal(send(fd, "hello 2", 7, MSG_NOSIGNAL), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), seconds(20)) > 0);
	t = rtid__now() - t;
	assert_non_null(strstr(buf, "hello 2 "));
	close(fd);
	return t;
}

/* A restore-tid query of pid sent on a connection of its own, not waited for. */
static int ask_raw(int pid)
{
	char buf[64];
	int fd = hd_connect_raw(d.sock), n;

	assert_true(fd >= 0);
	assert_int_equal(send(fd, "hello 2", 7, MSG_NOSIGNAL), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), seconds(20)) > 0);
	n = snprintf(buf, sizeof(buf), "get-restore-tid %d", pid);
	assert_int_equal(send(fd, buf, (size_t)n, MSG_NOSIGNAL), n);
	return fd;
}

/* Send sig to the daemon and wait at most s seconds for its exit: its status,
 * or -1 (then it is killed) when it does not end in time. */
static int stop_within(int sig, double s)
{
	int fd = (int)syscall(SYS_pidfd_open, d.pid, 0), st, r = 1;

	assert_int_equal(kill(d.pid, sig), 0);
	if (fd >= 0) { /* valgrind has no pidfds: there the wait is waitpid's */
		r = poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, (int)(s * 1000));
		close(fd);
	}
	if (r != 1)
		kill(d.pid, SIGKILL);
	while (waitpid(d.pid, &st, 0) < 0 && errno == EINTR)
		;
	d.pid = -1;
	return r != 1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Calls of the driver (the mock libcuda's own events) of a kind for pid. */
static int driver_calls(const char *event, int pid)
{
	char needle[120];

	snprintf(needle, sizeof(needle), "\"mock\":\"libcuda\",\"event\":\"%s\",\"pid\":%d,", event,
		 pid);
	return hd_log_count(&d, needle);
}

/* Wait until the daemon's log holds needle (a line it writes once a pidfd
 * it polls says so; the test has no signal of its own for it). */
static void wait_said(const char *needle)
{
	for (int i = 0; i < 2000 * time_factor() && !hd_said(&d, needle); i++)
		poll(NULL, 0, 10);
	assert_true(hd_said(&d, needle));
}

/* Lines of the record of work in flight (0: none there). */
static int record_lines(void)
{
	char path[400], buf[8192];
	ssize_t n;
	int fd, lines = 0;

	snprintf(path, sizeof(path), "%s.inflight", d.sock);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

/* Every worker stuck in the kernel past its deadline (SIGKILL cannot end a
 * call stuck there): answered at once, and a new client greeted at once, as
 * fast as before (it waited 0.5 s per stuck worker, 8 s for 16). Their
 * processes stay in the driver: held, never sent to it again, while other
 * processes are served. A stop then ends within bounds (it waited for ever)
 * and leaves them in the record, and the next daemon holds them until they
 * have exited. */
static void test_stuck_workers_never_stall(void **state)
{
	char deadline[32], buf[256];
	struct rtid__svc_ans a;
	int fds[NSTUCK];
	double base = 0, t, worst = 0;

	(void)state;
	stuck_start();
	snprintf(deadline, sizeof(deadline), "%g", seconds(0.5));
	/* Every client here is one uid's: as a user, its bound on connections
	 * (a quarter of the clients) would refuse the greeting beside the
	 * stuck ones, which is not what this measures. */
	hd_start(&d, ARGS("--timeout", deadline, "--max-per-uid", "64"));
	/* The baseline, on this machine under its load now: the slowest of as
	 * many greetings, paced alike, with no worker stuck. */
	for (int i = 0; i < 60; i++) {
		t = greet_time();
		base = t > base ? t : base;
		poll(NULL, 0, 5);
	}
	for (int i = 0; i < NSTUCK; i++)
		fds[i] = ask_raw(1001 + i);
	stuck_wait(NSTUCK);
	/* Clients greeted one after another, every 5 ms, while the workers
	 * run out their deadlines and are killed, until all are answered: the
	 * slowest greeting is what a client meets at the worst moment. */
	{
		struct pollfd pf[NSTUCK];
		double until = rtid__now() + seconds(20);
		int answered = 0;

		for (int i = 0; i < NSTUCK; i++)
			pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		while (answered < NSTUCK && rtid__now() < until) {
			t = greet_time();
			worst = t > worst ? t : worst;
			if (poll(pf, NSTUCK, 5) <= 0)
				continue;
			for (int i = 0; i < NSTUCK; i++) {
				if (pf[i].fd < 0 || !pf[i].revents)
					continue;
				assert_true(hd_recv(fds[i], buf, sizeof(buf), seconds(5)) > 0);
				assert_non_null(strstr(buf, " timeout "));
				close(fds[i]);
				pf[i].fd = -1;
				answered++;
			}
		}
		assert_int_equal(answered, NSTUCK);
	}
	print_message("slowest greeting: %.1f ms while %d workers got stuck, %.1f ms before "
		      "(of 60)\n",
		      worst * 1000, NSTUCK, base * 1000);
	assert_true(worst < seconds(0.1) + 2 * base);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 1001, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "in-driver");
	assert_int_equal(driver_calls("start", 1001), 1);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, 101);

	assert_int_equal(stop_within(SIGTERM, seconds(20)), 0);
	assert_true(hd_said(&d, "workers stuck in the driver are left behind at exit"));
	assert_int_equal(record_lines(), 1 + NSTUCK);
	assert_int_equal(access(d.sock, F_OK), -1);

	hd_start(&d, ARGS("--timeout", deadline));
	assert_true(hd_said(&d, "process 1002 has a call inside the driver from a previous daemon"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 1002, 0, &a), 0);
	assert_string_equal(a.name, "in-driver");
	assert_int_equal(driver_calls("start", 1002), 1);
	stuck_release();
	wait_said("process 1002 is served again");
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 1002, 0, &a), 0);
	assert_string_equal(a.name, "timeout"); /* the driver has it again (and hangs) */
	assert_int_equal(driver_calls("start", 1002), 2);
}

static void expect_held(const struct shim_run *r, const char *what)
{
	char want[160];

	snprintf(want, sizeof(want), "Could not %s process ID 100: \"rtid serve held it back: an "
		 "earlier call about this process is still inside the driver; not run\"\n", what);
	assert_string_equal(r->out, want);
	assert_int_equal(r->status, 1);
}

/* An action on 100 while the daemon holds it (a call about it still inside
 * the driver): held back (exit 1), neither the driver nor the tool runs it;
 * a query about 100 meanwhile goes to the tool. */
static void held_then_query_to_the_tool(const char *op)
{
	struct shim_run r = hd_shim(&d, NULL, ARGS("--action", op, "--pid", "100"));

	expect_held(&r, op);
	assert_int_equal(driver_calls(op, 100), 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	hd_shim(&d, NULL, ARGS("--get-state", "--pid", "100"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
}

/* A call stuck in the driver, then its daemon killed: what the record says
 * of the process (pid and start time, written when the call was handed to
 * the worker) decides what the next daemon holds. kill_stuck: the stuck
 * call's shim (a checkpoint of 100, or get-state by its thread 101) until
 * the daemon is gone; its status. */
static int kill_stuck(const char *op, const char *const *args)
{
	struct shim_bg b;
	struct shim_run r;
	char text[512];

	stat_line(100, 1000, text, sizeof(text));
	write_file(d.proc, "100/stat", text);
	stat_line(101, 1500, text, sizeof(text)); /* the thread started later */
	write_file(d.proc, "101/stat", text);
	stuck_start();
	/* The daemon's workers alone: the real tool a shim falls back to must not
	 * hang too. */
	setenv("RTID_MOCK_STUCK_OPS", op, 1);
	hd_start(&d, ARGS("--actions"));
	unsetenv("RTID_MOCK_STUCK_OPS");
	if (!strcmp(op, "checkpoint"))
		assert_int_equal(hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "100")).status, 0);
	hd_shim_start(&d, args, &b);
	stuck_wait(1);
	assert_int_equal(kill(d.pid, SIGKILL), 0);
	waitpid(d.pid, NULL, 0);
	d.pid = -1;
	r = hd_shim_wait(&b);
	return r.status;
}

/* A checkpoint stuck in the kernel, and its daemon killed: the worker
 * outlives it. The next daemon learns of the call from the record: the
 * shim's unlock of that process fails (exit 1, the real tool never run, the
 * driver never asked) while the call is inside the driver; a query of it
 * goes to the real tool as ever; once the worker is gone, the unlock runs. */
static void test_restart_holds_a_stuck_action(void **state)
{
	char deadline[32], qdeadline[32];
	struct shim_run r;

	(void)state;
	/* Started, outcome lost: not run again. */
	assert_int_equal(kill_stuck("checkpoint", ARGS("--action", "checkpoint", "--pid", "100")), 1);

	snprintf(deadline, sizeof(deadline), "%g", seconds(1));
	snprintf(qdeadline, sizeof(qdeadline), "%g", seconds(0.5));
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline, "--timeout", qdeadline));
	held_then_query_to_the_tool("unlock");
	assert_int_equal(driver_calls("start", 100), 0);

	stuck_release();
	wait_said("process 100 is served again");
	r = hd_shim(&d, NULL, ARGS("--action", "unlock", "--pid", "100"));
	assert_string_equal(r.out, "");
	assert_int_equal(r.status, 0);
	assert_int_equal(driver_calls("unlock", 100), 1);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 1);
}

/* rtid's CRIU plugin beside a call stuck in the driver, after a daemon
 * restart: what a roll-back of 100 asks (its state by its thread, its
 * restore and unlock) and its restore tid all fail with the daemon's
 * reason, and the tool on the plugin's PATH is never run beside the call. */
static void test_plugin_never_beside_a_stuck_call(void **state)
{
	char deadline[32], qdeadline[32], bin[600], ran[640], script[800], msg[200];
	const char *path = getenv("PATH");
	char old_path[4096];

	(void)state;
	assert_int_equal(kill_stuck("checkpoint", ARGS("--action", "checkpoint", "--pid", "100")), 1);
	snprintf(deadline, sizeof(deadline), "%g", seconds(1));
	snprintf(qdeadline, sizeof(qdeadline), "%g", seconds(0.5));
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline, "--timeout", qdeadline));
	assert_true(hd_said(&d, "process 100 has a call inside the driver"));
	/* The tool the plugin would run: it says that it ran. */
	snprintf(bin, sizeof(bin), "%s/bin", d.dir);
	snprintf(ran, sizeof(ran), "%s/ran", d.dir);
	snprintf(script, sizeof(script), "#!/bin/sh\necho \"$*\" >> '%s'\necho 101\n", ran);
	write_file(bin, "cuda-checkpoint", script);
	snprintf(script, sizeof(script), "%s/cuda-checkpoint", bin);
	assert_int_equal(chmod(script, 0755), 0);
	snprintf(old_path, sizeof(old_path), "%s", path ? path : "/usr/bin:/bin");
	setenv("PATH", bin, 1);
	setenv("RTID_SOCKET", d.sock, 1);
	assert_int_equal(plug_get_state(100, 101), ST_UNKNOWN);
	assert_int_equal(plug_act(RTID__OP_RESTORE, 100, 0, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "in-driver"));
	assert_non_null(strstr(msg, "cuda-checkpoint is not run beside it"));
	assert_int_equal(plug_act(RTID__OP_UNLOCK, 100, 0, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "in-driver"));
	assert_int_equal(plug_restore_tid(100), -1);
	setenv("PATH", old_path, 1);
	unsetenv("RTID_SOCKET");
	assert_int_equal(access(ran, F_OK), -1);
	assert_int_equal(driver_calls("restore", 100) + driver_calls("unlock", 100), 0);
	assert_non_null(strstr(logged, "no state for thread 101"));
	assert_non_null(strstr(logged, "pid 100: no restore tid"));
}

/* The process of the stuck checkpoint is replaced (its pid reused: another
 * start time) before the next daemon starts: the record's call is not the
 * new process's, which the next daemon serves at once. */
static void test_restart_forgets_a_replaced_process(void **state)
{
	char text[512];

	(void)state;
	assert_int_equal(kill_stuck("checkpoint", ARGS("--action", "checkpoint", "--pid", "100")), 1);
	stat_line(100, 2000, text, sizeof(text));
	write_file(d.proc, "100/stat", text);
	hd_start(&d, ARGS("--actions"));
	assert_false(hd_said(&d, "process 100 has a call inside the driver"));
	{
		struct shim_run r = hd_shim(&d, NULL, ARGS("--get-state", "--pid", "100"));

		assert_string_equal(r.out, "locked\n");
		assert_int_equal(r.status, 0);
	}
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* The stuck call is a get-state named by the process's thread (as CRIU asks
 * it): the record holds the process, and no start time of it (the thread's
 * is not its process's), so the next daemon holds the process. */
static void test_restart_holds_a_stuck_call_by_thread(void **state)
{
	char deadline[32], shim_log[400];
	struct shim_run r;

	(void)state;
	kill_stuck("get-state", ARGS("--get-state", "--pid", "101"));
	snprintf(deadline, sizeof(deadline), "%g", seconds(1));
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline));
	assert_true(hd_said(&d, "process 100 has a call inside the driver"));
	snprintf(shim_log, sizeof(shim_log), "%s/shim.log", d.dir);
	setenv("RTID_SHIM_LOG", shim_log, 1);
	r = hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", "100"));
	unsetenv("RTID_SHIM_LOG");
	expect_held(&r, "lock");
	assert_int_equal(driver_calls("lock", 100), 0);
	assert_non_null(strstr(slurp(shim_log), ": lock --pid 100 held back, a call about it still in "
			       "the driver: failed, not run by the tool\n"));
}

/* Within one daemon: a checkpoint queued behind its process's long lock,
 * past its own deadline while the lock is still inside the driver, fails
 * as held back (exit 1); it was "timeout, not started", and the shim ran
 * the real tool's checkpoint beside the lock. A query held back so still
 * goes to the real tool. */
static void test_action_behind_a_call_in_the_driver(void **state)
{
	char slow[32], deadline[32], lock_ms[32];
	struct shim_bg lk;
	struct shim_run r;

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "lock", 1);
	snprintf(slow, sizeof(slow), "%g", seconds(3));
	setenv("RTID_MOCK_SLOW_S", slow, 1);
	snprintf(deadline, sizeof(deadline), "%g", seconds(1));
	snprintf(lock_ms, sizeof(lock_ms), "%d", (int)(seconds(5) * 1000));
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline, "--timeout", deadline));
	hd_shim_start(&d, ARGS("--action", "lock", "--pid", "100", "--timeout", lock_ms), &lk);
	hd_log_wait(&d, "lock", 100, 0);
	held_then_query_to_the_tool("checkpoint");
	r = hd_shim_wait(&lk);
	assert_string_equal(r.out, "");
	assert_int_equal(r.status, 0);
	assert_int_equal(driver_calls("lock", 100), 1);
}

/* The daemon's count of requests waiting for a worker (status). */
static int queued(void)
{
	char buf[256];
	int fd = hd_connect_raw(d.sock), n = -1, v;

	assert_true(fd >= 0);
	assert_int_equal(send(fd, "hello 2", 7, MSG_NOSIGNAL), 7);
	assert_true(hd_recv(fd, buf, sizeof(buf), seconds(20)) > 0);
	assert_int_equal(send(fd, "status", 6, MSG_NOSIGNAL), 6);
	while (hd_recv(fd, buf, sizeof(buf), seconds(20)) > 0 && strcmp(buf, "end"))
		if (!strncmp(buf, "stat queued ", 12) && rtid__parse_pid(buf + 12, &v) == 0)
			n = v;
		else if (!strcmp(buf, "stat queued 0"))
			n = 0;
	close(fd);
	return n;
}

/* A stop while an action waits behind its process's call inside the driver:
 * the waiting action fails as held back (it was "shutting-down", and the
 * shim ran the real tool's checkpoint beside the lock), the lock runs to its
 * end, the daemon exits 0. */
static void test_stop_with_an_action_held(void **state)
{
	char slow[32], deadline[32], lock_ms[32];
	struct shim_bg lk, ck;
	struct shim_run r;

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "lock", 1);
	snprintf(slow, sizeof(slow), "%g", seconds(3));
	setenv("RTID_MOCK_SLOW_S", slow, 1);
	snprintf(deadline, sizeof(deadline), "%g", seconds(20));
	snprintf(lock_ms, sizeof(lock_ms), "%d", (int)(seconds(5) * 1000));
	hd_start(&d, ARGS("--actions", "--action-timeout", deadline));
	hd_shim_start(&d, ARGS("--action", "lock", "--pid", "100", "--timeout", lock_ms), &lk);
	hd_log_wait(&d, "lock", 100, 0);
	hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", "100"), &ck);
	/* The daemon has no event for a request that waits: its status says. */
	for (int i = 0; i < 2000 * time_factor() && queued() < 1; i++)
		poll(NULL, 0, 10);
	assert_int_equal(queued(), 1);
	assert_int_equal(stop_within(SIGTERM, seconds(30)), 0);
	r = hd_shim_wait(&ck);
	expect_held(&r, "checkpoint");
	r = hd_shim_wait(&lk);
	assert_int_equal(r.status, 0);
	assert_true(hd_log_time(&d, "lock-end", 100, 0) > 0);
	assert_int_equal(driver_calls("checkpoint", 100), 0);
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* SIGHUP (a closed terminal or ssh session) and SIGQUIT stop the daemon as
 * SIGTERM does: the checkpoint in flight runs to its end, the socket is
 * removed, exit 0. SIGHUP killed it mid-checkpoint (exit 129). */
static void test_hangup_and_quit_stop_gracefully(void **state)
{
	const struct {
		int sig;
		const char *pid;
	} v[] = { { SIGHUP, "100" }, { SIGQUIT, "200" } };
	char slow[32];

	(void)state;
	setenv("RTID_MOCK_SLOW_OPS", "checkpoint", 1);
	snprintf(slow, sizeof(slow), "%g", seconds(2));
	setenv("RTID_MOCK_SLOW_S", slow, 1);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int pid = (int)strtol(v[i].pid, NULL, 10);
		struct shim_bg ck;
		struct shim_run r;

		hd_start(&d, ARGS("--actions"));
		r = hd_shim(&d, NULL, ARGS("--action", "lock", "--pid", v[i].pid));
		assert_int_equal(r.status, 0);
		hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", v[i].pid), &ck);
		hd_log_wait(&d, "checkpoint", pid, 0);
		assert_int_equal(stop_within(v[i].sig, seconds(30)), 0);
		r = hd_shim_wait(&ck);
		assert_string_equal(r.out, "");
		assert_int_equal(r.status, 0);
		assert_true(hd_log_time(&d, "checkpoint-end", pid, 0) > 0);
		assert_int_equal(access(d.sock, F_OK), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
}

/* rtid serve on the daemon's path, not waiting for readiness: its exit
 * status, or -1 (then it is killed) when it is still running after s
 * seconds. Its stderr goes to the daemon's, for hd_said. */
static int run_serve(double s)
{
	int err = open(d.stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600), fd, st, r;
	pid_t pid;

	assert_true(err >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(err, 2);
		execl(env_path("RTID_BIN"), "rtid", "serve", "--socket", d.sock, "--proc", d.proc,
		      "--libcuda", env_path("MOCK_LIBCUDA"), (char *)NULL);
		_exit(127);
	}
	close(err);
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	r = fd < 0 ? 1 : poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, (int)(s * 1000));
	if (fd >= 0)
		close(fd);
	if (r != 1)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return r != 1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A socket file at path with no one listening (a daemon that died), or a
 * listener (returned; -1 for none). */
static int socket_at(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening) {
		assert_int_equal(listen(fd, 4), 0);
		return fd;
	}
	close(fd);
	return -1;
}

/* Two daemons starting at once cannot both take the path: the lock beside
 * the socket, held, stops the second with the reason, and it leaves even a
 * stale socket alone; a live listener is never replaced; a stale socket is,
 * once the lock is free. */
static void test_one_daemon_per_path(void **state)
{
	char lock[400];
	struct rtid__svc_ans a;
	struct stat before, after;
	int fd, live;

	(void)state;
	snprintf(lock, sizeof(lock), "%s.lock", d.sock);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	socket_at(d.sock, false);
	assert_int_equal(lstat(d.sock, &before), 0);
	assert_int_equal(run_serve(seconds(10)), 1);
	assert_true(hd_said(&d, ".lock is held: another rtid serve serves"));
	assert_int_equal(lstat(d.sock, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	close(fd);

	unlink(d.sock);
	live = socket_at(d.sock, true);
	assert_int_equal(run_serve(seconds(10)), 1);
	assert_true(hd_said(&d, "another daemon is serving it"));
	assert_int_equal(lstat(d.sock, &after), 0);
	close(live); /* now stale */

	hd_start(&d, NULL);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.value, 101);
	/* A record that cannot be written: nothing is handed over. */
	snprintf(lock, sizeof(lock), "%s.inflight.new", d.sock);
	assert_int_equal(mkdir(lock, 0700), 0);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 200, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_ERROR);
	assert_string_equal(a.name, "no-record");
	assert_int_equal(driver_calls("start", 200), 0);
	assert_int_equal(rmdir(lock), 0);
}

/* A record file of work in flight, with mode mode (a symbolic link to
 * nowhere when mode is 0). */
static void put_record(const char *text, mode_t mode)
{
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s.inflight", d.sock);
	unlink(path);
	if (!mode) {
		assert_int_equal(symlink("nowhere", path), 0);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void load(struct server *s, const struct serve_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->record_dir = -1;
	assert_int_equal(sp_init(&s->pool, 1), 0);
	si_load(s);
}

static void unload(struct server *s)
{
	si_close(s);
	sp_free(&s->pool);
}

/* What a new daemon takes from a record: only entries whose worker is still
 * the same process (pid and start time), read only from a file and a
 * directory no one else may write, up to a malformed line; held until the
 * worker exits; rewritten with what is held, removed when nothing is. */
static void test_record_rules(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock, .proc_root = "/proc" };
	unsigned long long start;
	char text[512], path[400], buf[512];
	struct server s;
	pid_t kid;
	ssize_t n;
	int fd;

	(void)state;
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		for (;;)
			pause();
	assert_int_equal(rtid_proc_start_time("/proc", kid, &start), 0);
	snprintf(text, sizeof(text), "rtid-inflight 1\n%d %llu 4242 0\n%d %llu 4343 0\n"
		 "2147483647 %llu 4444 0\n0 1 4646 0\nx\n%d %llu 4545 0\n", (int)kid, start,
		 (int)kid, start + 1, start, (int)kid, start);
	put_record(text, 0600);
	load(&s, &cfg);
	assert_int_equal(s.nheld, 1);
	assert_true(sv_in_driver(&s, 4242));
	assert_false(sv_in_driver(&s, 4343));
	assert_false(sv_in_driver(&s, 4444));
	assert_false(sv_in_driver(&s, 4545));
	/* Rewritten with what is held, and a hand-over about to happen. */
	{
		struct sheld next = { .pid = 77, .start = 78, .process = 79, .pstart = 80 };

		assert_int_equal(si_write(&s, &next), 0);
		assert_int_equal(si_write(&s, &next), 0); /* unchanged: not written again */
	}
	snprintf(path, sizeof(path), "%s.inflight", d.sock);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	snprintf(text, sizeof(text), "rtid-inflight 1\n%d %llu 4242 0\n77 78 79 80\n", (int)kid,
		 start);
	assert_string_equal(buf, text);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	si_check(&s);
	assert_int_equal(s.nheld, 0);
	assert_false(sv_in_driver(&s, 4242));
	unload(&s);
	assert_int_equal(access(path, F_OK), -1); /* nothing left in the driver */

	/* Not trusted: a file others may write, a link, another format. */
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		for (;;)
			pause();
	assert_int_equal(rtid_proc_start_time("/proc", kid, &start), 0);
	snprintf(text, sizeof(text), "rtid-inflight 1\n%d %llu 4242 0\n", (int)kid, start);
	put_record(text, 0622);
	load(&s, &cfg);
	assert_int_equal(s.nheld, 0);
	unload(&s);
	put_record(text, 0);
	load(&s, &cfg);
	assert_int_equal(s.nheld, 0);
	unload(&s);
	put_record(text + 1, 0600);
	load(&s, &cfg);
	assert_int_equal(s.nheld, 0);
	unload(&s);
	/* A directory others may write: no record read or written at all. */
	put_record(text, 0600);
	assert_int_equal(chmod(d.dir, 0777), 0);
	load(&s, &cfg);
	assert_int_equal(s.record_dir, -1);
	assert_int_equal(s.nheld, 0);
	assert_int_equal(si_write(&s, &(struct sheld){ .pid = 1, .start = 1, .process = 1 }), 0);
	unload(&s);
	assert_int_equal(chmod(d.dir, 0700), 0);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
}


/* What serve_log said while fn ran on s (its stderr, caught in a file). */
static char caught[8192];
static const char *catch_log(void (*fn)(struct server *, const struct serve_cfg *),
			     struct server *s, const struct serve_cfg *cfg)
{
	char path[400];
	int fd, saved;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/caught.log", d.dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	fn(s, cfg);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	n = pread(fd, caught, sizeof(caught) - 1, 0);
	close(fd);
	unlink(path);
	caught[n > 0 ? n : 0] = '\0';
	return caught;
}

static void do_load(struct server *s, const struct serve_cfg *cfg)
{
	load(s, cfg);
}

static void do_unload(struct server *s, const struct serve_cfg *cfg)
{
	(void)cfg;
	unload(s);
}

/* A record read as a whole: the entries a new daemon must not take (a
 * zero or out-of-range field, a worker gone, a process since replaced), and
 * each malformed ending (a number too long for 64 bits, no newline at the
 * end, a missing field) stops the reading there, saying so; what was taken
 * before a malformed line is still held. */
static void test_record_malformed_and_refused(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock, .proc_root = "/proc" };
	unsigned long long start, self_start;
	char text[1024];
	struct server s;
	pid_t kid, dead;

	(void)state;
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		for (;;)
			pause();
	assert_int_equal(rtid_proc_start_time("/proc", kid, &start), 0);
	assert_int_equal(rtid_proc_start_time("/proc", getpid(), &self_start), 0);
	snprintf(text, sizeof(text),
		 "rtid-inflight 1\n"
		 "0 5 4005 0\n"                  /* no worker */
		 "4294967296 5 4006 0\n"         /* a worker beyond any pid */
		 "%d 0 4001 0\n"                 /* no start time */
		 "%d %llu 0 0\n"                 /* no process */
		 "%d %llu 4294967296 0\n"        /* a process beyond any pid */
		 "%d %llu 4002 0\n"              /* its worker has exited */
		 "%d %llu %d %llu\n"             /* the process was replaced */
		 "%d %llu %d %llu\n"             /* the same process: held */
		 "1 2 3 99999999999999999999\n", /* 20 digits: beyond 64 bits */
		 (int)kid, (int)kid, start, (int)kid, start, (int)dead, start, (int)kid, start,
		 (int)getpid(), self_start + 1, (int)kid, start, (int)getpid(), self_start);
	put_record(text, 0600);
	catch_log(do_load, &s, &cfg);
	assert_int_equal(s.nheld, 1);
	assert_true(sv_in_driver(&s, getpid()));
	assert_false(sv_in_driver(&s, 4001) || sv_in_driver(&s, 4002) ||
		     sv_in_driver(&s, 4005) || sv_in_driver(&s, 4006));
	assert_non_null(strstr(caught, "a malformed line; the rest is ignored"));
	assert_non_null(strstr(caught, "has a call inside the driver from a previous daemon"));
	/* Still held at exit: the record keeps it, and the daemon says so. */
	catch_log(do_unload, &s, &cfg);
	assert_non_null(strstr(caught, "calls still inside the driver at exit"));

	/* No newline after the last field; a field missing; a letter. */
	static const char *const bad[] = { "rtid-inflight 1\n1 2 3 4", "rtid-inflight 1\n1 2 3\n",
					   "rtid-inflight 1\n1 2 x 4\n", "rtid-inflight 1\n1 2 3 4 \n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_record(bad[i], 0600);
		catch_log(do_load, &s, &cfg);
		assert_int_equal(s.nheld, 0);
		assert_non_null(strstr(caught, "a malformed line; the rest is ignored"));
		unload(&s);
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
}

/* A record that cannot be taken at all is ignored with the reason: a
 * directory, a file with a second name, one longer than any record, a name
 * the directory cannot hold; a socket's directory missing keeps no record. */
static void test_record_unreadable(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock, .proc_root = "/proc" };
	char path[400], other[420], longsock[600];
	struct server s;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s.inflight", d.sock);
	put_record("rtid-inflight 1\n", 0600);
	snprintf(other, sizeof(other), "%s/second-name", d.dir);
	assert_int_equal(link(path, other), 0);
	catch_log(do_load, &s, &cfg);
	assert_non_null(strstr(caught, "not a regular file of ours alone; ignored"));
	unload(&s);
	unlink(other);

	/* Longer than RECORD_MAX (64 KiB): not parsed, said too long. */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 70000), 0);
	assert_int_equal(pwrite(fd, "rtid-inflight 1\n", 16, 0), 16);
	close(fd);
	catch_log(do_load, &s, &cfg);
	assert_int_equal(s.nheld, 0);
	assert_non_null(strstr(caught, "too long"));
	unload(&s);
	unlink(path);

	/* A directory in the record's place: ignored when read, and the exit
	 * (nothing held: the record is to be removed) says it may be stale. */
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(other, sizeof(other), "%s/x", path);
	assert_int_equal(mkdir(other, 0700), 0);
	catch_log(do_load, &s, &cfg);
	assert_non_null(strstr(caught, "not a regular file of ours alone; ignored"));
	/* Something to hand over: the rename onto the directory fails. */
	assert_true(si_write(&s, &(struct sheld){ .pid = 7, .start = 8, .process = 9 }) < 0);
	snprintf(other, sizeof(other), "%s.inflight.new", d.sock);
	assert_int_equal(access(other, F_OK), -1); /* the half-written one removed */
	catch_log(do_unload, &s, &cfg);
	assert_non_null(strstr(caught, "the record of work in flight may be stale"));
	snprintf(other, sizeof(other), "%s/x", path);
	assert_int_equal(rmdir(other), 0);
	assert_int_equal(rmdir(path), 0);

	/* A name longer than the directory holds: cannot be read, said. */
	memset(longsock, 0, sizeof(longsock));
	snprintf(longsock, sizeof(longsock), "%s/", d.dir);
	memset(longsock + strlen(longsock), 'r', 260);
	cfg.socket_path = longsock;
	catch_log(do_load, &s, &cfg);
	assert_non_null(strstr(caught, "cannot read"));
	unload(&s);

	/* The socket's directory missing: no record, said once. */
	snprintf(longsock, sizeof(longsock), "%s/missing/rtid.sock", d.dir);
	catch_log(do_load, &s, &cfg);
	assert_int_equal(s.record_dir, -1);
	assert_non_null(strstr(caught, "no record of work in flight is kept"));
	unload(&s);

	/* A bare name: the record beside it in the working directory. */
	{
		char cwd[4096];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(d.dir), 0);
		cfg.socket_path = "bare.sock";
		load(&s, &cfg);
		assert_true(s.record_dir >= 0);
		assert_int_equal(si_write(&s, &(struct sheld){ .pid = 7, .start = 8, .process = 9 }), 0);
		assert_int_equal(access("bare.sock.inflight", F_OK), 0);
		assert_int_equal(si_write(&s, NULL), 0); /* nothing: removed */
		assert_int_equal(access("bare.sock.inflight", F_OK), -1);
		unload(&s);
		assert_int_equal(chdir(cwd), 0);
	}
}

/* A held worker without a pidfd is looked at by its start time: while it
 * runs it stays held and the next look is scheduled; once gone, released. */
static void test_held_without_pidfd(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock, .proc_root = "/proc" };
	unsigned long long start;
	struct server s;
	pid_t kid;

	(void)state;
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0)
		for (;;)
			pause();
	assert_int_equal(rtid_proc_start_time("/proc", kid, &start), 0);
	load(&s, &cfg);
	s.held[0] = (struct sheld){ .pid = kid, .pidfd = -1, .start = start, .process = 4242 };
	s.nheld = 1;
	si_check(&s);
	assert_int_equal(s.nheld, 1);
	assert_true(s.held_check_at > 0);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	si_check(&s);
	assert_int_equal(s.nheld, 0);
	assert_true(s.held_check_at == 0);
	unload(&s);
}


static struct slisten lis;

static void do_open(struct server *s, const struct serve_cfg *cfg)
{
	(void)s;
	lis = (struct slisten){ .fd = -1, .lock = -1 };
	assert_int_equal(sl_open(cfg, &lis), -1);
	assert_int_equal(lis.fd, -1);
	sl_unlock(&lis);
}

/* sl_open with no fd left after the lock's: the socket cannot be made. */
static void do_open_no_fd(struct server *s, const struct serve_cfg *cfg)
{
	struct rlimit old, low;
	int next = dup(0);

	assert_true(next >= 0);
	close(next);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = (struct rlimit){ .rlim_cur = (rlim_t)next + 1, .rlim_max = old.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	lis = (struct slisten){ .fd = -1, .lock = -1 };
	next = sl_open(cfg, &lis);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(next, -1);
	assert_true(lis.lock >= 0); /* the lock was taken: the socket was what failed */
	sl_unlock(&lis);
	(void)s;
}

/* What the listening socket's path may hold, and the daemon's refusals: a
 * socket that is not a daemon's kind (a stream listener) is not replaced,
 * since no one can tell whether it is stale; a directory that cannot be
 * made, or no fd for the socket, each fail the start saying why (a stale
 * socket that cannot be probed for want of an fd is left); at exit a
 * socket file someone put in place of ours is left alone. */
static void test_listen_refusals(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[400];
	struct stat before, after;
	struct server s;
	int fd;

	(void)state;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	memcpy(sa.sun_path, d.sock, strlen(d.sock) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(lstat(d.sock, &before), 0);
	catch_log(do_open, &s, &cfg);
	assert_non_null(strstr(caught, "cannot tell whether a daemon serves it"));
	assert_int_equal(lstat(d.sock, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	close(fd);
	unlink(d.sock);

	snprintf(path, sizeof(path), "%s/none/sub/rtid.sock", d.dir);
	cfg.socket_path = path;
	catch_log(do_open, &s, &cfg);
	assert_non_null(strstr(caught, "cannot make"));
	assert_non_null(strstr(caught, "not serving"));

	cfg.socket_path = d.sock;
	catch_log(do_open_no_fd, &s, &cfg);
	assert_non_null(strstr(caught, "cannot make a socket"));
	assert_int_equal(access(d.sock, F_OK), -1);
	/* Nor an fd to probe a stale socket with: it is not removed unproven. */
	socket_at(d.sock, false);
	assert_int_equal(lstat(d.sock, &before), 0);
	catch_log(do_open_no_fd, &s, &cfg);
	assert_non_null(strstr(caught, "cannot tell whether a daemon serves it"));
	assert_int_equal(lstat(d.sock, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	assert_int_equal(unlink(d.sock), 0);

	/* Ours replaced while serving: sl_close leaves the new one. */
	lis = (struct slisten){ .fd = -1, .lock = -1 };
	assert_int_equal(sl_open(&cfg, &lis), 0);
	assert_true(lis.created);
	assert_int_equal(unlink(d.sock), 0);
	socket_at(d.sock, false);
	assert_int_equal(lstat(d.sock, &before), 0);
	sl_close(&lis, &cfg);
	assert_int_equal(lis.fd, -1);
	assert_int_equal(lstat(d.sock, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	sl_close(&lis, &cfg); /* twice: nothing more */
	sl_unlock(&lis);
	unlink(d.sock);
}


static struct client stat_client;

static void do_answer_other_ns(struct server *s, const struct serve_cfg *cfg)
{
	(void)cfg;
	st_answered(s, &stat_client, &(struct rtid__svc_ans){ .kind = RTID__SVC_TID, .value = 7 });
}

/* The counters told apart by error reason: the reasons known in advance
 * (st_init) and then the first ones seen by name (an empty one as "-"), up
 * to ST_REASONS in all, every later one as "other"; a client in a pid
 * namespace that is not known is logged as such. */
static void test_stats_reasons(void **state)
{
	struct serve_cfg cfg = { .socket_path = d.sock, .proc_root = d.proc, .quiet = true };
	struct server s;
	char buf[512], all[8192] = "", want[64];
	int sv[2], n, known = 0;

	(void)state;
	load(&s, &cfg);
	st_init(&s.stats); /* as the daemon's setup does */
	while (known < ST_REASONS && s.stats.reason[known][0])
		known++;
	assert_true(known > 0 && known < ST_REASONS - 1); /* room for some seen later */
	stat_client = (struct client){ .fd = -1, .req = { .op = RTID__OP_RESTORE_TID, .pid = 100 },
				       .asked = rtid__now(), .other_ns = true };
	for (int i = 0; i < ST_REASONS - known + 3; i++) {
		struct rtid__svc_ans a = { .kind = RTID__SVC_ERROR };

		if (i) /* the first: no name */
			snprintf(a.name, sizeof(a.name), "reason-%d", i);
		st_answered(&s, &stat_client, &a);
	}
	st_answered(&s, &stat_client, &(struct rtid__svc_ans){ .kind = RTID__SVC_ERROR,
								.name = "reason-1" });
	st_answered(&s, &stat_client, &(struct rtid__svc_ans){ .kind = RTID__SVC_ERROR,
								.name = "timeout" });
	cfg.quiet = false;
	catch_log(do_answer_other_ns, &s, &cfg);
	assert_non_null(strstr(caught, "in an unknown pid namespace"));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_true(st_send(&s, sv[0]));
	close(sv[0]);
	while ((n = hd_recv(sv[1], buf, sizeof(buf) - 1, 5)) > 0) {
		buf[n] = '\0';
		strncat(all, buf, sizeof(all) - strlen(all) - 2);
		strcat(all, "\n");
	}
	close(sv[1]);
	/* A known reason has its place from the start, listed before any is seen. */
	assert_non_null(strstr(all, "stat reasons worker-failed "));
	assert_non_null(strstr(all, "stat errors get-restore-tid timeout 1\n"));
	assert_non_null(strstr(all, "stat errors get-restore-tid - 1\n"));
	assert_non_null(strstr(all, "stat errors get-restore-tid reason-1 2\n"));
	snprintf(want, sizeof(want), "stat errors get-restore-tid reason-%d 1\n",
		 ST_REASONS - known - 1);
	assert_non_null(strstr(all, want));
	snprintf(want, sizeof(want), "reason-%d", ST_REASONS - known);
	assert_null(strstr(all, want));
	assert_non_null(strstr(all, "stat errors get-restore-tid other 3\n"));
	unload(&s);
}

/* A second daemon started by another user on the first's path (which it may
 * not connect to) exits non-zero saying why, and the first serves on; it
 * exited 1 silently after trying to remove the first's socket. */
static void test_second_daemon_as_another_user(void **state)
{
	struct rtid__svc_ans a;
	static char out[256 * 1024];
	size_t got = 0;
	ssize_t n;
	int p[2], st;
	pid_t pid;

	(void)state;
	/* Under valgrind the daemon run as nobody is traced too, and valgrind
	 * cannot write its log as nobody: the plain build runs this test. */
	if (geteuid() != 0 || getenv("RTID_UNDER_VALGRIND"))
		skip();
	assert_int_equal(chmod(d.dir, 0755), 0); /* the socket (0660) refuses nobody */
	hd_start(&d, NULL);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(126);
		execl(env_path("RTID_BIN"), "rtid", "serve", "--socket", d.sock, "--proc", d.proc,
		      "--libcuda", env_path("MOCK_LIBCUDA"), (char *)NULL);
		_exit(125);
	}
	close(p[1]);
	/* Read to the end: a coverage build's rtid, run as nobody, also says
	 * of each data file it may not write that it cannot (before and after
	 * its own line), so the whole output is kept. */
	while (got < sizeof(out) - 1 && poll(&(struct pollfd){ .fd = p[0], .events = POLLIN }, 1,
					     (int)(seconds(20) * 1000)) == 1 &&
	       (n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	kill(pid, SIGKILL); /* should it still run */
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125)
		skip(); /* nobody cannot run the build's rtid here */
	print_message("as nobody: %.300s", strstr(out, "rtid serve: ") ? strstr(out, "rtid serve: ") : out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	assert_non_null(strstr(out, "rtid serve: "));
	assert_non_null(strstr(out, ".lock"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, 101);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: nobody must still be able to run the build's rtid. */
		cmocka_unit_test_setup_teardown(test_second_daemon_as_another_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_workers_never_stall, setup_stuck,
						teardown),
		cmocka_unit_test_setup_teardown(test_restart_holds_a_stuck_action, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plugin_never_beside_a_stuck_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_forgets_a_replaced_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_holds_a_stuck_call_by_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_behind_a_call_in_the_driver, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_an_action_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hangup_and_quit_stop_gracefully, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_daemon_per_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_malformed_and_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_without_pidfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_reasons, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
