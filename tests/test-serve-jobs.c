/* Launch jobs (cuda-checkpoint r590): the rule of which actions may run side
 * by side (rules/jobs.c), a process's job as /proc shows it (proc/job.c:
 * CUDA_CHECKPOINT_JOB_FILE of its environ, resolved from its side, told by
 * device and inode), and rtid serve running one job's actions one after
 * another, in order, while a process in no job runs beside them and one
 * whose job cannot be read never runs beside a job's; the mock driver
 * refuses two actions of one job at once, as the driver requires. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "proc/proc.h"
#include "rules/rules.h"
#include "serve-harness.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define TOOL_CALLS "\"mock\":\"cuda-checkpoint\",\"event\":\"start\""

static const int pids[] = { 100, 200, 300, 400, 0 };
static struct daemon d;

/* Every pair of kinds: apart unless one job, or an unknown one beside a job. */
static void test_rule(void **state)
{
	const struct rtid__job none = { RTID__JOB_NONE, 0, 0 }, unk = { RTID__JOB_UNKNOWN, 0, 0 },
			       a = { RTID__JOB_KNOWN, 5, 7 }, a2 = { RTID__JOB_KNOWN, 5, 7 },
			       b = { RTID__JOB_KNOWN, 5, 8 }, c = { RTID__JOB_KNOWN, 6, 7 };

	(void)state;
	assert_true(rtid__jobs_apart(&none, &none));
	assert_true(rtid__jobs_apart(&none, &a));
	assert_true(rtid__jobs_apart(&a, &none));
	assert_true(rtid__jobs_apart(&none, &unk));
	assert_true(rtid__jobs_apart(&unk, &none));
	assert_false(rtid__jobs_apart(&unk, &a));
	assert_false(rtid__jobs_apart(&a, &unk));
	assert_false(rtid__jobs_apart(&unk, &unk));
	assert_false(rtid__jobs_apart(&a, &a2));
	assert_true(rtid__jobs_apart(&a, &b)); /* another inode */
	assert_true(rtid__jobs_apart(&a, &c)); /* another device */
}

static void put(const char *dir, const char *rel, const void *data, size_t len)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

#define ENV(s) s, sizeof(s) - 1 /* with its NULs, without the literal's own */

/* A process's job in a tree: pid 100 and 200 share the job file (two fds on
 * one file), 300 names none, 400 a relative path. */
static void tree(const char *proc)
{
	char p[600], t[600];

	put(proc, "jobfile", "", 0);
	for (int pid = 100; pid <= 200; pid += 100) {
		snprintf(p, sizeof(p), "%s/%d/fd", proc, pid);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/%d/fd/7", proc, pid);
		snprintf(t, sizeof(t), "%s/jobfile", proc);
		unlink(p);
		assert_int_equal(symlink(t, p), 0);
	}
	put(proc, "100/environ", ENV("HOME=/root\0CUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7\0"));
	put(proc, "200/environ", ENV("CUDA_CHECKPOINT_JOB_FILE=/dev/fd/7\0PATH=/bin\0"));
	put(proc, "300/environ", ENV("PATH=/bin\0CUDA_CHECKPOINT_JOB=x\0"));
	put(proc, "400/environ", ENV("CUDA_CHECKPOINT_JOB_FILE=job\0"));
}

