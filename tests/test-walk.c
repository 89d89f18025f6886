/* The walk (walk.c) and the scan (scan.c) with the system calls under the
 * test's hand: this program defines getdents64, open and openat, which the
 * library's calls reach (the real ones through dlsym), to see each listing
 * call's room, to fail or cut one, to move an fd, and to change a task
 * between the walk and the re-read of its single candidate. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "core/core.h"

/* --- getdents64 --- */
enum dents_mode { DENTS_REAL, DENTS_FAIL, DENTS_ZERO, DENTS_FILL };
static enum dents_mode dents_mode;
static int dents_errno;    /* DENTS_FAIL */
static size_t dents_leave; /* DENTS_FILL: bytes of the room left unfilled */
static size_t dents_len[8];
static int dents_calls;

/* Records named "." (never a task) filling len - leave bytes. */
static ssize_t fill(void *buf, size_t len, size_t leave)
{
	size_t off = 0, want = len - leave;

	while (off < want) {
		struct dirent64 *d = (struct dirent64 *)((char *)buf + off);
		size_t rec = want - off >= 48 ? 24 : want - off;

		memset(d, 0, rec);
		d->d_ino = 1;
		d->d_reclen = (unsigned short)rec;
		d->d_name[0] = '.';
		off += rec;
	}
	return (ssize_t)off;
}

ssize_t getdents64(int fd, void *buf, size_t len)
{
	ssize_t (*real)(int, void *, size_t) =
		(ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "getdents64");

	if (dents_calls < 8)
		dents_len[dents_calls] = len;
	dents_calls++;
	switch (dents_mode) {
	case DENTS_FAIL:
		errno = dents_errno;
		return -1;
	case DENTS_ZERO:
		errno = EIO; /* whatever errno holds, 0 is no error */
		return 0;
	case DENTS_FILL:
		return fill(buf, len, dents_leave);
	case DENTS_REAL:
		break;
	}
	return real(fd, buf, len);
}

/* --- open and openat --- */
static bool open_high; /* the proc root's fd moved above 100 */
static const char *hook_path; /* an openat of this path... */
static int hook_at, hook_seen; /* ...the hook_at-th one... */
static void (*hook)(void);     /* ...runs this first */
static int hook_errno;         /* or fails with this */
static char *root;

int open(const char *path, int flags, ...)
{
	int (*real)(const char *, int, ...) =
		(int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	va_list ap;
	mode_t mode;
	int fd, high;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	fd = real(path, flags, mode);
	if (fd < 0 || !open_high)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	close(fd);
	return high;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	int (*real)(int, const char *, int, ...) =
		(int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	if (hook_path && strcmp(path, hook_path) == 0 && ++hook_seen == hook_at) {
		if (hook_errno) {
			errno = hook_errno;
			return -1;
		}
		if (hook)
			hook();
	}
	return real(dirfd, path, flags, mode);
}

static int reset(void **state)
{
	(void)state;
	dents_mode = DENTS_REAL;
	dents_calls = 0;
	open_high = false;
	hook_path = NULL;
	hook_at = hook_seen = hook_errno = 0;
	hook = NULL;
	root = tmp_dir();
	return 0;
}

static int cleanup(void **state)
{
	(void)state;
	dents_mode = DENTS_REAL;
	hook_path = NULL;
	open_high = false;
	rm_tree(root);
	free(root);
	return 0;
}

/* Process 700 with n tasks 7001.. named name; its status says threads. */
static void tasks(int n, const char *name, int threads)
{
	char rel[64], text[128];

	for (int i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "700/task/%d/comm", 7001 + i);
		snprintf(text, sizeof(text), "%s\n", name);
		write_file(root, rel, text);
	}
	snprintf(text, sizeof(text), "Name:\tx\nTgid:\t700\nThreads:\t%d\n", threads);
	write_file(root, "700/status", text);
}

static int list(struct rtid__tasks *l)
{
	char path[600];
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), taskfd, r;

	snprintf(path, sizeof(path), "%s/700/task", root);
	taskfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(rootfd >= 0 && taskfd >= 0);
	r = rtid__tasks_list(rootfd, taskfd, 700, l);
	close(taskfd);
	close(rootfd);
	return r;
}

