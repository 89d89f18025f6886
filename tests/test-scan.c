/* The scan over proc-like trees and over this process's own real threads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "basic/parse.h"
#include "basic/sys.h"
#include "core/core.h"

static char *root;
static struct rtid__matcher matcher;

static int setup(void **state)
{
	(void)state;
	root = tmp_dir();
	return rtid__matcher_init(&matcher, NULL);
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(root);
	free(root);
	rtid__matcher_fini(&matcher);
	return 0;
}

static struct rtid__scan scan(int pid)
{
	struct rtid__scan s;

	rtid__scan(root, pid, &matcher, &s);
	return s;
}

static void one_candidate(void **state)
{
	const struct fake_thread t[] = { { 100, "python3" }, { 101, "cuda-EvtHandlr" },
					 { 102, "cuda00001400006" }, { 103, "cudaface" },
					 { 104, "CUDA00001400006" }, { 105, "pt_main_thread" } };
	struct rtid__scan s;

	(void)state;
	fake_process(root, 100, t, 6);
	s = scan(100);
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(s.tid, 102);
	assert_int_equal(s.candidates, 1);
}

static void two_candidates(void **state)
{
	const struct fake_thread t[] = { { 200, "python3" }, { 201, "cuda00001400006" },
					 { 202, "cuda00002000009" } };
	struct rtid__scan s;

	(void)state;
	fake_process(root, 200, t, 3);
	s = scan(200);
	assert_int_equal(s.status, RTID__SCAN_MULTIPLE);
	assert_int_equal(s.candidates, 2);
}

static void zero_candidates(void **state)
{
	const struct fake_thread t[] = { { 300, "python3" }, { 301, "cuda-EvtHandlr" },
					 { 302, "cudaRestoreThr" } };

	(void)state;
	fake_process(root, 300, t, 3);
	assert_int_equal(scan(300).status, RTID__SCAN_ZERO);
}

static void no_process(void **state)
{
	(void)state;
	assert_int_equal(scan(999999).status, RTID__SCAN_NOPROC);
}

static void missing_comm_of_present_task(void **state)
{
	const struct fake_thread t[] = { { 400, "python3" }, { 401, "cuda0000a40002a" } };
	char p[512];
	struct rtid__scan s;

	(void)state;
	fake_process(root, 400, t, 2);
	/* A listed task whose comm is missing while its directory stays: not an
	 * exit (a real exit removes the directory), so uniqueness is unproven.
	 * Real vanishing tasks are proven by the FUSE cases (vanish-*). */
	snprintf(p, sizeof(p), "%s/400/task/402", root);
	assert_int_equal(mkdir(p, 0755), 0);
	s = scan(400);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -ENOENT);
}

static void unreadable_task_is_scan_error(void **state)
{
	const struct fake_thread t[] = { { 500, "python3" }, { 501, "cuda0000a40002a" } };
	char p[512];
	struct rtid__scan s;

	(void)state;
	fake_process(root, 500, t, 2);
	/* comm as a directory: read fails with EISDIR, which is neither a vanished
	 * task nor a readable name, so uniqueness cannot be proven. */
	snprintf(p, sizeof(p), "%s/500/task/502/comm", root);
	write_file(root, "500/task/502/x", "");
	assert_int_equal(mkdir(p, 0755), 0);
	s = scan(500);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -EISDIR);
}

static void comm_shapes(void **state)
{
	(void)state;
	/* Exactly 15 characters without the newline still matches. */
	write_file(root, "600/task/600/comm", "python3\n");
	write_file(root, "600/task/601/comm", "cuda0000240000a");
	assert_int_equal(scan(600).status, RTID__SCAN_FOUND);
	/* Non-ASCII bytes are compared as bytes and never match. */
	write_file(root, "700/task/701/comm", "cuda0000240000\xc3\n");
	assert_int_equal(scan(700).status, RTID__SCAN_ZERO);
}

static void odd_comm_files(void **state)
{
	char big[200];
	struct rtid__scan s;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(root, "800/task/800/comm", "");            /* empty: no name */
	write_file(root, "800/task/801/comm", "cuda0000a40002a\n");
	assert_int_equal(scan(800).status, RTID__SCAN_FOUND);
	write_file(root, "810/task/811/comm", big);           /* longer than any comm */
	s = scan(810);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -EOVERFLOW);
}

