/* The fake /proc looks like the kernel's where the resolver reads, keeps one
 * snapshot per open handle, takes faults at run time, and unmounts cleanly. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakeproc-run.h"
#include "helpers.h"

extern char **environ;

static char *dir;
static char mnt[512], casefile[512];
static pid_t daemon_pid = -1;

static const char case_text[] =
	"title fakeproc test\nproves fakeproc behaves\ndriver 580.65.06\n"
	"task 42 42 python3\ntask 42 43 cuda-EvtHandlr\ntask 42 44 cuda00001400006\n"
	"answer 42 tid 44\nexpect all 42 tid=44\n";

static pid_t spawn_fakeproc(const char *cf, const char *mp, int *status_if_failed)
{
	return fakeproc_start(env_path("FAKEPROC"), cf, mp, status_if_failed);
}

static int setup(void **state)
{
	int st;

	(void)state;
	dir = tmp_dir();
	snprintf(mnt, sizeof(mnt), "%s/proc", dir);
	snprintf(casefile, sizeof(casefile), "%s/t.case", dir);
	write_file(dir, "t.case", case_text);
	mkdir(mnt, 0755);
	daemon_pid = spawn_fakeproc(casefile, mnt, &st);
	return daemon_pid > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
		fuse_detach(mnt);
	}
	rm_tree(dir);
	free(dir);
	return 0;
}

static ssize_t read_rel(const char *rel, char *buf, size_t len)
{
	char path[1024];
	ssize_t n, total = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + total, len - (size_t)total)) > 0)
		total += n;
	close(fd);
	return n < 0 ? -errno : total;
}

static void control(const char *line)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/rtid-control", mnt);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
}

/* Whether dir (under the mount) lists name. */
static bool listed(const char *sub, const char *name)
{
	char path[1024];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", mnt, sub);
	d = opendir(path);
	while (d && (de = readdir(d)))
		found = found || strcmp(de->d_name, name) == 0;
	if (d)
		closedir(d);
	return found;
}

