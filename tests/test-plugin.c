/* rtid's CUDA plugin for CRIU, the pieces that need no CRIU: its record in
 * the image directory (what a restore trusts), the tool run as CRIU's plugin
 * runs it (fake-tool as cuda-checkpoint on PATH), the daemon's client (a real
 * rtid serve on the mocks, and a socket that never answers) and one call,
 * the daemon first and else the tool. plug_log is CRIU's: here a stand-in
 * that keeps the last lines, for the messages a user reads in CRIU's log. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "plugin/plugin.h"
#include "proto/serve-proto.h"
#include "plug-log.h"
#include "serve-harness.h"

static char dir[90], bin[320], path_env[4096];

static void put(const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Descriptors open in this process now. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void fake_reset(void)
{
	static const char *const vars[] = { "FAKE_STDOUT", "FAKE_STDERR", "FAKE_EXIT",
					    "FAKE_SIGNAL", "FAKE_LOG" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	logged[0] = '\0';
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR"), *fake = getenv("FAKE_TOOL");
	char link[400];

	(void)state;
	if (!fake)
		fail_msg("FAKE_TOOL is not set (run through meson test)");
	snprintf(dir, sizeof(dir), "%s/rtid-plugin-XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	assert_int_equal(mkdir(bin, 0700), 0);
	snprintf(link, sizeof(link), "%s/cuda-checkpoint", bin);
	assert_int_equal(symlink(fake, link), 0);
	snprintf(path_env, sizeof(path_env), "%s", getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", bin, 1);
	/* No daemon unless a test starts one. */
	snprintf(link, sizeof(link), "%s/no-daemon.sock", dir);
	setenv("RTID_SOCKET", link, 1);
	fake_reset();
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	setenv("PATH", path_env, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* --- the record --- */

#define RUN "1b4e28ba-2fa1-11d2-883f-0016d3cca427"

static void test_record_round_trip(void **state)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY), got[8];
	const int pids[] = { 42, 7, 1 };
	char p[512], text[256], run[PLUG_RUN_MAX];
	size_t n = 99;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(plug_record_write(fd, RUN, pids, 3), 0);
	snprintf(p, sizeof(p), "%s/" PLUG_RECORD, dir);
	assert_non_null(f = fopen(p, "r"));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	/* The head, the dump's CRIU run, a driver line (its version, or "-"
	 * where there is none), one line per task, in order. */
	assert_memory_equal(text, "rtid-cuda-plugin 1\nrun " RUN "\ndriver ",
			    sizeof("rtid-cuda-plugin 1\nrun " RUN "\ndriver ") - 1);
	assert_non_null(strstr(text, "\ntask 42\ntask 7\ntask 1\n"));
	assert_int_equal(plug_record_read(fd, got, 8, &n, run), 0);
	assert_int_equal(n, 3);
	assert_int_equal(got[0], 42);
	assert_int_equal(got[1], 7);
	assert_int_equal(got[2], 1);
	assert_string_equal(run, RUN);
	/* No task at all is a record too: nothing to restore side by side. */
	assert_int_equal(plug_record_write(fd, RUN, NULL, 0), 0);
	assert_int_equal(plug_record_read(fd, got, 8, &n, run), 0);
	assert_int_equal(n, 0);
	/* Nothing of the write is left beside it. */
	snprintf(p, sizeof(p), "%s/" PLUG_RECORD ".new", dir);
	assert_int_equal(access(p, F_OK), -1);
	/* A record of a dump before runs were recorded: read, with no run. */
	put(PLUG_RECORD, "rtid-cuda-plugin 1\ndriver -\ntask 5\n");
	assert_int_equal(plug_record_read(fd, got, 8, &n, run), 0);
	assert_string_equal(run, "");
	errno = EPERM; /* left from before: a success says 0 whatever errno holds */
	assert_int_equal(plug_record_remove(fd), 0);
	assert_int_equal(plug_record_read(fd, got, 8, &n, run), -ENOENT);
	assert_int_equal(plug_record_remove(fd), 0); /* none: nothing to do */
	close(fd);
}

/* An image of CRIU's own plugin has none: -ENOENT, the task-by-task restore. */
static void test_record_missing(void **state)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY), got[4];
	char run[PLUG_RUN_MAX];
	size_t n = 0;

	(void)state;
	assert_int_equal(plug_record_read(fd, got, 4, &n, run), -ENOENT);
	close(fd);
}

/* Anything but a record the plugin wrote is refused, never half-read. */
static char long_driver[3 * 4096];