static void no_fd_leak(void **state)
{
	int before = count_fds();

	(void)state;
	for (int i = 0; i < 50; i++) {
		scan(100);
		scan(999999);
		scan(500);
	}
	assert_int_equal(count_fds(), before);
}

/* Real threads of this process, renamed through the kernel's comm. */
struct named {
	pthread_t th;
	int tid;
	int ready[2], stop[2];
};

static void *park(void *arg)
{
	struct named *n = arg;
	char c;

	n->tid = gettid();
	if (write(n->ready[1], "r", 1) != 1)
		abort();
	/* Block until the test closes stop[1]: a signal, not a sleep. */
	while (read(n->stop[0], &c, 1) > 0)
		;
	return NULL;
}

static void start_named(struct named *n, const char *name)
{
	char c;

	assert_int_equal(pipe(n->ready), 0);
	assert_int_equal(pipe(n->stop), 0);
	assert_int_equal(pthread_create(&n->th, NULL, park, n), 0);
	assert_int_equal(read(n->ready[0], &c, 1), 1);
	assert_int_equal(pthread_setname_np(n->th, name), 0);
}

static void stop_named(struct named *n)
{
	close(n->stop[1]);
	pthread_join(n->th, NULL);
	close(n->stop[0]);
	close(n->ready[0]);
	close(n->ready[1]);
}

static void real_threads(void **state)
{
	struct named a, b, c;
	struct rtid__scan s;

	(void)state;
	start_named(&a, "cuda00001400006");
	start_named(&b, "cuda-EvtHandlr");
	rtid__scan("/proc", getpid(), &matcher, &s);
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(s.tid, a.tid);
	start_named(&c, "cuda00002000009");
	rtid__scan("/proc", getpid(), &matcher, &s);
	assert_int_equal(s.status, RTID__SCAN_MULTIPLE);
	stop_named(&a);
	stop_named(&b);
	stop_named(&c);
	rtid__scan("/proc", getpid(), &matcher, &s);
	assert_int_equal(s.status, RTID__SCAN_ZERO);
}

/* The walk is proven against Threads: in status (src/proc/walk.c). */
static void walk_needs_its_proof(void **state)
{
	char rel[256];
	struct rtid__scan s;

	(void)state;
	/* Fewer tasks listed than Threads: counts: not provably complete. */
	write_file(root, "900/task/900/comm", "python3\n");
	write_file(root, "900/task/901/comm", "cuda00001400006\n");
	write_file(root, "900/status", "Name:\tx\nTgid:\t900\nThreads:\t3\n");
	assert_int_equal(scan(900).status, RTID__SCAN_UNSTABLE);
	write_file(root, "900/status", "Name:\tx\nTgid:\t900\nThreads:\t0\n");
	assert_int_equal(scan(900).status, RTID__SCAN_UNSTABLE);
	/* A status without Threads: (or Tgid:) proves nothing: scan-error. */
	write_file(root, "900/status", "Name:\tx\nTgid:\t900\n");
	s = scan(900);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -EINVAL);
	write_file(root, "900/status", "Name:\tx\nThreads:\t2\n");
	assert_int_equal(scan(900).status, RTID__SCAN_ERROR);
	/* Entries that fill the buffer sized for Threads: it grows and retries. */
	write_file(root, "910/task/911/comm", "cuda00001400006\n");
	for (int i = 0; i < 60; i++) {
		snprintf(rel, sizeof(rel), "910/task/%0200d", i); /* not tids: leading zeros */
		write_file(root, rel, "");
	}
	write_file(root, "910/task/910/comm", "python3\n");
	write_file(root, "910/status", "Tgid:\t910\nThreads:\t2\n");
	s = scan(910);
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(s.tid, 911);
}