#define ROOM(t) (280 + ((size_t)(t) + (size_t)(t) / 4 + 64) * 32)

/* One listing call, its room sized for the threads counted, a quarter more
 * and 64 more (records of 32 bytes, the names' 280 on top): a listing that
 * fits is never read twice. */
static void listing_room(void **state)
{
	struct rtid__tasks l;

	(void)state;
	tasks(600, "x", 600);
	assert_int_equal(list(&l), 0);
	assert_int_equal(rtid__tasks_count(&l), 600);
	assert_int_equal(dents_calls, 1);
	assert_int_equal(dents_len[0], ROOM(600));
	rtid__tasks_free(&l);
	assert_null(l.buf);
	assert_int_equal(l.len, 0);
}

/* A call that filled its room (less than a name's record left) may have
 * stopped for room: the next has twice as much; one that left a name's
 * record free did not, and the room stays. Four tries, then -EAGAIN. */
static void listing_grows_when_full(void **state)
{
	struct rtid__tasks l = { NULL, 0 };

	(void)state;
	tasks(2, "x", 2);
	dents_mode = DENTS_FILL;
	dents_leave = 272;
	assert_int_equal(list(&l), -EAGAIN);
	assert_int_equal(dents_calls, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(dents_len[i], ROOM(2) << i);
	dents_calls = 0;
	dents_leave = 280;
	assert_int_equal(list(&l), -EAGAIN);
	assert_int_equal(dents_calls, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(dents_len[i], ROOM(2));
	assert_null(l.buf);
}

/* A listing call's error is the walk's, at once; an empty listing is no
 * error (the walk tries again, and proves nothing). */
static void listing_errors(void **state)
{
	struct rtid__tasks l = { NULL, 0 };

	(void)state;
	tasks(2, "x", 2);
	dents_mode = DENTS_FAIL;
	dents_errno = ENOENT;
	assert_int_equal(list(&l), -ENOENT);
	assert_int_equal(dents_calls, 1);
	dents_mode = DENTS_ZERO;
	dents_calls = 0;
	assert_int_equal(list(&l), -EAGAIN);
	assert_int_equal(dents_calls, 4);
	assert_null(l.buf);
	/* The fresh descriptor each listing call needs, refused. */
	dents_mode = DENTS_REAL;
	dents_calls = 0;
	hook_path = ".";
	hook_at = 1;
	hook_errno = EMFILE;
	assert_int_equal(list(&l), -EMFILE);
	assert_int_equal(dents_calls, 0);
}

/* fd 0, when the caller has closed it, is the listing's descriptor like
 * any other. */
static void listing_on_fd_zero(void **state)
{
	struct rtid__tasks l;
	char path[600];
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3), rootfd, taskfd, r;

	(void)state;
	tasks(3, "x", 3);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/700/task", root);
	taskfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(0);
	r = rtid__tasks_list(rootfd, taskfd, 700, &l);
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	close(taskfd);
	close(rootfd);
	assert_int_equal(r, 0);
	assert_int_equal(rtid__tasks_count(&l), 3);
	rtid__tasks_free(&l);
}

/* A record whose header ends the listing exactly, its name past the end:
 * no task (the name is not the listing's). */
static void record_header_at_the_end(void **state)
{
	_Alignas(8) char buf[sizeof(struct dirent64)] = { 0 };
	struct dirent64 *d = (struct dirent64 *)buf;
	struct rtid__tasks l = { buf, offsetof(struct dirent64, d_name) };
	size_t off = 0;
	int tid = 0;

	(void)state;
	d->d_reclen = (unsigned short)offsetof(struct dirent64, d_name);
	strcpy(buf + offsetof(struct dirent64, d_name), "77");
	assert_false(rtid__tasks_next(&l, &off, &tid));
	assert_int_equal(tid, 0);
}

static int status(const char *text, int *tgid, int *threads)
{
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	write_file(root, "800/status", text);
	r = rtid__status_read(rootfd, 800, tgid, threads);
	close(rootfd);
	return r;
}

/* Tgid: and Threads: wherever they are, each once; Threads: 0 is a count
 * (a walk never proves on it, walk_needs_its_proof); twice is no status. */
static void status_lines(void **state)
{
	int tgid = -7, threads = -7;

	(void)state;
	assert_int_equal(status("Threads:\t4\nTgid:\t800\n", &tgid, &threads), 0);
	assert_int_equal(tgid, 800);
	assert_int_equal(threads, 4);
	assert_int_equal(status("Tgid:\t800\nThreads:\t0\n", &tgid, &threads), 0);
	assert_int_equal(threads, 0);
	assert_int_equal(status("Tgid:\t1\nThreads:\t1\n", &tgid, &threads), 0); /* init */
	assert_int_equal(tgid, 1);
	tgid = threads = -7;
	assert_int_equal(status("Tgid:\t800\nThreads:\t4\nThreads:\t5\n", &tgid, &threads),
			 -EINVAL);
	assert_int_equal(status("Tgid:\t800\nTgid:\t800\nThreads:\t4\n", &tgid, &threads),
			 -EINVAL);
	assert_int_equal(tgid, -7);
	assert_int_equal(threads, -7);
}

static struct rtid__scan scan(const char *pattern)
{
	struct rtid__matcher m;
	struct rtid__scan s;

	assert_int_equal(rtid__matcher_init(&m, pattern), 0);
	memset(&s, 0xa5, sizeof(s)); /* what the caller had there */
	rtid__scan(root, 700, &m, &s);
	rtid__matcher_fini(&m);
	return s;
}

#define CUDA "cuda00001400006"

/* Everything of the answer is written: no tid, no error left from before. */
static void scan_answer_whole(void **state)
{
	struct rtid__scan s;

	(void)state;
	tasks(2, "python3", 2);
	s = scan(NULL);
	assert_int_equal(s.status, RTID__SCAN_ZERO);
	assert_int_equal(s.candidates, 0);
	assert_int_equal(s.tid, 0);
	assert_int_equal(s.err, 0);
}

/* fd 0 free when the scan opens the proc root, or only when it opens the
 * task directory: a descriptor like any other. */
static void scan_on_fd_zero(void **state)
{
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
	struct rtid__scan a, b;

	(void)state;
	tasks(1, CUDA, 1);
	close(0);
	a = scan(NULL);
	open_high = true;
	b = scan(NULL);
	open_high = false;
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	assert_int_equal(a.status, RTID__SCAN_FOUND);
	assert_int_equal(a.tid, 7001);
	assert_int_equal(b.status, RTID__SCAN_FOUND);
	assert_int_equal(b.tid, 7001);
}

/* The scan and the walk free what they allocate (a per-pid leak adds up in
 * a daemon). */
static void scan_frees_its_listing(void **state)
{
	size_t before;

	(void)state;
	tasks(200, "x", 200);
	(void)scan(NULL);
	before = mallinfo2().uordblks;
	for (int i = 0; i < 4; i++)
		(void)scan(NULL);
	assert_int_equal(mallinfo2().uordblks, before);
}

/* --- between the walk and the re-read of the single candidate --- */
static void rename_candidate(void)
{
	write_file(root, "700/task/7001/comm", "python3\n");
}

static void empty_candidate(void)
{
	write_file(root, "700/task/7001/comm", "\n");
}

static void candidate_exits(void)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/700/task/7001", root);
	rm_tree(path);
}

