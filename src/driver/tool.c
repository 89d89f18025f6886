/* cuda-checkpoint as a source of the driver's answer: finding the program and
 * reading what it did. Only exit 0 with one positive decimal on stdout is a
 * tid; exit 1 or 3 is the driver's "no restore thread"; all else is an error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"


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

/* A printable excerpt of foreign bytes for an error message. */
static void excerpt(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n' && i + 1 == len)
			break;
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

static void interpret_exit0(const struct rtid__child *c, struct rtid__answer *r)
{
	char ex[64];
	int tid;

	if (c->out_overflow) {
		rtid__answer_fail(r, RTID_ERR_BAD_OUTPUT, "stdout longer than %d bytes",
				RTID__OUT_MAX);
		return;
	}
	if (rtid__parse_tid(c->out, c->out_len, &tid) < 0) {
		excerpt(c->out, c->out_len, ex, sizeof(ex));
		rtid__answer_fail(r, RTID_ERR_BAD_OUTPUT, "stdout is not one positive number: \"%s\"",
				ex);
		return;
	}
	r->tid = tid;
}

void rtid__tool_interpret(const struct rtid__child *c, struct rtid__answer *r)
{
	char ex[96];
	int code;

	if (c->timed_out) {
		rtid__answer_fail(r, RTID_ERR_TIMEOUT, "cuda-checkpoint did not finish in time");
		return;
	}
	r->code = WIFSIGNALED(c->status) ? -WTERMSIG(c->status) : WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status)) {
		rtid__answer_fail(r, RTID_ERR_TOOL_CRASHED, "cuda-checkpoint killed by signal %d (%s)",
				WTERMSIG(c->status), sigabbrev_np(WTERMSIG(c->status)) ?: "?");
		return;
	}
	code = WEXITSTATUS(c->status);
	if (rtid__driver_said(code) == RTID__SAID_TID)
		interpret_exit0(c, r);
	else if (rtid__driver_said(code) == RTID__SAID_NONE)
		r->tid = 0;
	else {
		excerpt(c->err_len ? c->err : c->out, c->err_len ? c->err_len : c->out_len, ex,
			sizeof(ex));
		rtid__answer_fail(r, RTID_ERR_TOOL_FAILED, "cuda-checkpoint exit %d: %s", code, ex);
	}
}
