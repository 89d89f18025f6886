#include "helpers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tmp_dir(void)
{
	/* Under $TMPDIR when it is set and short (a socket's path in it must fit
	 * sun_path): whoever runs a test can then find, and unmount, what a test
	 * killed midway left mounted there (make check-mutation does). */
	const char *base = getenv("TMPDIR");
	char *p;

	if (!base || base[0] != '/' || strlen(base) > 40)
		base = "/tmp";
	if (asprintf(&p, "%s/rtid-test-XXXXXX", base) < 0)
		abort();
	if (!mkdtemp(p))
		abort();
	return p;
}

char *test_dir;

int test_dir_setup(void **state)
{
	(void)state;
	test_dir = tmp_dir();
	return 0;
}

int test_dir_teardown(void **state)
{
	(void)state;
	rm_tree(test_dir);
	free(test_dir);
	test_dir = NULL;
	return 0;
}

/* name under the directory at parent, and what is below it, removed without
 * following a link or leaving dev's filesystem: a link is unlinked, never
 * its target (a test plants links to /dev/null and to the build's programs);
 * a mount point is not entered. Only directories are made 0700 (a test may
 * leave one unreadable or read-only), each through its own fd, opened with
 * O_NOFOLLOW, never by a name a link could redirect. Errors leave the rest. */
static void rm_at(int parent, const char *name, dev_t dev)
{
	struct stat st;
	char self[64];
	int at, fd;
	DIR *d;
	struct dirent *de;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode) || st.st_dev != dev) {
		unlinkat(parent, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
		return;
	}
	/* O_PATH opens even a directory of mode 000; chmod through /proc/self/fd
	 * reaches the directory that fd holds, whatever the name means now. */
	at = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (at < 0)
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	chmod(self, 0700);
	fd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(at);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Entries removed while reading may hide others from the same pass:
	 * again until a pass finds none (or three passes, for what stays). */
	for (int pass = 0, seen = 1; seen && pass < 3; pass++) {
		seen = 0;
		rewinddir(d);
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				rm_at(dirfd(d), de->d_name, dev);
				seen = 1;
			}
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

void rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		rm_at(AT_FDCWD, path, st.st_dev);
}

static void mkdirs(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

/* path is ".../<pid>/task/<tid>/comm": write <pid>/status with Threads: the
 * task directories there now, as the kernel keeps the two in step. */
static void refresh_status(const char *path)
{
	char dir[4096], text[128];
	const char *e = strstr(path, "/task/"), *b = e;
	size_t nt = 0;
	DIR *d;
	struct dirent *de;

	if (!e || strcmp(strrchr(path, '/'), "/comm") || strchr(e + 6, '/') != strrchr(path, '/'))
		return;
	while (b > path && b[-1] >= '0' && b[-1] <= '9')
		b--;
	if (b == e || b == path || b[-1] != '/')
		return;
	snprintf(dir, sizeof(dir), "%.*s/task", (int)(e - path), path);
	d = opendir(dir);
	while (d && (de = readdir(d)))
		nt += de->d_name[0] >= '1' && de->d_name[0] <= '9';
	if (d)
		closedir(d);
	snprintf(text, sizeof(text), "Name:\tfake\nTgid:\t%.*s\nThreads:\t%zu\n", (int)(e - b), b,
		 nt);
	snprintf(dir, sizeof(dir), "%.*s/status", (int)(e - path), path);
	put(dir, text);
}

void write_file(const char *root, const char *rel, const char *text)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	put(path, text);
	refresh_status(path);
}

void ns_proc(const char *root, int pid, const char *ns, const char *status)
{
	char rel[64], path[4096];

	snprintf(rel, sizeof(rel), "%d/status", pid);
	write_file(root, rel, status);
	snprintf(rel, sizeof(rel), "%d/ns/.keep", pid);
	write_file(root, rel, "");
	snprintf(path, sizeof(path), "%s/%d/ns/pid", root, pid);
	if (symlink(ns, path) != 0)
		abort();
}

void fake_process(const char *root, int pid, const struct fake_thread *t, size_t n)
{
	char rel[128], text[64];

	for (size_t i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "%d/task/%d/comm", pid, t[i].tid);
		snprintf(text, sizeof(text), "%s\n", t[i].comm);
		write_file(root, rel, text);
	}
	snprintf(rel, sizeof(rel), "%d/task", pid);
	if (n == 0) {
		snprintf(rel, sizeof(rel), "%d/task/.keep", pid);
		write_file(root, rel, "");
	}
}

/* Copy the running program to to (mode 0755), its first byte changed when
 * flip. Returns 0 or -errno. */
int copy_self(const char *to, bool flip)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755), e = 0;
	ssize_t n = 0;

	if (in < 0 || out < 0)
		e = errno;
	for (bool first = true; !e && (n = read(in, buf, sizeof(buf))) > 0; first = false) {
		ssize_t w;

		buf[0] ^= first && flip ? 1 : 0;
		w = write(out, buf, (size_t)n);
		if (w != n)
			e = w < 0 ? errno : EIO; /* a short write to a test's own file */
	}
	if (!e && n < 0)
		e = errno;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && !e)
		e = errno;
	return -e;
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		abort();
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

const char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

const char *env_path(const char *name)
{
	const char *p = getenv(name);

	if (!p) {
		fprintf(stderr, "%s not set (run through meson test)\n", name);
		exit(99);
	}
	return p;
}

const char *fuse_unusable(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? "no /dev/fuse on this machine" : "cannot open /dev/fuse";
	close(fd);
	if (geteuid() != 0 && access("/usr/bin/fusermount3", X_OK) < 0)
		return "not root and no fusermount3 (apt-get install fuse3)";
	return NULL;
}

int skip_or_fail(const char *what, const char *why)
{
	const char *req = getenv("RTID_REQUIRE_FUSE");
	bool required = req && strcmp(req, "1") == 0;

	fprintf(stderr, "%s: %s%s\n", what, why,
		required ? " (RTID_REQUIRE_FUSE=1: failing)" : "; skipping");
	return required ? 1 : 77;
}

bool mounted(const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], needle[1024];
	bool found = false;

	snprintf(needle, sizeof(needle), " %s ", path);
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

bool instrumented(void)
{
	return getenv("RTID_UNDER_VALGRIND") || getenv("RTID_UNDER_SANITIZER");
}

double time_factor(void)
{
	if (getenv("RTID_UNDER_VALGRIND"))
		return 10.0;
	return getenv("RTID_UNDER_SANITIZER") ? 4.0 : 1.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void stat_line(int pid, unsigned long long start, char *buf, size_t len)
{
	snprintf(buf, len, "%d (python3) S 1 %d %d 0 -1 4194560 1000 0 0 0 5 3 0 0 20 0 4 0 %llu "
		 "123456789 2000 18446744073709551615 1 1 0 0 0 0 0 16781312 17638 0 0 0 17 1 0 0 "
		 "0 0 0 0 0 0 0 0 0 0 0\n", pid, pid, pid, start);
}