/* Records the kernel would never give end the listing, never overrun it. */
static void malformed_records(void **state)
{
	char buf[64] = { 0 };
	struct rtid__tasks l = { buf, sizeof(buf) };
	size_t off = 0;
	int tid = 0;

	(void)state;
	assert_false(rtid__tasks_next(&l, &off, &tid)); /* d_reclen 0 */
	buf[16] = 64; /* d_reclen past the end of the 40 bytes given */
	l.len = 40;
	off = 0;
	assert_false(rtid__tasks_next(&l, &off, &tid));
	assert_int_equal(tid, 0);
}

/* A listing proves completeness only by distinct tids: one named twice is
 * one thread (the count compared with Threads: in status). */
static void listing_counts_distinct_tids(void **state)
{
	static const char *const names[] = { ".", "..", "5", "7", "5", "007", "x", "9" };
	char buf[1024] = { 0 };
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct dirent64 *d = (struct dirent64 *)(buf + len);
		size_t rec = (offsetof(struct dirent64, d_name) + strlen(names[i]) + 1 + 7) & ~(size_t)7;

		d->d_reclen = (unsigned short)rec;
		memcpy(d->d_name, names[i], strlen(names[i]) + 1);
		len += rec;
	}
	assert_int_equal(rtid__tasks_count(&(struct rtid__tasks){ buf, len }), 3);
	assert_int_equal(rtid__tasks_count(&(struct rtid__tasks){ buf, 0 }), 0);
	/* Counting keeps nothing: the heap in use is the same after a thousand. */
	{
		size_t before = mallinfo2().uordblks;

		for (int i = 0; i < 1000; i++)
			rtid__tasks_count(&(struct rtid__tasks){ buf, len });
		assert_int_equal(mallinfo2().uordblks, before);
	}
}

/* A thread that exited mid-walk (listed, gone on lookup: a dangling link
 * here) is skipped, and its ENOENT says nothing of the process, which is
 * still there: the one candidate left is found. */
static void thread_gone_mid_walk(void **state)
{
	char p[4096];
	struct rtid__scan s;

	(void)state;
	write_file(root, "960/task/960/comm", "python3\n");
	write_file(root, "960/task/962/comm", "cuda00001400006\n");
	snprintf(p, sizeof(p), "%s/960/task/961", root);
	assert_int_equal(symlink("/nonexistent-task", p), 0);
	write_file(root, "960/status", "Name:\tx\nTgid:\t960\nThreads:\t3\n");
	s = scan(960);
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(s.tid, 962);
}

/* A comm that cannot be read ends the walk with its error: a thread that
 * exits later in the listing must not clear it (the walk went on past the
 * error, and that thread's ENOENT erased it). tmpfs lists in creation
 * order (or its reverse): a vanished thread comes after the error either way. */
static void read_error_ends_the_walk(void **state)
{
	char *shm = strdup("/dev/shm/rtid-test-XXXXXX"), p[4096];
	struct rtid__scan s;

	(void)state;
	if (!shm || !mkdtemp(shm))
		skip();
	write_file(shm, "970/task/970/comm", "python3\n");
	snprintf(p, sizeof(p), "%s/970/task/971", shm);
	assert_int_equal(symlink("/nonexistent-task", p), 0);
	write_file(shm, "970/task/972/comm/x", ""); /* comm a directory: EISDIR */
	snprintf(p, sizeof(p), "%s/970/task/973", shm);
	assert_int_equal(symlink("/nonexistent-task", p), 0);
	write_file(shm, "970/status", "Name:\tx\nTgid:\t970\nThreads:\t4\n");
	rtid__scan(shm, 970, &matcher, &s);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -EISDIR);
	rm_tree(shm);
	free(shm);
}

/* What a number names (ident.c): a thread of the process, a thread of
 * another process (-EXDEV), nothing (-ESRCH); and the facts the request rule
 * reads, a vanished process said absent. */