static void test_reader(void **state)
{
	struct rtid__job j[6];
	char why[700], big[700];

	(void)state;
	hd_prepare(&d, "@serve-launch-jobs", pids);
	tree(d.proc);
	rtid__job_read(d.proc, 100, &j[0], why, sizeof(why));
	rtid__job_read(d.proc, 200, &j[1], why, sizeof(why));
	assert_int_equal(j[0].kind, RTID__JOB_KNOWN);
	assert_int_equal(j[1].kind, RTID__JOB_KNOWN);
	assert_false(rtid__jobs_apart(&j[0], &j[1])); /* one file: one job */
	rtid__job_read(d.proc, 300, &j[2], why, sizeof(why));
	assert_int_equal(j[2].kind, RTID__JOB_NONE);
	rtid__job_read(d.proc, 400, &j[3], why, sizeof(why));
	assert_int_equal(j[3].kind, RTID__JOB_UNKNOWN);
	assert_string_equal(why, "CUDA_CHECKPOINT_JOB_FILE=job: not a path of its own");
	rtid__job_read(d.proc, 999, &j[4], why, sizeof(why)); /* no environ: none */
	assert_int_equal(j[4].kind, RTID__JOB_NONE);
	put(d.proc, "300/environ", "", 0); /* an empty one (a kernel thread's): none */
	rtid__job_read(d.proc, 300, &j[4], why, sizeof(why));
	assert_int_equal(j[4].kind, RTID__JOB_NONE);
	{
		struct stat st;
		char f[600];

		snprintf(f, sizeof(f), "%s/jobfile", d.proc);
		assert_int_equal(stat(f, &st), 0);
		assert_true(j[0].dev == st.st_dev && j[0].ino == st.st_ino);
	}
	/* Only an entry that is the name counts, the first of two, the last
	 * one without its NUL too. */
	put(d.proc, "300/environ", ENV("XCUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7\0"
				       "CUDA_CHECKPOINT_JOB_FILE\0A=CUDA_CHECKPOINT_JOB_FILE=/x\0"));
	rtid__job_read(d.proc, 300, &j[2], why, sizeof(why));
	assert_int_equal(j[2].kind, RTID__JOB_NONE);
	/* Its buffer given back each time (mapped by malloc: glibc counts it;
	 * under a memory checker the count is 0 and the checker looks). */
	{
		size_t before = mallinfo2().hblkhd;

		for (int i = 0; i < 8; i++)
			rtid__job_read(d.proc, 100, &j[2], why, sizeof(why));
		assert_true(mallinfo2().hblkhd <= before);
	}
	put(d.proc, "100/environ", ENV("A=1\0CUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7\0"
				       "CUDA_CHECKPOINT_JOB_FILE=job\0"));
	rtid__job_read(d.proc, 100, &j[2], why, sizeof(why));
	assert_int_equal(j[2].kind, RTID__JOB_KNOWN);
	put(d.proc, "100/environ", ENV("A=1\0CUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7"));
	rtid__job_read(d.proc, 100, &j[2], why, sizeof(why));
	assert_false(rtid__jobs_apart(&j[2], &j[1]));
	/* An environ that cannot be read, or one larger than any: unknown. */
	snprintf(big, sizeof(big), "%s/300/environ", d.proc);
	unlink(big);
	assert_int_equal(mkdir(big, 0755), 0);
	rtid__job_read(d.proc, 300, &j[2], why, sizeof(why));
	assert_int_equal(j[2].kind, RTID__JOB_UNKNOWN);
	snprintf(big, sizeof(big), "%s/300/environ: Is a directory", d.proc);
	assert_string_equal(why, big);
	snprintf(big, sizeof(big), "%s/300/environ", d.proc);
	rmdir(big);
	{
		size_t n = 256 * 1024 + 1;
		char *env = malloc(n);

		assert_non_null(env);
		memset(env, 'a', n);
		put(d.proc, "300/environ", env, n);
		free(env);
		rtid__job_read(d.proc, 300, &j[2], why, sizeof(why));
		assert_int_equal(j[2].kind, RTID__JOB_UNKNOWN);
		assert_non_null(strstr(why, "/300/environ: Value too large"));
	}
	/* A path longer than any: not one of its own. */
	{
		char env[5000] = "CUDA_CHECKPOINT_JOB_FILE=/";

		memset(env + strlen(env), 'x', 4300);
		env[26 + 4300] = '\0';
		put(d.proc, "300/environ", env, strlen(env) + 1);
		rtid__job_read(d.proc, 300, &j[2], why, sizeof(why));
		assert_int_equal(j[2].kind, RTID__JOB_UNKNOWN);
		assert_non_null(strstr(why, ": not a path of its own"));
	}
	/* A path that just fits, and one a byte longer: <proc>/400/root and the
	 * value fill 4199 bytes and the NUL, or 4200 and no room for it. */
	for (int extra = 0; extra < 2; extra++) {
		char env[5000] = "CUDA_CHECKPOINT_JOB_FILE=/";
		size_t fill = 4199 - strlen(d.proc) - strlen("/400/root/") + (size_t)extra;

		memset(env + strlen(env), 'y', fill);
		env[26 + fill] = '\0';
		put(d.proc, "400/environ", env, strlen(env) + 1);
		rtid__job_read(d.proc, 400, &j[2], why, sizeof(why));
		assert_int_equal(j[2].kind, RTID__JOB_UNKNOWN);
		/* The one that fits is looked at (and is not there); the other is refused. */
		assert_int_equal(strstr(why, ": not a path of its own") != NULL, extra);
	}
	/* An absolute path: under the process's root. */
	snprintf(big, sizeof(big), "%s/400/root", d.proc);
	assert_int_equal(mkdir(big, 0755), 0);
	put(d.proc, "400/root/job", "", 0);
	put(d.proc, "400/environ", ENV("CUDA_CHECKPOINT_JOB_FILE=/job\0"));
	rtid__job_read(d.proc, 400, &j[5], why, sizeof(why));
	assert_int_equal(j[5].kind, RTID__JOB_KNOWN);
	assert_true(rtid__jobs_apart(&j[5], &j[0]));
	/* A file not there: unknown. */
	put(d.proc, "400/environ", ENV("CUDA_CHECKPOINT_JOB_FILE=/run/job\0"));
	rtid__job_read(d.proc, 400, &j[5], why, sizeof(why));
	assert_int_equal(j[5].kind, RTID__JOB_UNKNOWN);
	snprintf(big, sizeof(big), "%s/400/root/run/job: No such file or directory", d.proc);
	assert_string_equal(why, big);
	hd_cleanup(&d);
}

