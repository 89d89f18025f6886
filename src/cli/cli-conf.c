/* The shim's settings file, read by the shim and checked by rtid doctor.
 * Engines run CRIU with an environment of their own (Podman passes the
 * runtime PATH and XDG_RUNTIME_DIR only, CRI-O its monitor_env, containerd
 * its own), so a setting a user exports never reaches the shim; a file
 * does. It holds the same names as the environment. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "proc/proc.h"
#include "config.h"

#define CONF_MAX 16384
#define SYSTEM_CONF RTID_DEFAULT_SHIM_CONF /* /etc/rtid/shim.conf (-Ddefaults) */

/* The settings a file may hold: the shim's own and the resolver's. */
static const char *const names[] = {
	"RTID_SOCKET", "RTID_REAL_TOOL", "RTID_SERVICE_TIMEOUT", "RTID_SERVICE_ACTION_TIMEOUT",
	"RTID_SHIM_LOG", "RTID_SERVE_UID", "RTID_MODE", "RTID_BACKEND", "RTID_TIMEOUT",
	"RTID_ATTESTATION", "RTID_LIBCUDA", "RTID_PATTERN", "RTID_WORKER", "RTID_UNATTESTED",
	"RTID_CUDA_CHECKPOINT", /* RTID_REAL_TOOL's old name (cli_conf_load) */
	"RTID_PLUGIN_NO_CUDA_ON_ERROR", /* rtid's CRIU plugin's own */
};

static bool known(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return true;
	return false;
}

#define SECONDS "seconds: a number above 0, at most 1000000, without a unit (2, 0.5)"

const char *cli_conf_unusable(const char *name, const char *value)
{
	struct rtid__matcher m;
	enum rtid_mode mode;
	double sec;
	int n;

	if (!value || !*value)
		return NULL; /* empty is unset: the default */
	if (!strcmp(name, "RTID_MODE"))
		return rtid_mode_parse(value, &mode) == 0 ? NULL : "driver, scan, crosscheck or canary";
	if (!strcmp(name, "RTID_BACKEND"))
		return !strcmp(value, "tool") || !strcmp(value, "api") ? NULL : "tool or api";
	if (!strcmp(name, "RTID_TIMEOUT") || !strcmp(name, "RTID_SERVICE_TIMEOUT") ||
	    !strcmp(name, "RTID_SERVICE_ACTION_TIMEOUT"))
		return cli_parse_seconds(value, &sec) == 0 ? NULL : SECONDS;
	if (!strcmp(name, "RTID_SERVE_UID"))
		return !strcmp(value, "0") || rtid__parse_pid(value, &n) == 0 ? NULL
		       : "a uid: a number (not a name)";
	if (!strcmp(name, "RTID_UNATTESTED"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL : "1 (scan unattested) or 0";
	if (!strcmp(name, "RTID_PLUGIN_NO_CUDA_ON_ERROR"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL
		       : "1 (dump a process of no word without GPU state) or 0";
	if (!strcmp(name, "RTID_PATTERN")) {
		if (rtid__matcher_init(&m, value) < 0)
			return "a POSIX extended regular expression";
		rtid__matcher_fini(&m);
	}
	return NULL; /* a path, or a name: any value is one the shim can try */
}

const char *cli_conf_env_unusable(const char **value, const char **accepted)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]), *why = cli_conf_unusable(names[i], v);

		if (why) {
			*value = v;
			*accepted = why;
			return names[i];
		}
	}
	return NULL;
}

/* PREFIX/etc/rtid/shim.conf for the prefix rtid runs from (PREFIX/bin/rtid),
 * when it exists: an unpacked or relocated install needs no /etc. */
static bool beside_us(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return false;
	self[n] = '\0';
	for (int up = 0; up < 2; up++) {
		if (!(slash = strrchr(self, '/')))
			return false;
		*slash = '\0';
	}
	if ((size_t)snprintf(buf, len, "%s/etc/rtid/shim.conf", self) >= len)
		return false;
	return access(buf, F_OK) == 0;
}

const char *cli_conf_path(char *buf, size_t len)
{
	const char *env = getenv("RTID_SHIM_CONF");

	if (env)
		return *env ? env : NULL; /* set and empty: no file at all */
	return beside_us(buf, len) ? buf : SYSTEM_CONF;
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
static void line(unsigned no, char *s, cli_conf_fn fn, void *ctx)
{
	char *eq, *end = s + strlen(s);

	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#')
		return;
	eq = strchr(s, '=');
	if (!eq || eq == s || !known(s, (size_t)(eq - s))) {
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

int cli_conf_read(const char *path, cli_conf_fn fn, void *ctx, const char **why)
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
	text = malloc(CONF_MAX + 2);
	n = text ? read_all(fd, text, CONF_MAX + 1) : -ENOMEM;
	close(fd);
	if (n < 0 || n > CONF_MAX) {
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

/* RTID_REAL_TOOL's old name, read where the new one is not set. */
#define OLD_TOOL "RTID_CUDA_CHECKPOINT"

void cli_conf_alias(void)
{
	const char *old = getenv(OLD_TOOL), *now = getenv("RTID_REAL_TOOL");

	if (old && *old && !(now && *now))
		setenv("RTID_REAL_TOOL", old, 1);
}

struct load_ctx {
	const char *path;
	cli_conf_note_fn note;
	void *ctx;
	char old[1024]; /* the file's RTID_CUDA_CHECKPOINT, applied after every line */
	bool has_old;
};

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
	} else {
		setenv(name, value, 0);
	}
}

void cli_conf_load(cli_conf_note_fn note, void *ctx)
{
	char buf[4096], what[600];
	struct load_ctx l = { .path = cli_conf_path(buf, sizeof(buf)), .note = note, .ctx = ctx };
	const char *why = NULL;

	/* The environment's old name first: the environment wins over the file. */
	cli_conf_alias();
	if (!l.path)
		return;
	if (cli_conf_read(l.path, load_line, &l, &why) < 0) {
		if (why && strcmp(why, strerror(ENOENT))) { /* no file is no fault */
			snprintf(what, sizeof(what), "%s: %s: ignored", l.path, why);
			note(ctx, what);
		}
		return;
	}
	if (l.has_old && *l.old)
		setenv("RTID_REAL_TOOL", l.old, 0);
}