static void thread_of_and_request_facts(void **state)
{
	struct rtid__req_facts f = { .check_caller = true, .caller = 42, .may_act = true };

	(void)state;
	write_file(root, "700/task/700/comm", "python3\n");
	write_file(root, "700/task/701/comm", "cuda00001400006\n");
	write_file(root, "800/task/800/comm", "python3\n");
	/* 801: a thread of 800, reachable as <proc>/801 but not listed, as the
	 * kernel has it; 802 says it is 700's but 700/task has no 802 (gone). */
	write_file(root, "801/status", "Name:\tx\nTgid:\t800\nThreads:\t2\n");
	write_file(root, "802/status", "Name:\tx\nTgid:\t700\nThreads:\t2\n");
	assert_int_equal(rtid__thread_of(root, 700, 701), 0);
	assert_int_equal(rtid__thread_of(root, 700, 700), 0);
	assert_int_equal(rtid__thread_of(root, 700, 801), -EXDEV);
	assert_int_equal(rtid__thread_of(root, 700, 800), -EXDEV);
	assert_int_equal(rtid__thread_of(root, 700, 802), -ESRCH);
	assert_int_equal(rtid__thread_of(root, 700, 999), -ESRCH);
	assert_int_equal(rtid__thread_of("/nonexistent-proc", 700, 701), -ENOENT);
	/* A caller that closed its stdin: the proc root opened as fd 0 is one. */
	{
		int saved = dup(0);

		assert_true(saved >= 0);
		close(0);
		assert_int_equal(rtid__thread_of(root, 700, 701), 0);
		rtid__request_facts(root, 700, &f);
		assert_int_equal(f.tgid, 700);
		assert_true(f.owner_known);
		assert_int_equal(dup2(saved, 0), 0);
		close(saved);
	}

	rtid__request_facts(root, 700, &f);
	assert_true(f.present);
	assert_int_equal(f.pid, 700);
	assert_int_equal(f.tgid, 700);
	assert_true(f.owner_known);
	assert_int_equal(f.owner, geteuid());
	/* The caller's part is left as it was. */
	assert_true(f.check_caller && f.may_act);
	assert_int_equal(f.caller, 42);
	rtid__request_facts(root, 801, &f); /* a thread given as a process */
	assert_true(f.present);
	assert_int_equal(f.tgid, 800);
	rtid__request_facts(root, 999, &f); /* gone: ENOENT */
	assert_false(f.present);
	assert_int_equal(f.tgid, 0);
	assert_false(f.owner_known);
	/* Nothing readable: not known to be absent. */
	rtid__request_facts("/nonexistent-proc", 700, &f);
	assert_true(f.present);
	assert_int_equal(f.tgid, 0);
	assert_false(f.owner_known);
}

/* The walk's retries: a listing that never proves complete is tried four
 * times (four reads of status, counted by inotify's open events: an open
 * and a close between each two, so none is merged), then refused. */
static void walk_tries_four_times(void **state)
{
	struct rtid__tasks l = { NULL, 0 };
	char path[4096], ev[4096] __attribute__((aligned(8)));
	int rootfd, taskfd, in, opens = 0;
	size_t heap;
	ssize_t n;

	(void)state;
	write_file(root, "650/task/650/comm", "python3\n");
	write_file(root, "650/task/651/comm", "python3\n");
	write_file(root, "650/status", "Name:\tx\nTgid:\t650\nThreads:\t3\n"); /* two listed */
	snprintf(path, sizeof(path), "%s/650/status", root);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, path, IN_OPEN | IN_CLOSE_NOWRITE) >= 0);
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/650/task", root);
	taskfd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(rootfd >= 0 && taskfd >= 0);
	heap = mallinfo2().uordblks;
	assert_int_equal(rtid__tasks_list(rootfd, taskfd, 650, &l), -EAGAIN);
	assert_null(l.buf);
	assert_int_equal(mallinfo2().uordblks, heap); /* its buffer freed */
	while ((n = read(in, ev, sizeof(ev))) > 0)
		for (char *p = ev; p < ev + n; p += sizeof(struct inotify_event) +
						 ((struct inotify_event *)p)->len)
			opens += (((struct inotify_event *)p)->mask & IN_OPEN) != 0;
	assert_int_equal(opens, 4);
	close(in);
	close(taskfd);
	close(rootfd);
}

/* The listing's headroom: threads started between the count (Threads:) and
 * the one getdents call, up to a quarter more and 64, are listed in that
 * same call, so a restore thread the driver has just started is seen. The
 * tids are ten digits, the largest record a task has. */