static void test_record_refuses_malformed(void **state)
{
	const char *const bad[] = {
		"",                                               /* empty */
		"rtid-cuda-plugin 2\ndriver -\ntask 1\n",         /* another version */
		"rtid-cuda-plugin 1x\n",                          /* not the head */
		"rtid-cuda-plugin 1\ntask abc\n",                 /* no pid */
		"rtid-cuda-plugin 1\ntask -5\n",                  /* no pid */
		"rtid-cuda-plugin 1\ntask \n",                    /* nothing */
		"rtid-cuda-plugin 1\ntask 12345678901234567890\n", /* too long */
		"rtid-cuda-plugin 1\nnode 1\n",                   /* unknown line */
		"rtid-cuda-plugin 1\ntask 1\ntask 2\ntask 3\n",   /* more than max (2) */
		long_driver, /* a line longer than any the reader takes whole */
		"rtid-cuda-plugin 1\nrun \ntask 1\n",             /* an empty run */
		"rtid-cuda-plugin 1\nrun 12AB\ntask 1\n",         /* not CRIU's digits */
		"rtid-cuda-plugin 1\nrun Z0a1\ntask 1\n",         /* the first one not */
		"rtid-cuda-plugin 1\ndriver \ntask 1\n",         /* no version, not even "-" */
		"rtid-cuda-plugin 1\nrun ab cd\ntask 1\n",        /* two words */
		"rtid-cuda-plugin 1\nrun ab\nrun ab\ntask 1\n",   /* two runs */
		"rtid-cuda-plugin 1\nrun 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
	};
	int fd = open(dir, O_RDONLY | O_DIRECTORY), got[2];
	char run[PLUG_RUN_MAX] = "untouched";
	size_t n;

	(void)state;
	memcpy(long_driver, "rtid-cuda-plugin 1\ndriver ", 26);
	memset(long_driver + 26, '5', sizeof(long_driver) - 28);
	long_driver[sizeof(long_driver) - 2] = '\n';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(PLUG_RECORD, bad[i]);
		n = 77;
		if (plug_record_read(fd, got, 2, &n, run) != -EINVAL)
			fail_msg("record %zu (\"%s\") was not refused", i, bad[i]);
		assert_int_equal(n, 77); /* untouched */
		assert_string_equal(run, "untouched");
	}
	put(PLUG_RECORD, "rtid-cuda-plugin 1\nrun 0a-f9\ndriver 580.159.03\ntask 1\ntask 2\n");
	assert_int_equal(plug_record_read(fd, got, 2, &n, run), 0);
	assert_int_equal(n, 2);
	assert_string_equal(run, "0a-f9");
	close(fd);
}

/* A record is never written through a link planted in the image directory,
 * nor where the directory cannot be written: the link is replaced (its
 * target untouched), and where nothing can be written, the error, and no
 * earlier record left behind. */
static void test_record_write_refused(void **state)
{
	char p[512], tmp[512], target[512], run[PLUG_RUN_MAX];
	int fd = open(dir, O_RDONLY | O_DIRECTORY), got[2];
	const int pids[] = { 1 };
	struct stat st;
	size_t n;

	(void)state;
	snprintf(p, sizeof(p), "%s/" PLUG_RECORD, dir);
	snprintf(tmp, sizeof(tmp), "%s/" PLUG_RECORD ".new", dir);
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	assert_int_equal(symlink(target, p), 0);
	assert_int_equal(plug_record_write(fd, RUN, pids, 1), 0);
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* A link at the name written first: refused, and the record of the
	 * earlier dump is gone with it. */
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(plug_record_write(fd, RUN, pids, 1), -ELOOP);
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(plug_record_read(fd, got, 2, &n, run), -ENOENT);
	assert_int_equal(lstat(tmp, &st), -1); /* the planted link removed, not followed */
	assert_int_equal(plug_record_write(-1, RUN, pids, 1), -EBADF);
	close(fd);
}

static void test_nspid(void **state)
{
	(void)state;
	/* Ours: in our own namespace we are getpid() itself. */
	assert_int_equal(plug_nspid(getpid()), getpid());
	assert_int_equal(plug_nspid(0x3ffffff0), -1); /* no such process */
}

/* The last NSpid: entry, or none: blanks after it are not part of it; an
 * empty line, a number too long, a line too long to read whole, or a
 * status without the line give none. */
static void test_nspid_shapes(void **state)
{
	static char big[9000];

	(void)state;
	{
		char d[300];

		snprintf(d, sizeof(d), "%s/proc", dir);
		assert_int_equal(mkdir(d, 0755), 0);
		for (int pid = 10; pid <= 16; pid++) {
			snprintf(d, sizeof(d), "%s/proc/%d", dir, pid);
			assert_int_equal(mkdir(d, 0755), 0);
		}
	}
	put("proc/10/status", "Name:\tx\nNSpid:\t10\t3 \t\n");
	put("proc/11/status", "Name:\tx\nNSpid:\t\n");
	put("proc/12/status", "Name:\tx\nNSpid:\t12\t12345678901234567\n");
	put("proc/13/status", "Name:\tx\n");
	put("proc/14/status", "Name:\tx\nNSpid:\t14\t1\n");
	put("proc/16/status", "Name:\tx\nNSpid:16\n"); /* the number right after the colon */
	snprintf(big, sizeof(big), "Name:\tx\nNSpid:\t15%*s\t2\n", 8000, "");
	put("proc/15/status", big);
	{
		char root[200];

		snprintf(root, sizeof(root), "%s/proc", dir);
		assert_int_equal(plug_nspid_at(root, 10), 3);
		assert_int_equal(plug_nspid_at(root, 11), -1);
		assert_int_equal(plug_nspid_at(root, 12), -1);
		assert_int_equal(plug_nspid_at(root, 13), -1);
		assert_int_equal(plug_nspid_at(root, 14), 1);
		assert_int_equal(plug_nspid_at(root, 15), -1);
		assert_int_equal(plug_nspid_at(root, 16), 16);
	}
}

/* --- the tool --- */

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_tool_output_and_status(void **state)
{
	char out[64], small[6], p[512], line[256];
	FILE *f;

	(void)state;
	setenv("FAKE_STDOUT", "101\n", 1);
	setenv("FAKE_STDERR", "warn\n", 1);
	snprintf(p, sizeof(p), "%s/calls", dir);
	setenv("FAKE_LOG", p, 1);
	assert_int_equal(plug_tool_run(ARGS("--get-restore-tid", "--pid", "5"), out, sizeof(out)), 0);
	/* stdout and stderr in one pipe, as CRIU's plugin reads them. */
	assert_non_null(strstr(out, "101\n"));
	assert_non_null(strstr(out, "warn\n"));
	assert_non_null(f = fopen(p, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "--get-restore-tid --pid 5\n");
	/* Output beyond the buffer is cut (and drained: the tool is not stuck). */
	setenv("FAKE_STDOUT", "0123456789abcdef", 1);
	unsetenv("FAKE_STDERR");
	assert_int_equal(plug_tool_run(ARGS("-h"), small, sizeof(small)), 0);
	assert_string_equal(small, "01234");
	/* Its exit status, said in the log at debug level. */
	setenv("FAKE_EXIT", "3", 1);
	setenv("FAKE_STDOUT", "no such process", 1);
	logged[0] = '\0';
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), 3);
	assert_non_null(strstr(logged, "cuda-checkpoint exit 3: no such process"));
}

