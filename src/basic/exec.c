/* What can be run: the search for a program the way execvp searches
 * (regular files we may execute only), never finding the running program
 * itself, so that a shim named cuda-checkpoint never calls itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"

/* Same bytes: a copy of the running program under another inode. */
static bool same_contents(int a, int b)
{
	char x[16384], y[sizeof(x)];

	for (;;) {
		ssize_t n = read(a, x, sizeof(x)), m;

		if (n < 0)
			return false;
		for (ssize_t got = 0; got < n; got += m) {
			m = read(b, y + got, (size_t)(n - got));
			if (m <= 0)
				return false;
		}
		if (n == 0)
			return read(b, y, 1) == 0;
		if (memcmp(x, y, (size_t)n))
			return false;
	}
}

/* Is cand the running program (self: its stat), by inode or by content? A
 * second copy of rtid on PATH must never stand in for the real tool. */
static bool is_self(const char *cand, const struct stat *self)
{
	struct stat st;
	int a, b;
	bool same;

	if (stat(cand, &st) < 0)
		return false;
	if (st.st_dev == self->st_dev && st.st_ino == self->st_ino)
		return true;
	if (st.st_size != self->st_size || !S_ISREG(st.st_mode))
		return false;
	a = open(cand, O_RDONLY | O_CLOEXEC);
	b = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	same = a >= 0 && b >= 0 && same_contents(a, b);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

int rtid__executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES; /* what execve says of a directory */
	return access(path, X_OK) < 0 ? -errno : 0;
}

static int search_path(const char *name, const struct stat *self, char **out)
{
	const char *path = getenv("PATH");
	const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";

	while (*p) {
		size_t len = strcspn(p, ":");
		char *cand;

		if (asprintf(&cand, "%.*s/%s", (int)len, len ? p : ".", name) < 0)
			return -ENOMEM;
		/* Skipping rtid itself keeps the shim from calling itself. */
		if (rtid__executable(cand) == 0 && !(self && is_self(cand, self))) {
			*out = cand;
			return 0;
		}
		free(cand);
		p += len + (p[len] == ':');
	}
	return -ENOENT;
}

/* The running program's stat. Through an open fd, not stat(): a checker
 * such as valgrind maps the open of /proc/self/exe to the program it runs,
 * while stat() would see the checker itself. O_PATH: an execute-only rtid
 * (mode 0711) must still know itself. */
static int self_stat(struct stat *st)
{
	int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	return r;
}

bool rtid__is_self(const char *path)
{
	struct stat self;

	return self_stat(&self) == 0 && is_self(path, &self);
}

/* Returns 0 and *out, -ENOENT when there is no such executable, -ENOMEM. */
int rtid__tool_find(const char *name, char **out)
{
	struct stat self;
	bool have_self = self_stat(&self) == 0;

	if (!name)
		name = "cuda-checkpoint";
	if (strchr(name, '/')) {
		char *copy;

		/* Known missing now is a clearer error than a child that exits 127. */
		if (rtid__executable(name) < 0)
			return -ENOENT;
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		*out = copy;
		return 0;
	}
	return search_path(name, have_self ? &self : NULL, out);
}