/* A child exec'd with env and the memfd as its fd 7, as cuda-checkpoint
 * --launch-job starts a job's program; returned once it has exec'd (its
 * end of a close-on-exec pipe closed). */
static pid_t job_child(int memfd, const char *env)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *const argv[] = { "sleep", "60", NULL };
		char *const envp[] = { (char *)env, NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		if (memfd >= 0 && dup2(memfd, 7) != 7)
			_exit(1);
		execve("/bin/sleep", argv, envp);
		_exit(1);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 0); /* exec'd */
	close(p[0]);
	return pid;
}

/* The reader against the real kernel, as the tool leaves a job: two
 * processes holding one memfd (by /proc/self/fd/7 and /dev/fd/7) are one job,
 * told by that memfd's inode; a process with another memfd is another job;
 * one with no such variable is in none. */
static void test_reader_real_kernel(void **state)
{
	int one = memfd_create("job", 0), two = memfd_create("job", 0);
	pid_t c[4];
	struct rtid__job j[4];
	struct stat st;
	char why[300];

	(void)state;
	assert_true(one >= 0 && two >= 0);
	c[0] = job_child(one, "CUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7");
	c[1] = job_child(one, "CUDA_CHECKPOINT_JOB_FILE=/dev/fd/7");
	c[2] = job_child(two, "CUDA_CHECKPOINT_JOB_FILE=/proc/self/fd/7");
	c[3] = job_child(-1, "PATH=/bin");
	for (int i = 0; i < 4; i++)
		rtid__job_read("/proc", c[i], &j[i], why, sizeof(why));
	assert_int_equal(fstat(one, &st), 0);
	assert_int_equal(j[0].kind, RTID__JOB_KNOWN);
	assert_true(j[0].dev == st.st_dev && j[0].ino == st.st_ino);
	assert_false(rtid__jobs_apart(&j[0], &j[1]));
	assert_int_equal(j[2].kind, RTID__JOB_KNOWN);
	assert_true(rtid__jobs_apart(&j[0], &j[2]));
	assert_int_equal(j[3].kind, RTID__JOB_NONE);
	for (int i = 0; i < 4; i++) {
		kill(c[i], SIGKILL);
		waitpid(c[i], NULL, 0);
	}
	close(one);
	close(two);
}

/* The daemon on the case and the job tree, 100 and 200 one job to the mock
 * driver too, slow_op taking half a second (scaled). */