static void test_tool_killed_or_missing(void **state)
{
	char out[128];

	(void)state;
	setenv("FAKE_SIGNAL", "9", 1);
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), -1);
	assert_non_null(strstr(logged, "cuda-checkpoint killed by signal 9"));
	fake_reset();
	/* No tool on PATH: the child says why, exit 127, as a shell says it:
	 * never 1 nor 3, the tool's "no CUDA here". */
	setenv("PATH", dir, 1);
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), 127);
	assert_non_null(strstr(out, "execvp(\"cuda-checkpoint\") failed"));
	assert_false(plug_tool_usable());
	setenv("PATH", bin, 1);
}

/* The CRIU version in the running binary: a string of its own only. */
static void test_has_cstring(void **state)
{
	static const char cut[] = "\0014.2.1\0" "14.2\0" "x4.2\0" "4.2";
	static const char whole[] = "ELF\0" "4.21\0" "4.2\0" "tail";

	(void)state;
	assert_false(rtid__has_cstring(cut, sizeof(cut) - 1, "4.2")); /* none whole, one cut */
	assert_true(rtid__has_cstring(whole, sizeof(whole) - 1, "4.2"));
	assert_false(rtid__has_cstring(whole, sizeof(whole) - 1, "4.3"));
	assert_false(rtid__has_cstring("4.2\0", 4, "4.2")); /* no NUL before it */
	assert_false(rtid__has_cstring("\0" "4.2", 4, "4.2")); /* none after it in the buffer */
	assert_true(rtid__has_cstring("\0" "4.2\0", 5, "4.2"));
}

/* The same in a file (the running CRIU's binary), which leaves no
 * descriptor open in CRIU. */
static void test_file_has_cstring(void **state)
{
	static const char image[] = "ELF\0" "4.21\0" "4.2\0" "more";
	char p[512];
	FILE *f;
	int before = count_fds();

	(void)state;
	snprintf(p, sizeof(p), "%s/criu", dir);
	assert_non_null(f = fopen(p, "w"));
	fwrite(image, 1, sizeof(image) - 1, f);
	fclose(f);
	assert_int_equal(rtid__file_has_cstring(p, "4.2"), 1);
	assert_int_equal(rtid__file_has_cstring(p, "4.3"), 0);
	assert_int_equal(count_fds(), before);
	snprintf(p, sizeof(p), "%s/empty", dir);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_int_equal(rtid__file_has_cstring(p, "4.2"), 0);
	snprintf(p, sizeof(p), "%s/absent", dir);
	assert_int_equal(rtid__file_has_cstring(p, "4.2"), -ENOENT);
	assert_int_equal(count_fds(), before);
}

/* A tool that closes its output before it exits: its exit status is still
 * the answer (waited for, not guessed from the closed pipe). */
static void test_tool_exit_after_its_output(void **state)
{
	char out[128], tool[600];

	(void)state;
	snprintf(tool, sizeof(tool), "%s/late", dir);
	assert_int_equal(mkdir(tool, 0755), 0);
	put("late/cuda-checkpoint", "#!/bin/sh\necho 101\nexec >/dev/null 2>&1\n/usr/bin/sleep 0.3\nexit 3\n");
	snprintf(tool, sizeof(tool), "%s/late/cuda-checkpoint", dir);
	assert_int_equal(chmod(tool, 0755), 0);
	snprintf(tool, sizeof(tool), "%s/late", dir);
	setenv("PATH", tool, 1);
	assert_int_equal(plug_tool_run(ARGS("--get-restore-tid", "--pid", "5"), out, sizeof(out)), 3);
	assert_string_equal(out, "101\n");
	/* Output in two writes, past the buffer: cut at the buffer, never past it. */
	put("late/cuda-checkpoint", "#!/bin/sh\nprintf 01\n/usr/bin/sleep 0.2\nprintf 23456789\n");
	{
		char small[6];

		assert_int_equal(plug_tool_run(ARGS("-h"), small, sizeof(small)), 0);
		assert_string_equal(small, "01234");
	}
	/* More than a pipe holds after the buffer is full: read to its end, so
	 * that the tool ends as it would (exit 0), not by SIGPIPE. */
	put("late/cuda-checkpoint", "#!/bin/sh\nexec /usr/bin/head -c 300000 /dev/zero\n");
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), 0);
	setenv("PATH", bin, 1);
}

/* No pipe (out of descriptors), or a child reaped behind its back (SIGCHLD
 * ignored: CRIU's own handling): -1, said, never a made-up status. */
