/* The daemon's socket: handed over by systemd (socket activation), or made
 * here at the configured path, 0660, owned by root and the configured group.
 * Readiness goes to systemd (sd_notify) and to --ready-fd.
 *
 * libsystemd is loaded with dlopen when the daemon starts, not linked: the
 * same binary is the shim, which CRIU spawns for every call, and linking
 * would add libsystemd's seven libraries to every one of those spawns. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#ifdef RTID_HAVE_SYSTEMD
#include <dlfcn.h>
#include <systemd/sd-daemon.h>
#endif

#include "serve/serve.h"

#define BACKLOG 128

#ifdef RTID_HAVE_SYSTEMD
static struct {
	int (*listen_fds)(int);
	int (*is_socket_unix)(int, int, int, const char *, size_t);
	int (*notify)(int, const char *);
} sd;

/* libsystemd's calls, or all NULL when it cannot be loaded (then no systemd). */
static void load_systemd(void)
{
	void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return;
	sd.listen_fds = (int (*)(int))dlsym(lib, "sd_listen_fds");
	sd.is_socket_unix = (int (*)(int, int, int, const char *, size_t))dlsym(lib,
										   "sd_is_socket_unix");
	sd.notify = (int (*)(int, const char *))dlsym(lib, "sd_notify");
	if (!sd.listen_fds || !sd.is_socket_unix || !sd.notify)
		memset(&sd, 0, sizeof(sd));
}
#endif

/* Whether stderr is the journal: JOURNAL_STREAM ("DEV:INO", set by systemd
 * for a service whose stderr it connected) names the file stderr is. Asked
 * once: the daemon's stderr does not change. */
static bool to_journal(void)
{
	static int known = -1;
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char *end;

	if (known >= 0)
		return known;
	known = 0;
	if (!v || !*v || fstat(2, &st) < 0)
		return false;
	errno = 0;
	dev = strtoull(v, &end, 10);
	if (errno || end == v || *end != ':')
		return false;
	v = end + 1;
	ino = strtoull(v, &end, 10);
	if (errno || end == v || *end)
		return false;
	known = dev == (unsigned long long)st.st_dev && ino == (unsigned long long)st.st_ino;
	return known;
}

void serve_log(const char *fmt, ...)
{
	static const char prefix[] = "rtid serve: ";
	char line[512];
	size_t len = 0;
	int prio = 6; /* LOG_INFO, unless the text begins with "<N>" (SLOG_ERR...) */
	va_list ap;
	int n;

	if (fmt[0] == '<' && fmt[1] >= '0' && fmt[1] <= '7' && fmt[2] == '>') {
		prio = fmt[1] - '0';
		fmt += 3;
	}
	/* Under journald its priority (sd-daemon's "<N>" prefix), which the
	 * journal stamps itself; by hand or to a file, the time. */
	if (to_journal()) {
		len = (size_t)snprintf(line, sizeof(line), "<%d>", prio);
	} else {
		struct timespec ts;
		struct tm tm;

		/* UTC, as the shim's log stamps it: one format to sort and join. */
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		len += (size_t)snprintf(line + len, sizeof(line) - len, ".%03ldZ ", ts.tv_nsec / 1000000);
	}
	memcpy(line + len, prefix, sizeof(prefix) - 1);
	len += sizeof(prefix) - 1;
	va_start(ap, fmt);
	n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* Cut, never split: one write per line, so that lines of concurrent
	 * writers to the journal never interleave. */
	len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n : sizeof(line) - len - 2;
	line[len++] = '\n';
	if (write(2, line, len) < 0) {
		/* a log that cannot be written changes no answer */
	}
}

/* What a connect to path says: 0 when a daemon answers there (or its queue
 * is full), else the connect's -errno: -ECONNREFUSED alone means a socket
 * file with no one listening, a daemon's that died. */
static int probe(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EAGAIN)
		e = -errno;
	close(fd);
	return e;
}

/* Remove a stale socket left by a daemon that died; refuse anything else:
 * a socket someone answers on, and one we cannot tell (a connect refused
 * for permission is another user's daemon, not a stale socket). */