static void comm_removed(void)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/700/task/7001/comm", root);
	assert_int_equal(unlink(path), 0);
}

static struct rtid__scan at_reread(void (*what)(void), int err)
{
	tasks(1, CUDA, 1);
	hook_path = "7001/comm";
	hook_at = 2;
	hook_seen = 0;
	hook = what;
	hook_errno = err;
	return scan(NULL);
}

/* Renamed, emptied or exited: unstable (the driver asks); a comm that
 * cannot be read of a task still there: an error with its errno. */
static void candidate_changes_before_reread(void **state)
{
	struct rtid__scan s;

	(void)state;
	s = at_reread(NULL, 0);
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(hook_seen, 2);
	s = at_reread(rename_candidate, 0);
	assert_int_equal(s.status, RTID__SCAN_UNSTABLE);
	s = at_reread(empty_candidate, 0);
	assert_int_equal(s.status, RTID__SCAN_UNSTABLE);
	s = at_reread(candidate_exits, 0);
	assert_int_equal(s.status, RTID__SCAN_UNSTABLE);
	assert_int_equal(s.err, 0);
	s = at_reread(comm_removed, 0);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -ENOENT);
	s = at_reread(NULL, EACCES);
	assert_int_equal(s.status, RTID__SCAN_ERROR);
	assert_int_equal(s.err, -EACCES);
	assert_int_equal(s.tid, 0);
}