static void test_tool_no_pipe_no_wait(void **state)
{
	struct rlimit old, low;
	struct sigaction ign = { .sa_handler = SIG_IGN }, prev;
	char out[64];
	int hold[64], n = 0;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < 64 && (hold[n] = dup(0)) >= 0)
		n++;
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), -1);
	while (n)
		close(hold[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_non_null(strstr(logged, "no pipe for cuda-checkpoint: "));
	logged[0] = '\0';
	assert_int_equal(sigaction(SIGCHLD, &ign, &prev), 0);
	assert_int_equal(plug_tool_run(ARGS("-h"), out, sizeof(out)), -1);
	assert_int_equal(sigaction(SIGCHLD, &prev, NULL), 0);
	assert_non_null(strstr(logged, "cannot wait for cuda-checkpoint (pid "));
}

/* CRIU's plugin's init test: the tool runs and its help knows --action. */
/* A tree as /proc shows it: this process first, its children after, all
 * counted where fewer fit. */
static void test_descendants(void **state)
{
	int pids[16], kids[3];
	size_t n;

	(void)state;
	for (int i = 0; i < 3; i++) {
		if ((kids[i] = fork()) == 0) {
			close_range(0, ~0U, 0);
			pause();
			_exit(0);
		}
		assert_true(kids[i] > 0);
	}
	n = plug_descendants(getpid(), pids, 16);
	assert_true(n >= 4);
	assert_int_equal(pids[0], getpid());
	for (int i = 0; i < 3; i++) {
		bool found = false;

		for (size_t k = 1; k < n; k++)
			found |= pids[k] == kids[i];
		assert_true(found);
	}
	assert_int_equal(plug_descendants(getpid(), pids, 2), n); /* all counted, 2 kept */
	assert_int_equal(plug_descendants(getpid(), pids, 0), 0);
	assert_int_equal(plug_descendants(kids[0], pids, 16), 1); /* no children */
	for (int i = 0; i < 3; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
}

/* Batches with no daemon there: every pid asked alone, pids of any length
 * (fewer per message where the numbers are long). */
static void test_batch_without_daemon(void **state)
{
	enum { N = RTID__SVC_BATCH_MAX + 6 };
	int pids[N], values[N];
	enum plug_ans ans[N];
	static char msgs[N][160];

	(void)state;
	for (int i = 0; i < N; i++) {
		pids[i] = 2000000000 + i;
		ans[i] = ANS_VALUE;
	}
	plug_serve_batch(RTID__OP_RESTORE_TID, pids, N, ans, values, msgs);
	for (int i = 0; i < N; i++)
		assert_int_equal(ans[i], ANS_ALONE);
	plug_serve_open(); /* no daemon: nothing kept, the first question says why */
	plug_serve_close();
	/* A socket that takes the connection and never greets: given up at the
	 * query's timeout, nothing kept. */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char path[100];
		int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		snprintf(path, sizeof(path), "%s/mute.sock", dir);
		memcpy(sa.sun_path, path, strlen(path) + 1);
		assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(listen(l, 4), 0);
		setenv("RTID_SOCKET", path, 1);
		setenv("RTID_SERVICE_TIMEOUT", "0.1", 1);
		plug_serve_open();
		plug_serve_close();
		unsetenv("RTID_SERVICE_TIMEOUT");
		close(l);
	}
}

static void test_tool_usable(void **state)
{
	(void)state;
	setenv("FAKE_STDOUT", "usage: cuda-checkpoint --action ACTION --pid PID\n", 1);
	assert_true(plug_tool_usable());
	setenv("FAKE_STDOUT", "usage: cuda-checkpoint --toggle --pid PID\n", 1); /* an old one */
	assert_false(plug_tool_usable());
	setenv("FAKE_STDOUT", "usage: cuda-checkpoint --action\n", 1);
	setenv("FAKE_EXIT", "2", 1);
	assert_false(plug_tool_usable());
}

/* --- one call with no daemon: the tool answers --- */

/* CRIU's signals (its SIGCHLD handler, its --timeout alarm) interrupt the
 * reads and the wait: the tool's output comes whole all the same, nothing
 * added, and its exit status. A handler without SA_RESTART, every 20 ms,
 * while the tool takes a second before it answers. */
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void test_tool_interrupted(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval every = { { 0, 20000 }, { 0, 20000 } }, off = { { 0, 0 }, { 0, 0 } };
	char out[64], once[512];
	int rc;

	(void)state;
	snprintf(once, sizeof(once), "%s/slow-once", dir);
	setenv("FAKE_SLOW_ONCE", once, 1);
	setenv("FAKE_SLOW_S", "1", 1);
	setenv("FAKE_STDOUT", "101\n", 1);
	setenv("FAKE_EXIT", "3", 1);
	alarms = 0;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
	rc = plug_tool_run(ARGS("--get-restore-tid", "--pid", "5"), out, sizeof(out));
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	unsetenv("FAKE_SLOW_ONCE");
	unsetenv("FAKE_SLOW_S");
	fake_reset();
	assert_true(alarms > 10);
	assert_int_equal(rc, 3);
	assert_string_equal(out, "101\n");
}

static void test_restore_tid_from_the_tool(void **state)
{
	char name[32], val[32];
	int me = getpid();

	(void)state;
	assert_false(plug_serve_present());
	snprintf(name, sizeof(name), "FAKE_TID_%d", me);
	snprintf(val, sizeof(val), "%d", me);
	setenv(name, val, 1);
	assert_int_equal(plug_restore_tid(me), me);
	/* A tid that is no thread of the process is refused, whoever said it. */
	setenv(name, "1", 1);
	assert_int_equal(plug_restore_tid(me), -1);
	assert_non_null(strstr(logged, "restore tid 1 is no thread of it"));
	unsetenv(name);
	/* A non-zero exit: no CUDA in it (as CRIU's plugin reads it). */
	setenv("FAKE_EXIT", "1", 1);
	assert_int_equal(plug_restore_tid(me), 0);
	fake_reset();
	/* Any other exit: no word, said with the tool's status and output. */
	setenv("FAKE_EXIT", "2", 1);
	setenv("FAKE_STDOUT", "OS call failed", 1);
	assert_int_equal(plug_restore_tid(me), -1);
	assert_non_null(strstr(logged, "cuda-checkpoint exit 2, no word whether it has CUDA state: "
				       "OS call failed"));
	fake_reset();
	/* Exit 0 without a number: an error, said. */
	setenv("FAKE_STDOUT", "tid: twelve\n", 1);
	assert_int_equal(plug_restore_tid(me), -1);
	assert_non_null(strstr(logged, "cuda-checkpoint printed no tid: tid: twelve"));
	fake_reset();
	setenv("FAKE_SIGNAL", "9", 1);
	assert_int_equal(plug_restore_tid(me), -1);
	assert_non_null(strstr(logged, "cuda-checkpoint did not run or was killed: no word whether "
				       "it has CUDA state"));
}

static void test_state_from_the_tool(void **state)
{
	(void)state;
	setenv("FAKE_STDOUT", "running\n", 1);
	assert_int_equal(plug_get_state(1, 2), ST_RUNNING);
	setenv("FAKE_STDOUT", "locked\n", 1);
	assert_int_equal(plug_get_state(1, 2), ST_LOCKED);
	setenv("FAKE_STDOUT", "checkpointed\n", 1);
	assert_int_equal(plug_get_state(1, 2), ST_CHECKPOINTED);
	setenv("FAKE_STDOUT", "frozen\n", 1);
	assert_int_equal(plug_get_state(1, 2), ST_UNKNOWN);
	setenv("FAKE_STDOUT", "no CUDA\n", 1);
	setenv("FAKE_EXIT", "4", 1);
	logged[0] = '\0';
	assert_int_equal(plug_get_state(10, 20), ST_UNKNOWN);
	assert_non_null(strstr(logged, "pid 10: no state for thread 20: no CUDA"));
}

static void test_action_by_the_tool(void **state)
{
	char p[512], line[256], msg[200];
	FILE *f;

	(void)state;
	snprintf(p, sizeof(p), "%s/acts", dir);
	setenv("FAKE_LOG", p, 1);
	assert_int_equal(plug_act(RTID__OP_LOCK, 33, 5000, msg, sizeof(msg)), 0);
	assert_int_equal(plug_act_tool(RTID__OP_CHECKPOINT, 33, 0, msg, sizeof(msg)), 0);
	assert_non_null(f = fopen(p, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	/* Lock's timeout is given on, as CRIU's plugin gives it. */
	assert_string_equal(line, "--action lock --pid 33 --timeout 5000\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "--action checkpoint --pid 33\n");
	fclose(f);
	setenv("FAKE_EXIT", "9", 1);
	setenv("FAKE_STDOUT", "Could not checkpoint", 1);
	assert_int_equal(plug_act(RTID__OP_CHECKPOINT, 33, 0, msg, sizeof(msg)), -1);
	assert_string_equal(msg, "cuda-checkpoint exit 9: Could not checkpoint");
}

/* --- the daemon --- */

#define CASE_HEAD "title plugin\nproves plugin\ndriver 580.159.03\nbackend api\n"
static const char basic_case[] = CASE_HEAD
	"task 100 100 python3\ntask 100 101 cuda00001400006\n"
	"answer 100 tid 101\nanswer 200 none\nanswer 600 exit 700\n"
	"expect driver 100 tid=101\n";
static const int basic_pids[] = { 100, 200, 600, 0 };
static struct daemon d;

static int setup_daemon(void **state)
{
	setup(state);
	hd_prepare(&d, basic_case, basic_pids);
	return 0;
}

static int teardown_daemon(void **state)
{
	hd_cleanup(&d);
	unsetenv("RTID_SERVICE_TIMEOUT");
	unsetenv("RTID_SERVICE_ACTION_TIMEOUT");
	return teardown(state);
}

static void test_daemon_answers(void **state)
{
	char msg[300];
	int v = -7;

	(void)state;
	hd_start(&d, ((const char *const[]){ "--actions", NULL }));
	setenv("RTID_SOCKET", d.sock, 1);
	assert_true(plug_serve_present());
	assert_int_equal(plug_serve_ask(RTID__OP_RESTORE_TID, 100, 0, &v, msg, sizeof(msg)),
			 ANS_VALUE);
	assert_int_equal(v, 101);
	/* The driver's "none": no CUDA, no tool run. */
	assert_int_equal(plug_serve_ask(RTID__OP_RESTORE_TID, 200, 0, &v, msg, sizeof(msg)),
			 ANS_NONE);
	assert_int_equal(plug_restore_tid(200), 0);
	/* Another driver error on a query: the tool's turn, with why. */
	assert_int_equal(plug_serve_ask(RTID__OP_RESTORE_TID, 600, 0, &v, msg, sizeof(msg)),
			 ANS_TO_TOOL);
	assert_non_null(strstr(msg, "get-restore-tid --pid 600: driver error"));
	/* A tid the daemon names for a process of its (fake) proc, but no thread
	 * of the real one: refused. */
	logged[0] = '\0';
	assert_int_equal(plug_restore_tid(100), -1);
	assert_non_null(strstr(logged, "restore tid 101 is no thread of it"));
	assert_int_equal(plug_get_state(100, 100), ST_RUNNING);
	assert_int_equal(plug_act(RTID__OP_LOCK, 100, 10000, msg, sizeof(msg)), 0);
	assert_int_equal(plug_get_state(100, 100), ST_LOCKED);
	assert_int_equal(plug_serve_ask(RTID__OP_CHECKPOINT, 100, 0, &v, msg, sizeof(msg)),
			 ANS_VALUE);
	assert_int_equal(v, 0);
	/* The driver refused a second checkpoint: failed, never the tool's turn
	 * (an action is never run twice). */
	assert_int_equal(plug_act(RTID__OP_CHECKPOINT, 100, 0, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "present state"));
	assert_int_equal(hd_log_count(&d, "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""), 0);
}

/* Actions off (no --actions): the daemon denies, nothing was started, the
 * tool runs it. */
static void test_daemon_denies_actions(void **state)
{
	char msg[300];
	int v;

	(void)state;
	hd_start(&d, NULL);
	setenv("RTID_SOCKET", d.sock, 1);
	assert_int_equal(plug_serve_ask(RTID__OP_LOCK, 100, 0, &v, msg, sizeof(msg)), ANS_TO_TOOL);
	assert_non_null(strstr(msg, "rtid serve at "));
	logged[0] = '\0';
	assert_int_equal(plug_act(RTID__OP_LOCK, 100, 0, msg, sizeof(msg)), 0); /* fake tool: 0 */
	assert_non_null(strstr(logged, ": asking cuda-checkpoint"));
}

/* A socket that takes the connection and never answers: no answer within
 * RTID_SERVICE_TIMEOUT. The call may be inside the driver for all the plugin
 * can tell: it fails, said, and the tool is never run beside it (queries
 * too: the plugin can fail the dump, unlike the shim). */
static void test_silent_socket(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[300], acts[512];
	int fd, v;

	(void)state;
	snprintf(acts, sizeof(acts), "%s/acts", dir);
	setenv("FAKE_LOG", acts, 1);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/silent.sock", dir);
	assert_true((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	setenv("RTID_SOCKET", sa.sun_path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "0.2", 1);
	assert_true(plug_serve_present());
	assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 100, 0, &v, msg, sizeof(msg)),
			 ANS_FAILED);
	assert_non_null(strstr(msg, "no answer"));
	assert_non_null(strstr(msg, "cuda-checkpoint is not run beside it"));
	logged[0] = '\0';
	assert_int_equal(plug_get_state(100, 100), ST_UNKNOWN);
	assert_non_null(strstr(logged, "pid 100: no state for thread 100: rtid serve at "));
	assert_int_equal(plug_restore_tid(getpid()), -1);
	assert_non_null(strstr(logged, "no restore tid: rtid serve at "));
	setenv("RTID_SERVICE_ACTION_TIMEOUT", "0.2", 1);
	assert_int_equal(plug_act(RTID__OP_LOCK, 100, 0, msg, sizeof(msg)), -1);
	assert_int_equal(access(acts, F_OK), -1); /* the tool never ran */
	unsetenv("RTID_SERVICE_ACTION_TIMEOUT");
	close(fd);
	/* Nothing listening: cannot connect, nothing asked: the tool's turn. */
	assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 100, 0, &v, msg, sizeof(msg)),
			 ANS_TO_TOOL);
	assert_non_null(strstr(msg, "cannot connect"));
	setenv("FAKE_STDOUT", "locked\n", 1);
	logged[0] = '\0';
	assert_int_equal(plug_get_state(100, 100), ST_LOCKED);
	assert_int_equal(access(acts, F_OK), 0);
	/* The operator's one clue that the daemon was passed by: said, with why. */
	assert_non_null(strstr(logged, "cannot connect"));
	assert_non_null(strstr(logged, ": asking cuda-checkpoint\n"));
}

/* A daemon that says what it is told, one connection: the lines of said,
 * each its own message, then it hangs up. */
static pid_t scripted_daemon(const char *sock, const char *const *said)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, c;
	pid_t pid;
	char req[256];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	unlink(sock);
	assert_true((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	if ((pid = fork()) == 0) {
		if ((c = accept(fd, NULL, NULL)) < 0)
			_exit(1);
		for (size_t i = 0; said[i]; i++) {
			if (send(c, said[i], strlen(said[i]), MSG_NOSIGNAL) < 0)
				_exit(1);
			/* The client's hello and its request, read before any
			 * answer: a socket closed with either unread would
			 * reset the connection instead of ending it. */
			if (i == 0 && (recv(c, req, sizeof(req), 0) <= 0 ||
				       recv(c, req, sizeof(req), 0) <= 0))
				_exit(1);
		}
		_exit(0);
	}
	close(fd);
	return pid;
}

/* An action the daemon said it started is never the tool's turn, whatever
 * comes after: an answer lost, or an outcome it cannot tell, is a failure
 * that says it is not run again. */
static void test_started_then_no_outcome(void **state)
{
	char sock[200], msg[300];
	int v = -5, st, r;
	pid_t pid;

	(void)state;
	snprintf(sock, sizeof(sock), "%s/scripted.sock", dir);
	setenv("RTID_SOCKET", sock, 1);
	pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
		"started checkpoint 7 1000", NULL });
	r = plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg));
	assert_int_equal(r, ANS_FAILED);
	assert_non_null(strstr(msg, "the answer was lost"));
	assert_non_null(strstr(msg, "not run again"));
	assert_int_equal(v, -5);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
		"started checkpoint 7 1000", "unknown checkpoint 7 timeout x", NULL });
	assert_int_equal(plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg)), ANS_FAILED);
	assert_non_null(strstr(msg, "could not tell its outcome (timeout)"));
	assert_int_equal(v, -5);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Started, then refused or failed by the driver: failed, never the
	 * tool's turn, the driver's words said. */
	pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
		"started checkpoint 7 1000", "denied checkpoint 7 not yours", NULL });
	assert_int_equal(plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg)), ANS_FAILED);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
		"started checkpoint 7 1000", "cuerr checkpoint 7 999 CUDA_ERROR_UNKNOWN it broke", NULL });
	assert_int_equal(plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg)), ANS_FAILED);
	assert_non_null(strstr(msg, "it broke (CUDA_ERROR_UNKNOWN)"));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* A state the plugin has no name for (the driver's "failed") is
	 * unknown, never taken for running. */
	pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
		"state get-state 7 failed", NULL });
	assert_int_equal(plug_get_state(7, 7), ST_UNKNOWN);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* Waits set to what is no number of seconds (a letter after it, none,
	 * more than a day) are the defaults: the answer is still taken. */
	{
		static const char *const bad[] = { "2x", "0", "-3", "90000", "" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			setenv("RTID_SERVICE_TIMEOUT", bad[i], 1);
			setenv("RTID_SERVICE_ACTION_TIMEOUT", bad[i], 1);
			pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
				"started checkpoint 7 1000", "done checkpoint 7", NULL });
			v = -5;
			assert_int_equal(plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg)),
					 ANS_VALUE);
			assert_int_equal(v, 0);
			assert_int_equal(waitpid(pid, &st, 0), pid);
			pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions",
				"state get-state 7 locked", NULL });
			assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 7, 0, &v, msg, sizeof(msg)),
					 ANS_VALUE);
			assert_int_equal(waitpid(pid, &st, 0), pid);
		}
		unsetenv("RTID_SERVICE_TIMEOUT");
		unsetenv("RTID_SERVICE_ACTION_TIMEOUT");
		v = -5;
	}
	/* Refused before it started, for the daemon's own reasons: the tool's
	 * turn. */
	{
		static const char *const own[] = { "busy", "not-served", "unsupported", "protocol-1",
						   "worker-failed", "no-record" };

		for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
			char line[80];

			snprintf(line, sizeof(line), "error checkpoint 7 %s x", own[i]);
			pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions", line,
									  NULL });
			if (plug_serve_ask(RTID__OP_CHECKPOINT, 7, 0, &v, msg, sizeof(msg)) !=
			    ANS_TO_TOOL)
				fail_msg("error %s was not the tool's turn", own[i]);
			assert_int_equal(waitpid(pid, &st, 0), pid);
		}
	}
	unsetenv("RTID_SOCKET");
}

