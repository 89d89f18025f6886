/* The settings file, read one way by every reader (conf.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "config.h"

#define SYSTEM_CONF RTID_DEFAULT_SHIM_CONF /* /etc/rtid/shim.conf (-Ddefaults) */
#define OLD_TOOL "RTID_CUDA_CHECKPOINT"    /* RTID_REAL_TOOL's old name */

/* The settings a file may hold: the shim's own, the resolver's, the
 * plugin's. */
static const char *const names[] = {
	"RTID_SOCKET", "RTID_REAL_TOOL", "RTID_SERVICE_TIMEOUT", "RTID_SERVICE_ACTION_TIMEOUT",
	"RTID_SHIM_LOG", "RTID_SERVE_UID", "RTID_MODE", "RTID_BACKEND", "RTID_TIMEOUT",
	"RTID_ATTESTATION", "RTID_LIBCUDA", "RTID_PATTERN", "RTID_WORKER", "RTID_UNATTESTED",
	OLD_TOOL, "RTID_PLUGIN_NO_CUDA_ON_ERROR",
};

bool rtid__conf_known(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return true;
	return false;
}

const char *rtid__conf_name(size_t i)
{
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

/* PREFIX/etc/rtid/shim.conf, PREFIX self less up components, when it
 * exists: an unpacked or relocated install needs no /etc. */
static bool beside(const char *self, unsigned up, char *buf, size_t len)
{
	char p[PATH_MAX];
	char *slash;

	if (!self || snprintf(p, sizeof(p), "%s", self) >= (int)sizeof(p))
		return false;
	for (unsigned i = 0; i < up; i++) {
		if (!(slash = strrchr(p, '/')))
			return false;
		*slash = '\0';
	}
	if ((size_t)snprintf(buf, len, "%s/etc/rtid/shim.conf", p) >= len)
		return false;
	return access(buf, F_OK) == 0;
}

const char *rtid__conf_path(const char *self, unsigned up, char *buf, size_t len)
{
	const char *env = getenv("RTID_SHIM_CONF");

	if (env)
		return *env ? env : NULL; /* set and empty: no file at all */
	return beside(self, up, buf, len) ? buf : SYSTEM_CONF;
}

const char *rtid__conf_program_path(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0)
		self[n] = '\0';
	return rtid__conf_path(n > 0 ? self : NULL, 2, buf, len);
}

/* Trusted only when nobody but root and us can change it. */
static const char *untrusted(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* One line: NAME=VALUE, a comment (#) or blank; fn gets a setting, or NULL
 * for a line that is none. */
static void line(unsigned no, char *s, rtid__conf_fn fn, void *ctx)
{
	char *eq, *end = s + strlen(s);

	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#')
		return;
	eq = strchr(s, '=');
	if (!eq || eq == s || !rtid__conf_known(s, (size_t)(eq - s))) {
		if (eq)
			*eq = '\0';
		fn(ctx, no, NULL, s); /* its name, to quote: a misspelt one is found by it */
		return;
	}
	*eq = '\0';
	fn(ctx, no, s, eq + 1);
}

/* Up to cap bytes of fd: the count, or -errno. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);

		/* A regular file's read is not interrupted by a signal. */
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int rtid__conf_read(const char *path, rtid__conf_fn fn, void *ctx, const char **why)
{
	char *text;
	struct stat st;
	ssize_t n;
	unsigned no = 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), e;

	if (fd < 0) {
		e = errno;
		*why = strerror(e);
		return -e;
	}
	*why = fstat(fd, &st) < 0 ? strerror(errno) : untrusted(&st);
	if (*why) {
		close(fd);
		return -EPERM;
	}
	text = malloc(RTID__CONF_MAX + 2);
	n = text ? read_all(fd, text, RTID__CONF_MAX + 1) : -ENOMEM;
	close(fd);
	if (n < 0 || n > RTID__CONF_MAX) {
		*why = n < 0 ? strerror((int)-n) : "larger than 16 KiB";
		free(text);
		return n < 0 ? (int)n : -EFBIG;
	}
	text[n] = '\0';
	for (char *s = text, *nl; s && *s; s = nl, no++) {
		if ((nl = strchr(s, '\n')))
			*nl++ = '\0';
		line(no, s, fn, ctx);
	}
	free(text);
	return 0;
}

void rtid__conf_alias(void)
{
	const char *old = getenv(OLD_TOOL), *now = getenv("RTID_REAL_TOOL");

	if (old && *old && !(now && *now))
		setenv("RTID_REAL_TOOL", old, 1);
}

struct load_ctx {
	const char *path;
	const char *const *only;
	rtid__conf_note_fn note;
	void *ctx;
	char old[1024]; /* the file's RTID_CUDA_CHECKPOINT, applied after every line */
	bool has_old;
};

static bool wanted(const struct load_ctx *l, const char *name)
{
	for (const char *const *o = l->only; o && *o; o++)
		if (!strcmp(*o, name))
			return true;
	return !l->only;
}

static void load_line(void *ctx, unsigned no, const char *name, const char *value)
{
	struct load_ctx *l = ctx;
	char what[300];

	if (!name) {
		snprintf(what, sizeof(what), "%s:%u: not a setting: '%.60s' (NAME=VALUE, NAME one of "
			 "RTID_SOCKET, RTID_REAL_TOOL, ... of rtid(1)): ignored", l->path, no, value);
		l->note(l->ctx, what);
	} else if (!strcmp(name, OLD_TOOL)) {
		l->has_old = true;
		snprintf(l->old, sizeof(l->old), "%s", value);
	} else if (wanted(l, name)) {
		setenv(name, value, 0);
	}
}

void rtid__conf_load(const char *path, const char *const *only, rtid__conf_note_fn note,
		     void *ctx)
{
	struct load_ctx l = { .path = path, .only = only, .note = note, .ctx = ctx };
	const char *why = NULL;
	char what[600];

	/* The environment's old name first: the environment wins over the file. */
	rtid__conf_alias();
	if (!path)
		return;
	if (rtid__conf_read(path, load_line, &l, &why) < 0) {
		if (why && strcmp(why, strerror(ENOENT))) { /* no file is no fault */
			snprintf(what, sizeof(what), "%s: %s: ignored", path, why);
			note(ctx, what);
		}
		return;
	}
	if (l.has_old && *l.old && wanted(&l, "RTID_REAL_TOOL"))
		setenv("RTID_REAL_TOOL", l.old, 0);
}