static int clear_path(const char *path)
{
	struct stat st;
	int e;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		serve_log(SLOG_ERR "cannot look at %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		serve_log(SLOG_ERR "%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	if ((e = probe(path)) == 0) {
		serve_log(SLOG_ERR "%s: another daemon is serving it", path);
		return -1;
	}
	if (e != -ECONNREFUSED) {
		serve_log(SLOG_ERR "%s: cannot tell whether a daemon serves it (connect: %s); not replacing it",
			  path, strerror(-e));
		return -1;
	}
	if (unlink(path) < 0) {
		serve_log(SLOG_ERR "cannot remove the stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The socket's directory (/run/rtid at boot) is made if missing, 0755: the
 * socket's own mode is what guards it. */
static void make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			serve_log(SLOG_ERR "cannot make %s: %s", dir, strerror(errno));
	}
}

static int create(const struct serve_cfg *cfg, struct slisten *l)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(cfg->socket_path) >= sizeof(sa.sun_path)) {
		serve_log(SLOG_ERR "socket path too long: %s", cfg->socket_path);
		return -1;
	}
	strcpy(sa.sun_path, cfg->socket_path);
	if (clear_path(cfg->socket_path) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		serve_log(SLOG_ERR "cannot make a socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0117); /* the file is born 0660: never a moment wider */
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || lstat(cfg->socket_path, &st) < 0 ||
	    (cfg->have_group && lchown(cfg->socket_path, (uid_t)-1, cfg->group) < 0) ||
	    listen(fd, BACKLOG) < 0) {
		serve_log(SLOG_ERR "cannot listen on %s: %s", cfg->socket_path, strerror(errno));
		if (r == 0)
			unlink(cfg->socket_path);
		close(fd);
		return -1;
	}
	*l = (struct slisten){ .fd = fd, .lock = l->lock, .created = true, .dev = st.st_dev,
			       .ino = st.st_ino };
	return 0;
}

/* <path>.lock, open and flock'ed (exclusive, not waiting), in *fd: one
 * daemon per socket path, also when two start at once, whose record of work
 * in flight is its alone. The kernel lets go of it at our death. 0, or -1
 * after saying why. */
static int take_lock(const char *path, int *fd)
{
	char lock[4096];

	snprintf(lock, sizeof(lock), "%s.lock", path);
	*fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*fd < 0) {
		serve_log(SLOG_ERR "cannot open %s: %s; not serving %s", lock, strerror(errno), path);
		return -1;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		serve_log(SLOG_ERR "%s is held: another rtid serve serves %s or is starting; not starting a "
			  "second one", lock, path);
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

void sl_unlock(struct slisten *l)
{
	if (l->lock >= 0)
		close(l->lock);
	l->lock = -1;
}

int sl_open(const struct serve_cfg *cfg, struct slisten *l)
{
	int lock;
#ifdef RTID_HAVE_SYSTEMD
	int n;
#endif

	make_parent(cfg->socket_path);
	if (take_lock(cfg->socket_path, &lock) < 0)
		return -1;
	l->lock = lock;
#ifdef RTID_HAVE_SYSTEMD
	load_systemd();
	n = sd.listen_fds ? sd.listen_fds(1) : 0;

	if (n > 1) {
		serve_log(SLOG_ERR "systemd passed %d sockets; rtid.socket has one", n);
		return -1;
	}
	if (n == 1) {
		int fd = SD_LISTEN_FDS_START;

		if (sd.is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
			serve_log(SLOG_ERR "the socket systemd passed is not a listening unix seqpacket socket");
			return -1;
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		fcntl(fd, F_SETFD, FD_CLOEXEC); /* the worker gets fd 3 of its own */
		*l = (struct slisten){ .fd = fd, .lock = lock };
		return 0;
	}
#endif
	return create(cfg, l);
}

void sl_close(struct slisten *l, const struct serve_cfg *cfg)
{
	struct stat st;

	if (l->fd < 0)
		return;
	close(l->fd);
	l->fd = -1;
	/* Only the file we made, and only if nobody has replaced it since. */
	if (l->created && lstat(cfg->socket_path, &st) == 0 && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(cfg->socket_path);
}

void sl_ready(const struct serve_cfg *cfg)
{
#ifdef RTID_HAVE_SYSTEMD
	if (sd.notify)
		sd.notify(0, "READY=1");
#endif
	if (cfg->ready_fd >= 0) {
		if (write(cfg->ready_fd, "ready\n", 6) < 0) {
			/* whoever waits sees the fd close instead */
		}
		close(cfg->ready_fd);
	}
}

void sl_stopping(void)
{
#ifdef RTID_HAVE_SYSTEMD
	if (sd.notify)
		sd.notify(0, "STOPPING=1");
#endif
}

#define LOG_BURST 5
#define LOG_WINDOW 10.0

static struct {
	double since;        /* this window's start */
	unsigned said, left; /* lines written, and left out, in it */
} kinds[SLOG_KINDS];

static const char *const kind_words[SLOG_KINDS] = {
	"about clients", "about denied requests", "about limits", "about accept", "about poll",
};

double serve_log_due(void)
{
	double t = 0;

	for (int k = 0; k < SLOG_KINDS; k++)
		if (kinds[k].left && (t == 0 || kinds[k].since + LOG_WINDOW < t))
			t = kinds[k].since + LOG_WINDOW;
	return t;
}

void serve_log_flush(void)
{
	double now = rtid__now();

	for (int k = 0; k < SLOG_KINDS; k++) {
		if (now - kinds[k].since < LOG_WINDOW)
			continue;
		if (kinds[k].left)
			serve_log(SLOG_WARNING "%u more lines %s left out in %.0f s", kinds[k].left,
				  kind_words[k], LOG_WINDOW);
		kinds[k].since = now;
		kinds[k].said = kinds[k].left = 0;
	}
}

void serve_log_limited(enum serve_log_kind kind, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	serve_log_flush();
	if (kinds[kind].said >= LOG_BURST) {
		kinds[kind].left++;
		return;
	}
	kinds[kind].said++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	serve_log(SLOG_WARNING "%s", line);
}