/* An earlier call about the process still inside the driver (error
 * in-driver: a hung call, or one a previous daemon left there), and a
 * query's own call that timed out or crashed in the driver: the plugin's
 * call fails with the daemon's reason, query or action, and the tool is
 * never run beside that call. */
static void test_never_beside_the_driver(void **state)
{
	static const struct {
		int op;
		const char *reason;
	} said[] = {
		{ RTID__OP_RESTORE_TID, "in-driver an earlier call is still inside the driver" },
		{ RTID__OP_RESTORE_TID, "timeout the driver did not answer in time" },
		{ RTID__OP_RESTORE_TID, "worker-crashed x" },
		{ RTID__OP_RESTORE_TID, "process-changed x" },
		{ RTID__OP_GET_STATE, "in-driver x" },
		{ RTID__OP_LOCK, "in-driver x" },
		{ RTID__OP_UNLOCK, "in-driver x" },
		{ RTID__OP_RESTORE, "shutting-down x" },
	};
	char sock[200], msg[300], acts[512], line[160];
	int me = getpid(), st;
	pid_t pid;

	(void)state;
	snprintf(acts, sizeof(acts), "%s/acts", dir);
	setenv("FAKE_LOG", acts, 1);
	snprintf(sock, sizeof(sock), "%s/scripted.sock", dir);
	setenv("RTID_SOCKET", sock, 1);
	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		snprintf(line, sizeof(line), "error %s %d %s", rtid__svc_op_name(said[i].op), me,
			 said[i].reason);
		pid = scripted_daemon(sock, (const char *const[]){ "hello 2 actions", line, NULL });
		logged[0] = '\0';
		msg[0] = '\0';
		switch (said[i].op) {
		case RTID__OP_RESTORE_TID:
			assert_int_equal(plug_restore_tid(me), -1);
			break;
		case RTID__OP_GET_STATE:
			assert_int_equal(plug_get_state(me, me), ST_UNKNOWN);
			break;
		default:
			assert_int_equal(plug_act(said[i].op, me, 0, msg, sizeof(msg)), -1);
			break;
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		strncat(logged, msg, sizeof(logged) - strlen(logged) - 1);
		if (!strstr(logged, "cuda-checkpoint is not run beside it"))
			fail_msg("%s: not said as such: %s", line, logged);
		assert_null(strstr(logged, "asking cuda-checkpoint"));
		if (access(acts, F_OK) == 0)
			fail_msg("%s: the tool ran", line);
	}
	unsetenv("RTID_SOCKET");
}

