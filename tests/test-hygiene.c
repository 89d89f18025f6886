/* No process left behind, whatever happens to rtid: signals while tools hang
 * (their children, and descendants that left with setsid, included), SIGKILL
 * of rtid, a tool whose grandchild keeps stdout open, a low fd limit with
 * --jobs 64. This test is a child subreaper, so that anything rtid left would
 * come to it and be counted, not hidden under pid 1. */
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
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "basic/parse.h"
#include "core/core.h"

static char fifo[512], out_path[512], pidfile[512], proc_dir[512];
static int fifo_fd = -1;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	test_dir_setup(state);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(fifo, sizeof(fifo), "%s/ready", test_dir);
	snprintf(out_path, sizeof(out_path), "%s/out", test_dir);
	snprintf(pidfile, sizeof(pidfile), "%s/pids", test_dir);
	if (mkfifo(fifo, 0600) < 0)
		return -1;
	/* Read and write: no EOF between writers, and opening never blocks. */
	fifo_fd = open(fifo, O_RDWR | O_CLOEXEC);
	setenv("RTID_CUDA_CHECKPOINT", env_path("FAKE_TOOL"), 1);
	/* The pids asked about are processes of a test tree: a number that is
	 * no process is not asked of the tool at all. */
	for (int pid = 1001; pid <= 2100; pid += pid == 1004 ? 996 : 1) {
		char rel[64];

		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", pid, pid);
		write_file(test_dir, rel, "python3\n");
		/* The thread the stand-in tool names (a tid is an answer only as one). */
		snprintf(rel, sizeof(rel), "proc/%d/task/4244/comm", pid);
		write_file(test_dir, rel, "cuda00001400006\n");
	}
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", test_dir);
	setenv("RTID_PROC", proc_dir, 1);
	setenv("FAKE_READY", fifo, 1);
	setenv("FAKE_PIDFILE", pidfile, 1);
	return fifo_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	close(fifo_fd);
	return test_dir_teardown(state);
}

static int reset(void **state)
{
	static const char *const vars[] = { "FAKE_HANG", "FAKE_ESCAPE", "FAKE_STDOUT" };

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	unlink(pidfile);
	alarm(25); /* a hang here is a failure, not a stuck suite */
	return 0;
}

static bool ignore_hup; /* start rtid with SIGHUP ignored, as a caller may */

/* Start argv (argv[0] a path) with stdout to out_path and an fd limit
 * (0: unchanged). */