static void listing_has_headroom(void **state)
{
	struct rtid__tasks l = { NULL, 0 };
	char path[4096];
	int rootfd, taskfd;

	(void)state;
	write_file(root, "770/status", "Name:\tx\nTgid:\t770\nThreads:\t400\n");
	snprintf(path, sizeof(path), "%s/770/task", root);
	assert_int_equal(mkdir(path, 0755), 0);
	for (int i = 0; i < 400 + 400 / 4 + 64; i++) {
		snprintf(path, sizeof(path), "%s/770/task/%d", root, 1000000000 + i);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/770/task", root);
	taskfd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(rootfd >= 0 && taskfd >= 0);
	assert_int_equal(rtid__tasks_list(rootfd, taskfd, 770, &l), 0);
	assert_int_equal(rtid__tasks_count(&l), 564);
	free(l.buf);
	close(taskfd);
	close(rootfd);
}

/* A pidfd's number as the kernel shows it: a file that is no pidfd has
 * none; this process's, and pid 1's (a number of one digit is a number). */
static void pidfd_numbers(void **state)
{
	int fd, v = -5;

	(void)state;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(rtid__pidfd_pid(fd, &v), -ENOENT);
	assert_int_equal(v, -5);
	close(fd);
	fd = rtid__pidfd_open(getpid());
	if (fd < 0 && errno == ENOSYS)
		skip(); /* valgrind 3.19 has no pidfd_open */
	assert_true(fd >= 0);
	assert_int_equal(rtid__pidfd_pid(fd, &v), 0);
	assert_int_equal(v, getpid());
	close(fd);
	fd = rtid__pidfd_open(1);
	assert_true(fd >= 0);
	assert_int_equal(rtid__pidfd_pid(fd, &v), 0);
	assert_int_equal(v, 1);
	close(fd);
}

/* Numbers of another pid namespace: translated only when exactly one
 * process of that very namespace has the number last in NSpid. */
static void pid_namespace_translation(void **state)
{
	char *tree = tmp_dir(), ns[64];
	int v = 0, fds;

	(void)state;
	ns_proc(tree, 100, "pid:[111]", "Name:\tx\nNSpid:\t100\t1\n");
	ns_proc(tree, 200, "pid:[111]", "Name:\tx\nNSpid:\t200\t2\nPPid:\t1\n");
	ns_proc(tree, 300, "pid:[222]", "Name:\tx\nNSpid:\t300\t1\n");
	ns_proc(tree, 400, "pid:[111]", "Name:\tx\n");
	ns_proc(tree, 500, "pid:[333]", "Name:\tx\nNSpid:\t500\t7\n");
	ns_proc(tree, 501, "pid:[333]", "Name:\tx\nNSpid:\t501\t7\n");
	ns_proc(tree, 600, "pid:[444]", "Name:\tx\nNSpid:\t600\tx\n");
	ns_proc(tree, 700, "pid:[555]", "Name:\tx\nNSpid:\t12345678901234567\n");
	ns_proc(tree, 800, "pid:[666]", "Name:\tx\nNSpid:\t\n");
	assert_int_equal(rtid__pidns_of(tree, 100, ns, sizeof(ns)), 0);
	assert_string_equal(ns, "pid:[111]");
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[111]", 1, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[111]", 2, &v), 0);
	assert_int_equal(v, 200);
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[111]", 9, &v), -ESRCH);
	fds = count_fds();
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[333]", 7, &v), -ENOTUNIQ);
	assert_int_equal(count_fds(), fds); /* the proc root's listing closed */
	assert_int_equal(rtid__pid_from_ns("/nonexistent", "pid:[111]", 1, &v), -ENOENT);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 300, &v), -EXDEV);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 400, &v), -ENOTSUP);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[444]", 600, &v), -EINVAL);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[555]", 700, &v), -EINVAL);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[666]", 800, &v), -EINVAL);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 999, &v), -ENOENT);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 100, &v), 0);
	assert_int_equal(v, 1);
	/* A process gone holds nothing. */
	assert_int_equal(rtid__holds_file(tree, 999, "socket:[1]"), -ENOENT);
	rm_tree(tree);
	free(tree);
}