/* A daemon of someone else's (not root's, not ours) could lie: not believed,
 * the tool's turn; unless RTID_SERVE_UID names its owner. Root only (the
 * listener drops to nobody). */
static void test_untrusted_daemon(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[300];
	int release, v;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/other.sock", dir);
	assert_int_equal(chmod(dir, 01777), 0); /* nobody binds its socket here */
	pid = hd_listener_as(65534, sa.sun_path, &release);
	setenv("RTID_SOCKET", sa.sun_path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "0.2", 1);
	unsetenv("RTID_SERVE_UID");
	assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 100, 0, &v, msg, sizeof(msg)),
			 ANS_TO_TOOL);
	assert_non_null(strstr(msg, "not trusted: it runs as uid 65534, not root"));
	setenv("RTID_SERVE_UID", "12", 1); /* someone else */
	assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 100, 0, &v, msg, sizeof(msg)),
			 ANS_TO_TOOL);
	assert_non_null(strstr(msg, "not trusted"));
	setenv("RTID_SERVE_UID", "65534", 1); /* believed: asked, and silent: failed */
	assert_int_equal(plug_serve_ask(RTID__OP_GET_STATE, 100, 0, &v, msg, sizeof(msg)),
			 ANS_FAILED);
	assert_non_null(strstr(msg, "no answer"));
	unsetenv("RTID_SERVE_UID");
	unsetenv("RTID_SERVICE_TIMEOUT");
	hd_listener_end(pid, release);
}