/* A name may be empty, and a pattern of the caller's may match it. */
static void empty_name(void **state)
{
	struct rtid__scan s;

	(void)state;
	tasks(1, "", 1);
	s = scan("^$");
	assert_int_equal(s.status, RTID__SCAN_FOUND);
	assert_int_equal(s.tid, 7001);
}

/* A task whose name is empty is read like any other: the walk goes on to
 * the rest (the first comm the walk opens is emptied here). */
static const char *first_comm;
static void empty_first(void)
{
	char rel[400];

	snprintf(rel, sizeof(rel), "700/task/%s", first_comm);
	write_file(root, rel, "\n");
}

static void walk_past_empty_name(void **state)
{
	char rel[300];
	struct rtid__scan s;
	DIR *d;
	struct dirent *de;

	(void)state;
	tasks(3, CUDA, 3);
	/* The first task the listing names is the one emptied. */
	snprintf(rel, sizeof(rel), "%s/700/task", root);
	d = opendir(rel);
	assert_non_null(d);
	while ((de = readdir(d)) && de->d_name[0] == '.')
		;
	assert_non_null(de);
	snprintf(rel, sizeof(rel), "%s/comm", de->d_name);
	closedir(d);
	first_comm = rel;
	hook_path = rel;
	hook_at = 1;
	hook = empty_first;
	s = scan(NULL);
	assert_int_equal(s.status, RTID__SCAN_MULTIPLE);
	assert_int_equal(s.candidates, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(listing_room, reset, cleanup),
		cmocka_unit_test_setup_teardown(listing_grows_when_full, reset, cleanup),
		cmocka_unit_test_setup_teardown(listing_errors, reset, cleanup),
		cmocka_unit_test_setup_teardown(listing_on_fd_zero, reset, cleanup),
		cmocka_unit_test_setup_teardown(record_header_at_the_end, reset, cleanup),
		cmocka_unit_test_setup_teardown(status_lines, reset, cleanup),
		cmocka_unit_test_setup_teardown(scan_answer_whole, reset, cleanup),
		cmocka_unit_test_setup_teardown(scan_on_fd_zero, reset, cleanup),
		cmocka_unit_test_setup_teardown(scan_frees_its_listing, reset, cleanup),
		cmocka_unit_test_setup_teardown(candidate_changes_before_reread, reset, cleanup),
		cmocka_unit_test_setup_teardown(empty_name, reset, cleanup),
		cmocka_unit_test_setup_teardown(walk_past_empty_name, reset, cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