static void looks_like_proc(void **state)
{
	char buf[256], path[1024];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/42/task/44/comm", mnt);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0); /* as the kernel reports */
	assert_int_equal(read_rel("42/task/44/comm", buf, sizeof(buf)), 16);
	assert_memory_equal(buf, "cuda00001400006\n", 16);
	snprintf(path, sizeof(path), "%s/42/task", mnt);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(read_rel("driver/nvidia/version", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "580.65.06"));
	assert_true(read_rel("42/status", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "Threads:\t3"));
	assert_int_equal(read_rel("99/task", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(read_rel("42/task/99/comm", buf, sizeof(buf)), -ENOENT);
	/* A thread is reachable as /proc/TID, as on the kernel, but not listed;
	 * its status names its process. */
	assert_true(read_rel("43/status", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "Tgid:\t42\n"));
	assert_non_null(strstr(buf, "Pid:\t43\n"));
	assert_int_equal(read_rel("43/comm", buf, sizeof(buf)), 15);
	assert_memory_equal(buf, "cuda-EvtHandlr\n", 15);
	assert_false(listed("", "43"));
	assert_true(listed("", "42"));
	assert_true(listed("43/task", "44")); /* the whole group, as the kernel lists */
}

static void one_snapshot_per_handle(void **state)
{
	char path[1024], a[32] = "", b[32] = "";
	int fa, fb;

	(void)state;
	control("reset\nclear\nfault rename 42 44 renamed at-read 2\n");
	snprintf(path, sizeof(path), "%s/42/task/44/comm", mnt);
	fa = open(path, O_RDONLY);
	fb = open(path, O_RDONLY);
	assert_true(fa >= 0 && fb >= 0);
	/* Partial reads of the first handle never mix in the new name. */
	assert_int_equal(read(fa, a, 4), 4);
	assert_int_equal(read(fb, b, sizeof(b)), 8);
	assert_int_equal(read(fa, a + 4, sizeof(a) - 4), 12);
	assert_string_equal(a, "cuda00001400006\n");
	assert_string_equal(b, "renamed\n");
	close(fa);
	close(fb);
}

static void control_reads_back_and_faults_fire(void **state)
{
	char buf[1024];
	int fd;

	(void)state;
	control("reset\nclear\nfault eacces 42 43 open\nfault eio 42 44 read\n"
		"fault short-read 42 42\n");
	assert_true(read_rel("rtid-control", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "fault eacces 42 43 open"));
	assert_non_null(strstr(buf, "fault eio 42 44 read"));
	assert_int_equal(read_rel("42/task/43/comm", buf, sizeof(buf)), -EACCES);
	assert_int_equal(read_rel("42/task/44/comm", buf, sizeof(buf)), -EIO);
	snprintf(buf, sizeof(buf), "%s/42/task/42/comm", mnt);
	fd = open(buf, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 1);
	close(fd);
	/* A bad line is refused. */
	snprintf(buf, sizeof(buf), "%s/rtid-control", mnt);
	fd = open(buf, O_WRONLY);
	assert_int_equal(write(fd, "fault teleport 1\n", 17), -1);
	assert_int_equal(errno, EINVAL);
	close(fd);
	control("clear\n");
}

/* A comm opened before its thread exited reads ESRCH (the kernel's
 * get_proc_task fails), not the old name; the thread leaves the listing and
 * Threads:. */
static void exited_thread_reads_esrch(void **state)
{
	char path[1024], buf[64];
	int fd;

	(void)state;
	control("reset\nclear\nfault exit-thread 42 43 after-readdir\n");
	snprintf(path, sizeof(path), "%s/42/task/43/comm", mnt);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(listed("42/task", "43")); /* this listing makes it exit */
	assert_int_equal(read(fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, ESRCH);
	close(fd);
	assert_false(listed("42/task", "43"));
	assert_int_equal(read_rel("42/task/43/comm", buf, sizeof(buf)), -ENOENT);
	assert_true(read_rel("42/status", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "Threads:\t2\n"));
	control("reset\nclear\n");
}

/* Task names of one getdents64 call on fd, appended to out (a space before each). */
static int getdents_names(int fd, char *out, size_t len)
{
	char buf[4096];
	ssize_t n = getdents64(fd, buf, sizeof(buf));
	int count = 0;

	for (ssize_t o = 0; o < n;) {
		struct dirent64 *d = (struct dirent64 *)(buf + o);

		if (d->d_name[0] != '.') {
			snprintf(out + strlen(out), len - strlen(out), " %s", d->d_name);
			count++;
		}
		o += d->d_reclen;
	}
	return n < 0 ? -1 : count;
}

/* Chunks resume as proc_task_readdir does: from the saved tid while it is
 * there, else by position, so threads that never exited can be skipped. */
static void chunked_walk_resumes_like_the_kernel(void **state)
{
	char cf[700], mp[600], got[256] = "", quiet[256];
	int st, fd;
	pid_t d;

	(void)state;
	snprintf(cf, sizeof(cf), "%s/chunk.case", dir);
	snprintf(mp, sizeof(mp), "%s/chunk", dir);
	write_file(dir, "chunk.case", "title t\nproves p\n"
		   "task 70 70 a\ntask 70 71 b\ntask 70 72 c\ntask 70 73 d\ntask 70 74 e\n"
		   "task 70 75 f\nfault readdir-chunk 70 2\nexpect all * error=-\n");
	mkdir(mp, 0755);
	d = spawn_fakeproc(cf, mp, &st);
	assert_true(d > 0);
	snprintf(cf, sizeof(cf), "%s/70/task", mp);
	/* Quiet: chunks of 2, resumed from the saved tid, all six. */
	fd = open(cf, O_RDONLY | O_DIRECTORY);
	while (getdents_names(fd, got, sizeof(got)) > 0)
		;
	close(fd);
	snprintf(quiet, sizeof(quiet), "%s", got);
	/* 71 and 72 (the saved tid) exit after the first chunk: the walk resumes
	 * at the third thread of [70 73 74 75], skipping 73, which never exited. */
	write_file(dir, "chunk/rtid-control",
		   "fault exit-thread 70 71 after-readdir\nfault exit-thread 70 72 after-readdir\n");
	got[0] = '\0';
	fd = open(cf, O_RDONLY | O_DIRECTORY);
	while (getdents_names(fd, got, sizeof(got)) > 0)
		;
	close(fd);
	kill(d, SIGTERM);
	waitpid(d, &st, 0);
	assert_string_equal(quiet, " 70 71 72 73 74 75");
	assert_string_equal(got, " 70 71 74 75");
}

/* A fault with a probability fails about that share of accesses, and the
 * same ones again after a reset (the generator restarts from the seed). */
static void seeded_probability(void **state)
{
	char first[64], again[64], buf[64];
	int fails = 0;

	(void)state;
	control("reset\nclear\nfault eio 42 43 read probability 0.5\n");
	for (int i = 0; i < 64; i++)
		first[i] = read_rel("42/task/43/comm", buf, sizeof(buf)) == -EIO;
	control("reset\n");
	for (int i = 0; i < 64; i++) {
		again[i] = read_rel("42/task/43/comm", buf, sizeof(buf)) == -EIO;
		fails += again[i];
	}
	assert_memory_equal(first, again, sizeof(first));
	assert_true(fails > 16 && fails < 48);
	assert_true(read_rel("rtid-control", buf, sizeof(buf)) > 0);
	control("clear\n");
}

static void bad_case_and_bad_mountpoint(void **state)
{
	char other[1024], bad[1024];
	int st = 0;

	(void)state;
	write_file(dir, "bad.case", "title x\nproves y\ntask 1 x python3\n");
	snprintf(bad, sizeof(bad), "%s/bad.case", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	mkdir(other, 0755);
	assert_int_equal(spawn_fakeproc(bad, other, &st), -1);
	assert_int_equal(WEXITSTATUS(st), 2);
	assert_int_equal(spawn_fakeproc(casefile, "/nonexistent/mnt", &st), -1);
	assert_int_equal(WEXITSTATUS(st), 1);
}

static void sigterm_unmounts(void **state)
{
	int st;

	(void)state;
	assert_true(mounted(mnt));
	assert_int_equal(kill(daemon_pid, SIGTERM), 0);
	assert_int_equal(waitpid(daemon_pid, &st, 0), daemon_pid);
	daemon_pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_false(mounted(mnt)); /* unmounted by fakeproc itself */
}

/* Wait until path is no longer a mount point: mountinfo signals every change
 * of the mount table with POLLPRI. False when it stays mounted for 10 s. */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool wait_unmounted(const char *path)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	struct pollfd p = { fd, POLLPRI, 0 };
	double end = now_s() + 10 * time_factor();

	while (mounted(path) && now_s() < end)
		poll(&p, 1, 100);
	close(fd);
	return !mounted(path);
}

static void sigkill_leaves_no_mount(void **state)
{
	int st;

	(void)state;
	daemon_pid = spawn_fakeproc(casefile, mnt, &st);
	assert_true(daemon_pid > 0);
	assert_true(mounted(mnt));
	assert_int_equal(kill(daemon_pid, SIGKILL), 0);
	assert_int_equal(waitpid(daemon_pid, &st, 0), daemon_pid);
	daemon_pid = -1;
	assert_true(wait_unmounted(mnt)); /* fusermount3's auto_unmount */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(looks_like_proc),
		cmocka_unit_test(one_snapshot_per_handle),
		cmocka_unit_test(control_reads_back_and_faults_fire),
		cmocka_unit_test(seeded_probability),
		cmocka_unit_test(bad_case_and_bad_mountpoint),
		cmocka_unit_test(exited_thread_reads_esrch),
		cmocka_unit_test(chunked_walk_resumes_like_the_kernel),
		cmocka_unit_test(sigterm_unmounts),
		cmocka_unit_test(sigkill_leaves_no_mount),
	};
	const char *why = fuse_unusable();

	if (why)
		return skip_or_fail("test-fakeproc", why);
	return cmocka_run_group_tests(tests, setup, teardown);
}