/* --- the settings file --- */

static void test_settings_file(void **state)
{
	char p[512];

	(void)state;
	unsetenv("RTID_SERVE_UID");
	unsetenv("RTID_SERVICE_TIMEOUT");
	setenv("RTID_SOCKET", "/from/env.sock", 1);
	put("shim.conf", "# comment\nRTID_SOCKET=/from/file.sock\nRTID_SERVICE_TIMEOUT=3.5 \t\n"
			 "OTHER=1\nnoequals\nRTID_SERVE_UID=4242\n");
	snprintf(p, sizeof(p), "%s/shim.conf", dir);
	chmod(p, 0600);
	setenv("RTID_SHIM_CONF", p, 1);
	plug_serve_settings(plug_conf_note);
	/* The environment wins; the file fills in the rest, blanks trimmed. */
	assert_string_equal(getenv("RTID_SOCKET"), "/from/env.sock");
	assert_string_equal(getenv("RTID_SERVICE_TIMEOUT"), "3.5");
	assert_string_equal(getenv("RTID_SERVE_UID"), "4242");
	assert_null(getenv("OTHER"));
	/* Each line that is no setting, said in CRIU's log with its line and
	 * the name it holds, as the shim says it in its own. */
	assert_non_null(strstr(logged, "shim.conf:4: not a setting: 'OTHER'"));
	assert_non_null(strstr(logged, "shim.conf:5: not a setting: 'noequals'"));
	/* Lines that stand indented, as the shim takes them. */
	unsetenv("RTID_SERVE_UID");
	put("shim.conf", "  \tRTID_SERVE_UID=4243\n");
	plug_serve_settings(plug_conf_note);
	assert_string_equal(getenv("RTID_SERVE_UID"), "4243");
	/* A link to a good file is not followed, as the shim follows none. */
	{
		char link[600];

		unsetenv("RTID_SERVE_UID");
		snprintf(link, sizeof(link), "%s/link.conf", dir);
		assert_int_equal(symlink(p, link), 0);
		setenv("RTID_SHIM_CONF", link, 1);
		logged[0] = '\0';
		plug_serve_settings(plug_conf_note);
		assert_null(getenv("RTID_SERVE_UID"));
		assert_non_null(strstr(logged, "link.conf: Too many levels of symbolic links: ignored"));
		setenv("RTID_SHIM_CONF", p, 1);
	}
	/* Only the plugin's own settings reach CRIU's environment. */
	put("shim.conf", "RTID_MODE=scan\nRTID_PLUGIN_NO_CUDA_ON_ERROR=1\n");
	unsetenv("RTID_MODE");
	plug_serve_settings(plug_conf_note);
	assert_null(getenv("RTID_MODE"));
	assert_string_equal(getenv("RTID_PLUGIN_NO_CUDA_ON_ERROR"), "1");
	unsetenv("RTID_PLUGIN_NO_CUDA_ON_ERROR");
	put("shim.conf", "RTID_SERVE_UID=4242\n");
	/* A file others may write is not believed. */
	unsetenv("RTID_SERVE_UID");
	chmod(p, 0620);
	plug_serve_settings(plug_conf_note);
	assert_null(getenv("RTID_SERVE_UID"));
	/* Set and empty: no file; a directory is none either. */
	setenv("RTID_SHIM_CONF", "", 1);
	plug_serve_settings(plug_conf_note);
	setenv("RTID_SHIM_CONF", dir, 1);
	plug_serve_settings(plug_conf_note);
	assert_null(getenv("RTID_SERVE_UID"));
	setenv("RTID_SHIM_CONF", "", 1);
	unsetenv("RTID_SERVICE_TIMEOUT");
	/* A name is the whole name; a carriage return is a blank; a long
	 * value is taken whole, as the shim takes it (and then judged: here no
	 * number of seconds, so the wait is the default). */
	{
		static char text[12000];
		size_t n = (size_t)snprintf(text, sizeof(text), "RTID_SERVE_UIDX=1\nRTID_SERVE_UID=77\r\n"
					    "RTID_SERVICE_TIMEOUT=");
		memset(text + n, '9', 9000);
		snprintf(text + n + 9000, sizeof(text) - n - 9000, "\n");
		put("shim.conf", text);
	}
	chmod(p, 0600);
	setenv("RTID_SHIM_CONF", p, 1);
	plug_serve_settings(plug_conf_note);
	assert_string_equal(getenv("RTID_SERVE_UID"), "77");
	assert_null(getenv("RTID_SERVE_UIDX"));
	assert_int_equal(strlen(getenv("RTID_SERVICE_TIMEOUT")), 9000);
	unsetenv("RTID_SERVICE_TIMEOUT");
	unsetenv("RTID_SERVE_UID");
	/* No file there; a file of another user's (root only). */
	setenv("RTID_SHIM_CONF", "/nonexistent/shim.conf", 1);
	plug_serve_settings(plug_conf_note);
	assert_null(getenv("RTID_SERVE_UID"));
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 4321, 0), 0);
		setenv("RTID_SHIM_CONF", p, 1);
		plug_serve_settings(plug_conf_note);
		assert_null(getenv("RTID_SERVE_UID"));
	}
	setenv("RTID_SHIM_CONF", "", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_refuses_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_write_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nspid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nspid_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_output_and_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_killed_or_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_exit_after_its_output, setup, teardown),
		cmocka_unit_test(test_has_cstring),
		cmocka_unit_test_setup_teardown(test_file_has_cstring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_no_pipe_no_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_usable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_without_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descendants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_tid_from_the_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_from_the_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_by_the_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_answers, setup_daemon, teardown_daemon),
		cmocka_unit_test_setup_teardown(test_daemon_denies_actions, setup_daemon,
						teardown_daemon),
		cmocka_unit_test_setup_teardown(test_silent_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_started_then_no_outcome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_beside_the_driver, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