static pid_t start(char *const argv[], rlim_t nofile)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct rlimit rl;

		/* The soft limit only: valgrind refuses to change the hard one. */
		if (fd < 0 || dup2(fd, 1) < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
		rl.rlim_cur = nofile ? nofile : rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
		close(fifo_fd);
		/* Dispositions of our own, not the caller's: under nohup, or in
		 * the background of a shell, SIGHUP or SIGINT come ignored, and
		 * rtid keeps an ignored signal ignored. */
		signal(SIGHUP, ignore_hup ? SIG_IGN : SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Wait for n pids on the FIFO (each tool and descendant reports itself). */
static void await_ready(pid_t *pids, size_t n)
{
	char buf[64];
	size_t len = 0, got = 0;

	while (got < n) {
		ssize_t r = read(fifo_fd, buf + len, sizeof(buf) - 1 - len);
		char *nl;

		assert_true(r > 0);
		len += (size_t)r;
		buf[len] = '\0';
		while (got < n && (nl = strchr(buf, '\n'))) {
			*nl = '\0';
			pids[got++] = (pid_t)strtol(buf, NULL, 10);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
	}
}

/* How many of pids still exist (running or zombie). */
static int left(const pid_t *pids, size_t n)
{
	int alive = 0;

	for (size_t i = 0; i < n; i++)
		alive += kill(pids[i], 0) == 0;
	/* Clean up after a failure, so that one test does not spoil the next. */
	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return alive;
}

static int status_of(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* 4 hanging tools, each with a child in its group and a descendant that left
 * with setsid: 12 processes; rtid must die by the signal and leave none. */
static void signal_leaves_nothing(int sig, bool shim)
{
	char *resolve[] = { (char *)env_path("RTID_BIN"), "resolve", "--jobs", "4",
			    "1001", "1002", "1003", "1004", NULL };
	char link[600];
	char *query[] = { link, "--get-restore-tid", "--pid", "1001", NULL };
	size_t n = shim ? 3 : 12;
	pid_t pids[12], rtid;
	int st;

	setenv("FAKE_HANG", "2", 1);
	setenv("FAKE_ESCAPE", "1", 1);
	if (shim) {
		snprintf(link, sizeof(link), "%s/cuda-checkpoint", test_dir);
		unlink(link);
		assert_int_equal(symlink(env_path("RTID_BIN"), link), 0);
		setenv("RTID_REAL_TOOL", env_path("FAKE_TOOL"), 1);
	}
	rtid = start(shim ? query : resolve, 0);
	await_ready(pids, n);
	assert_int_equal(kill(rtid, sig), 0);
	st = status_of(rtid);
	unsetenv("RTID_REAL_TOOL");
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), sig);
	st = left(pids, n);
	print_message("%s, SIG%s: %d of %zu processes left\n", shim ? "shim" : "rtid resolve",
		      sigabbrev_np(sig), st, n);
	assert_int_equal(st, 0);
}

static void sigterm_leaves_nothing(void **state)
{
	(void)state;
	signal_leaves_nothing(SIGTERM, false);
	signal_leaves_nothing(SIGTERM, true);
}

static void sigint_leaves_nothing(void **state)
{
	(void)state;
	signal_leaves_nothing(SIGINT, false);
	signal_leaves_nothing(SIGINT, true);
}

static void sighup_leaves_nothing(void **state)
{
	(void)state;
	signal_leaves_nothing(SIGHUP, false);
	signal_leaves_nothing(SIGHUP, true);
}

/* A signal the caller ignores stays ignored: SIGHUP then SIGTERM, and rtid
 * dies by the second (the lower-numbered SIGHUP would come first). */
static void ignored_signal_stays_ignored(void **state)
{
	char *argv[] = { (char *)env_path("RTID_BIN"), "resolve", "1001", NULL };
	pid_t pids[1], rtid;
	int st;

	(void)state;
	setenv("FAKE_HANG", "1", 1);
	ignore_hup = true;
	rtid = start(argv, 0);
	ignore_hup = false;
	await_ready(pids, 1);
	kill(rtid, SIGHUP);
	kill(rtid, SIGTERM);
	st = status_of(rtid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_int_equal(left(pids, 1), 0);
}

/* The shim's own query fails (the tool prints no number) and the call goes
 * to the real tool in the shim's process: a descendant of the query that
 * left the tool's group is killed before that exec, not handed down to the
 * real tool (whose own descendants are its business). The fake reports the
 * query's descendant, the query, the real tool's descendant, the real tool. */
static void shim_fallback_takes_no_stray_along(void **state)
{
	char link[600];
	char *query[] = { link, "--get-restore-tid", "--pid", "1001", NULL };
	pid_t pids[4], shim;
	bool stray;
	int st;

	(void)state;
	snprintf(link, sizeof(link), "%s/cuda-checkpoint", test_dir);
	unlink(link);
	assert_int_equal(symlink(env_path("RTID_BIN"), link), 0);
	setenv("RTID_REAL_TOOL", env_path("FAKE_TOOL"), 1);
	setenv("FAKE_STDOUT", "no number\n", 1);
	setenv("FAKE_ESCAPE", "1", 1);
	shim = start(query, 0);
	await_ready(pids, 4);
	st = status_of(shim);
	unsetenv("RTID_REAL_TOOL");
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Gone and reaped by the shim: not even a zombie of this subreaper. */
	stray = kill(pids[0], 0) == 0 || errno != ESRCH;
	left(pids, 4); /* first: a failure below must not leave them running */
	assert_int_equal(pids[3], shim); /* the real tool ran in the shim's process */
	if (stray)
		fail_msg("the query's descendant %d outlived the shim", (int)pids[0]);
}

/* SIGKILL cannot be handled: the tools die by their death signal. */
static void sigkill_takes_the_tools_along(void **state)
{
	char *argv[] = { (char *)env_path("RTID_BIN"), "resolve", "--jobs", "2", "1001", "1002",
			 NULL };
	pid_t pids[2], rtid;
	int gone = 0;

	(void)state;
	setenv("FAKE_HANG", "1", 1);
	rtid = start(argv, 0);
	await_ready(pids, 2);
	kill(rtid, SIGKILL);
	assert_true(WIFSIGNALED(status_of(rtid)));
	/* The orphaned tools came to this subreaper: waiting for them ends only
	 * if their death signal killed them (else the alarm fails the test). */
	for (int i = 0; i < 2; i++) {
		int st;

		gone += waitpid(pids[i], &st, 0) == pids[i] && WIFSIGNALED(st) &&
			WTERMSIG(st) == SIGKILL;
	}
	print_message("SIGKILL of rtid: %d of 2 tools died with it\n", gone);
	assert_int_equal(gone, 2);
	assert_int_equal(left(pids, 2), 0);
}

/* The tool answers and exits, but a grandchild that left its group keeps
 * stdout open: the answer comes at once, and the grandchild is killed. */
static void grandchild_holding_stdout(void **state)
{
	char *argv[] = { (char *)env_path("RTID_BIN"), "resolve", "--timeout", "30", "1001",
			 NULL };
	pid_t pids[2], rtid;
	double t0 = now(), took;
	char buf[256] = "";
	int st;
	FILE *f;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_ESCAPE", "1", 1);
	rtid = start(argv, 0);
	await_ready(pids, 2);
	st = status_of(rtid);
	took = now() - t0;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	f = fopen(out_path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f) > 0, 1);
	fclose(f);
	assert_non_null(strstr(buf, "4244"));
	st = left(pids, 2);
	print_message("grandchild holding stdout: answered in %.2f s (timeout 30 s), "
		      "%d of 2 processes left\n", took, st);
	assert_true(took < 10);
	assert_int_equal(st, 0);
}

/* 101 pids, --jobs 64, 32 fds (96 under valgrind): a query that cannot get its fds waits for a
 * running one instead of failing. */
static void low_fd_limit_answers_every_pid(void **state)
{
	char *argv[110] = { (char *)env_path("RTID_BIN"), "resolve", "--json", "--jobs", "64" };
	static char pidstr[101][8];
	double t0 = now();
	int st, ok = 0, lines = 0;
	char line[1024];
	FILE *f;

	(void)state;
	for (int i = 0; i < 101; i++) {
		snprintf(pidstr[i], sizeof(pidstr[i]), "%d", 2000 + i);
		argv[5 + i] = pidstr[i];
	}
	setenv("FAKE_STDOUT", "4244\n", 1);
	unsetenv("FAKE_READY");
	/* valgrind needs fds of its own below the limit. */
	st = status_of(start(argv, getenv("RTID_UNDER_VALGRIND") ? 96 : 32));
	setenv("FAKE_READY", fifo, 1);
	f = fopen(out_path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		lines++;
		ok += strstr(line, "\"tid\":4244") && strstr(line, "\"error\":null");
	}
	fclose(f);
	print_message("fd limit %d, --jobs 64: %d of 101 pids answered (%d lines) in %.2f s\n",
		      getenv("RTID_UNDER_VALGRIND") ? 96 : 32, ok, lines, now() - t0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(ok, 101);
}

/* The library's own: rtid_kill_children ends every running child and its
 * group, as a signal handler needs; the children's bookkeeping stays sound. */
static void kill_children_from_the_library(void **state)
{
	char *argv[] = { (char *)env_path("FAKE_TOOL"), "--get-restore-tid", "--pid", "1", NULL };
	struct rtid__child c[2];
	pid_t pids[4];

	(void)state;
	setenv("FAKE_HANG", "2", 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(rtid__child_start(&c[i], argv[0], argv, 30), 0);
	await_ready(pids, 4);
	rtid_kill_children();
	/* The tools are reaped; their children (same group) died by the killpg
	 * and came to this subreaper: reaped here, or the alarm fails the test. */
	for (int i = 0; i < 4; i++)
		if (waitpid(pids[i], NULL, 0) != pids[i])
			assert_int_equal(errno, ECHILD);
	assert_int_equal(left(pids, 4), 0);
	for (int i = 0; i < 2; i++) {
		rtid__child_abort(&c[i], false); /* already reaped: closes the pipes only */
		assert_true(rtid__child_done(&c[i]));
	}
	rtid_kill_children(); /* nothing left: a no-op */
}

/* A program that cannot be executed is the exec's own errno, at once. */
static void exec_failure_is_its_errno(void **state)
{
	char *argv[] = { "/nonexistent/tool", NULL };
	struct rtid__child c;

	(void)state;
	assert_int_equal(rtid__child_start(&c, argv[0], argv, 30), -ENOENT);
	argv[0] = test_dir; /* a directory */
	assert_int_equal(rtid__child_start(&c, argv[0], argv, 30), -EACCES);
}

/* Out of fds with nothing running: the pid fails, clearly, and the others
 * are not held up. */
static void no_fds_and_nothing_running(void **state)
{
	struct rtid_config cfg = { RTID_CONFIG_INIT, .mode = RTID_MODE_DRIVER, .tool = env_path("FAKE_TOOL"),
				   .timeout_s = 10 };
	struct rlimit old, low;
	struct rtid_result r[2];
	struct rtid_ctx *ctx;
	int pids[2] = { 1001, 1002 }, held[64], nheld = 0, fd;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	/* Fill every fd below the limit: pipe2 then has none. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nheld < 64 && (fd = dup(0)) >= 0)
		held[nheld++] = fd;
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
	while (nheld > 0)
		close(held[--nheld]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	rtid_ctx_free(ctx);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].error, RTID_ERR_SPAWN_FAILED);
		assert_non_null(strstr(r[i].detail, "Too many open files"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(sigterm_leaves_nothing, reset),
		cmocka_unit_test_setup(sigint_leaves_nothing, reset),
		cmocka_unit_test_setup(sighup_leaves_nothing, reset),
		cmocka_unit_test_setup(ignored_signal_stays_ignored, reset),
		cmocka_unit_test_setup(shim_fallback_takes_no_stray_along, reset),
		cmocka_unit_test_setup(sigkill_takes_the_tools_along, reset),
		cmocka_unit_test_setup(grandchild_holding_stdout, reset),
		cmocka_unit_test_setup(low_fd_limit_answers_every_pid, reset),
		cmocka_unit_test_setup(kill_children_from_the_library, reset),
		cmocka_unit_test_setup(exec_failure_is_its_errno, reset),
		cmocka_unit_test_setup(no_fds_and_nothing_running, reset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