/* A status larger than any buffer (a process with thousands of
 * supplementary groups: Groups: comes before Threads: and NSpid:): read to
 * its end, so the thread check and the namespace translation stay on; a
 * line of ours cut by a piece boundary is read whole, and one too long to
 * be whole is refused, never read cut. */
static void status_with_many_groups(void **state)
{
	char *tree = tmp_dir(), *status = malloc(40000), *big = malloc(20000), groups[20000];
	size_t n = 0;
	int v = 0, tgid = 0, threads = 0, rootfd;

	(void)state;
	for (int g = 0; n + 12 < sizeof(groups) - 1; g++)
		n += (size_t)snprintf(groups + n, sizeof(groups) - n, "%d ", 100000 + g);
	groups[n] = '\0';
	/* NSpid: 5000 4242 straddles the 4096-byte piece boundary: a reader of
	 * one piece saw "42" */
	snprintf(status, 40000, "Name:\tx\nTgid:\t5000\nGroups:\t%.*s\nNSpid:\t5000\t4242\n"
		 "Threads:\t3\n", 4096 - 30 - 14, groups);
	ns_proc(tree, 5000, "pid:[111]", status);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 5000, &v), 0);
	assert_int_equal(v, 4242);
	snprintf(status, 40000, "Name:\tx\nTgid:\t5001\nGroups:\t%s\nNSpid:\t5001\t7\n"
		 "Threads:\t3\n", groups);
	ns_proc(tree, 5001, "pid:[111]", status);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 5001, &v), 0);
	assert_int_equal(v, 7);
	rootfd = open(tree, O_RDONLY | O_DIRECTORY);
	assert_true(rootfd >= 0);
	assert_int_equal(rtid__status_read(rootfd, 5001, &tgid, &threads), 0);
	assert_int_equal(tgid, 5001);
	assert_int_equal(threads, 3);
	/* NSpid: itself longer than a piece: refused, not read cut. */
	memset(big, '1', 19999);
	big[19999] = '\0';
	snprintf(status, 40000, "Name:\tx\nNSpid:\t%s\n", big);
	ns_proc(tree, 5002, "pid:[111]", status);
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[111]", 5002, &v), -EINVAL);
	snprintf(status, 40000, "Name:\tx\nTgid:\t%s\nThreads:\t1\n", big);
	write_file(tree, "5003/status", status);
	assert_int_equal(rtid__status_read(rootfd, 5003, &tgid, &threads), -EINVAL);
	/* Tgid: 0 is no process's (the kernel's idle task is not listed). */
	write_file(tree, "5005/status", "Name:\tx\nTgid:\t0\nThreads:\t1\n");
	assert_int_equal(rtid__status_read(rootfd, 5005, &tgid, &threads), -EINVAL);
	/* No Threads: line at all. */
	write_file(tree, "5004/status", "Name:\tx\nTgid:\t5004\n");
	assert_int_equal(rtid__status_read(rootfd, 5004, &tgid, &threads), -EINVAL);
	assert_int_equal(rtid__status_read(rootfd, 5999, &tgid, &threads), -ENOENT);
	close(rootfd);
	rm_tree(tree);
	free(tree);
	free(status);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_candidate),     cmocka_unit_test(two_candidates),
		cmocka_unit_test(listing_counts_distinct_tids),
		cmocka_unit_test(thread_of_and_request_facts),
		cmocka_unit_test(thread_gone_mid_walk),
		cmocka_unit_test(read_error_ends_the_walk),
		cmocka_unit_test(walk_tries_four_times),
		cmocka_unit_test(listing_has_headroom),
		cmocka_unit_test(pidfd_numbers),
		cmocka_unit_test(pid_namespace_translation),
		cmocka_unit_test(status_with_many_groups),
		cmocka_unit_test(zero_candidates),   cmocka_unit_test(no_process),
		cmocka_unit_test(missing_comm_of_present_task),
		cmocka_unit_test(unreadable_task_is_scan_error),
		cmocka_unit_test(comm_shapes),       cmocka_unit_test(no_fd_leak),
		cmocka_unit_test(odd_comm_files),
		cmocka_unit_test(real_threads),
		cmocka_unit_test(walk_needs_its_proof),
		cmocka_unit_test(malformed_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