static void serve_jobs(const char *slow_op)
{
	char slow[32];

	hd_prepare(&d, "@serve-launch-jobs", pids);
	tree(d.proc);
	setenv("RTID_MOCK_JOBS", "100,200", 1);
	setenv("RTID_MOCK_SLOW_OPS", slow_op, 1);
	snprintf(slow, sizeof(slow), "%g", 0.5 * time_factor());
	setenv("RTID_MOCK_SLOW_S", slow, 1);
	hd_start(&d, ARGS("--actions", "--timeout", "600"));
}

static void serve_jobs_end(void)
{
	unsetenv("RTID_MOCK_JOBS");
	unsetenv("RTID_MOCK_SLOW_OPS");
	unsetenv("RTID_MOCK_SLOW_S");
	hd_cleanup(&d);
}

/* Four checkpoints asked at once, each slow: 100 and 200 (one job) one
 * after the other, in the order asked, never overlapping in the driver; 300
 * (no job) beside them; 400 (its job unreadable) never beside 100 or 200,
 * said in the daemon's log. Nothing refused busy, nothing to the tool. */
static void test_one_job_at_a_time(void **state)
{
	static const char *const who[] = { "100", "200", "300", "400" };
	struct shim_bg b[4];
	double t[4][2];

	(void)state;
	serve_jobs("checkpoint");
	for (int i = 0; i < 4; i++) {
		struct rtid__svc_ans a;

		assert_int_equal(hd_ask(&d, RTID__OP_LOCK, 100 * (i + 1), 1000, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_DONE);
	}
	for (int i = 0; i < 4; i++) {
		hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", who[i]), &b[i]);
		if (i == 0) /* in order: 100's is the one in the driver first */
			hd_log_wait(&d, "checkpoint", 100, 0);
	}
	for (int i = 0; i < 4; i++) {
		struct shim_run r = hd_shim_wait(&b[i]);

		assert_string_equal(r.out, "");
		assert_int_equal(r.status, 0);
		t[i][0] = hd_log_time(&d, "checkpoint", 100 * (i + 1), 0);
		t[i][1] = hd_log_time(&d, "checkpoint-end", 100 * (i + 1), 0);
		assert_true(t[i][0] > 0 && t[i][1] >= t[i][0]);
	}
	assert_int_equal(hd_log_count(&d, "job-overlap"), 0);
	assert_true(t[1][0] >= t[0][1]); /* 200 after 100 */
	assert_true(t[2][0] < t[0][1]);  /* 300 beside 100 */
	for (int k = 0; k < 2; k++)      /* 400 beside neither */
		assert_true(t[3][0] >= t[k][1] || t[3][1] <= t[k][0]);
	assert_true(hd_said(&d, "checkpoint 400: its launch job cannot be read "
			    "(CUDA_CHECKPOINT_JOB_FILE=job: not a path of its own)"));
	assert_int_equal(hd_log_count(&d, TOOL_CALLS), 0);
	serve_jobs_end();
}

/* In the order asked: 100's checkpoint waits behind a slow query about 100
 * in the driver (a query is no job's action); 200's checkpoint, asked after
 * it, waits for it rather than go first. */
static void test_job_order(void **state)
{
	struct shim_bg q, b1, b2;

	(void)state;
	serve_jobs("get-state");
	for (int pid = 100; pid <= 200; pid += 100) {
		struct rtid__svc_ans a;

		assert_int_equal(hd_ask(&d, RTID__OP_LOCK, pid, 1000, &a), 0);
		assert_int_equal(a.kind, RTID__SVC_DONE);
	}
	hd_shim_start(&d, ARGS("--get-state", "--pid", "100"), &q);
	hd_log_wait(&d, "get-state", 100, 0);
	hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", "100"), &b1);
	while (hd_stat(&d, "queued") < 1) /* the daemon has it: 200's is later */
		;
	hd_shim_start(&d, ARGS("--action", "checkpoint", "--pid", "200"), &b2);
	assert_int_equal(hd_shim_wait(&q).status, 0);
	assert_int_equal(hd_shim_wait(&b1).status, 0);
	assert_int_equal(hd_shim_wait(&b2).status, 0);
	assert_true(hd_log_time(&d, "checkpoint", 200, 0) >= hd_log_time(&d, "checkpoint-end", 100, 0));
	serve_jobs_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_real_kernel),
		cmocka_unit_test(test_one_job_at_a_time),
		cmocka_unit_test(test_job_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
