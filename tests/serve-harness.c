/* The daemon under test (serve-harness.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "casefile.h"
#include "helpers.h"
#include "plugin-call.h"
#include "serve-harness.h"

#define VERSION_LINE "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Tue\n"

static char *slurp_alloc(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, (1 << 20) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

void hd_prepare(struct daemon *d, const char *case_text, const int *pids)
{
	char *dir = tmp_dir(), rel[64];

	memset(d, 0, sizeof(*d));
	d->pid = -1;
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	free(dir);
	snprintf(d->sock, sizeof(d->sock), "%s/s", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/mock.log", d->dir);
	snprintf(d->casefile, sizeof(d->casefile), "%s/t.case", d->dir);
	snprintf(d->proc, sizeof(d->proc), "%s/proc", d->dir);
	snprintf(d->stderr_path, sizeof(d->stderr_path), "%s/serve.err", d->dir);
	if (case_text[0] == '@') {
		/* A case file of cases/, by name: the scenario's driver answers. */
		char path[512], *text;

		snprintf(path, sizeof(path), "%s/%s.case", env_path("SERVE_CASES"), case_text + 1);
		text = slurp_alloc(path);
		assert_true(text[0] != '\0');
		write_file(d->dir, "t.case", text);
		free(text);
	} else {
		write_file(d->dir, "t.case", case_text);
	}
	write_file(d->proc, "driver/nvidia/version", VERSION_LINE);
	for (; pids && *pids; pids++) {
		snprintf(rel, sizeof(rel), "%d/status", *pids);
		write_file(d->proc, rel, "Name:\tpython3\n");
	}
	/* The case's threads, as the kernel shows them: a tid the driver names
	 * is an answer only as a thread of the process asked about. */
	{
		struct casefile *c;
		char err[256], comm[64];

		if (cf_load(d->casefile, &c, err, sizeof(err)) == 0) {
			for (size_t i = 0; i < c->ntasks; i++) {
				snprintf(rel, sizeof(rel), "%d/task/%d/comm", c->tasks[i].pid,
					 c->tasks[i].tid);
				snprintf(comm, sizeof(comm), "%.*s\n", (int)c->tasks[i].comm_len,
					 c->tasks[i].comm);
				write_file(d->proc, rel, comm);
				if (c->tasks[i].tid == c->tasks[i].pid)
					continue;
				/* The kernel serves a thread as /proc/<tid> too (unlisted). */
				snprintf(rel, sizeof(rel), "%d/status", c->tasks[i].tid);
				snprintf(comm, sizeof(comm), "Tgid:\t%d\nThreads:\t2\n", c->tasks[i].pid);
				write_file(d->proc, rel, comm);
			}
			cf_free(c);
		}
	}
	setenv("RTID_CASE", d->casefile, 1);
	setenv("RTID_MOCK_LOG", d->log, 1);
	/* One driver state for every worker of the daemon, as the driver keeps it. */
	{
		char state[400];

		snprintf(state, sizeof(state), "%s/state", d->dir);
		mkdir(state, 0700);
		setenv("RTID_MOCK_STATE", state, 1);
	}
	setenv("RTID_REAL_TOOL", env_path("MOCK_TOOL"), 1);
	unsetenv("RTID_SHIM_ACTIVE");
}

/* rtid serve, after the words of prefix (a command that execs the rest). */
static void start(struct daemon *d, const char *const *prefix, const char *const *extra)
{
	const char *argv[40];
	int n = 0, err = open(d->stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	assert_true(err >= 0);
	for (; prefix && *prefix; prefix++)
		argv[n++] = *prefix;
	argv[n++] = env_path("RTID_BIN");
	argv[n++] = "serve";
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	argv[n++] = "--proc";
	argv[n++] = d->proc;
	argv[n++] = "--libcuda";
	argv[n++] = env_path("MOCK_LIBCUDA");
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	d->pid = serve_spawn(argv, err, 20 * time_factor());
	close(err);
	assert_true(d->pid > 0);
}

void hd_start(struct daemon *d, const char *const *extra)
{
	start(d, NULL, extra);
}

void hd_start_limited(struct daemon *d, unsigned nofile, bool soft_only, const char *const *extra)
{
	char script[64];
	const char *prefix[] = { "/bin/sh", "-c", script, "sh", NULL };

	snprintf(script, sizeof(script), "ulimit %s-n %u && exec \"$@\"", soft_only ? "-S " : "",
		 nofile);
	start(d, prefix, extra);
}

int hd_stop(struct daemon *d)
{
	int st;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR)
		;
	d->pid = -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void hd_cleanup(struct daemon *d)
{
	/* Exit 0 after SIGTERM: a sanitizer's or valgrind's finding in the
	 * daemon changes its status and fails the test. */
	int st = d->pid > 0 ? hd_stop(d) : 0;

	rm_tree(d->dir);
	assert_int_equal(st, 0);
}

int hd_ask(const struct daemon *d, int op, int pid, unsigned ms, struct rtid__svc_ans *a)
{
	struct rtid__svc_req q = { .op = op, .pid = pid, .timeout_ms = ms };
	struct rtid__svc_conn c;
	int r = rtid__svc_open(d->sock, &c);

	if (r < 0)
		return r;
	r = rtid__svc_call(&c, &q, rtid__now() + 20 * time_factor(), a);
	rtid__svc_close(&c);
	return r;
}

struct shim_run hd_shim(const struct daemon *d, const char *sock, const char *const *args)
{
	struct shim_run s = { 0 };
	char shim[400], env_sock[600], env_proc[600];
	/* The shim sees the tree the daemon serves: it applies the request rule
	 * to the number before it asks. */
	const char *argv[12] = { "cuda-checkpoint" }, *env[] = { env_sock, env_proc, NULL };
	int n = 1;

	snprintf(shim, sizeof(shim), "%s/cuda-checkpoint", d->dir);
	if (access(shim, F_OK) < 0)
		assert_int_equal(symlink(env_path("RTID_BIN"), shim), 0);
	for (; *args; args++)
		argv[n++] = *args;
	snprintf(env_sock, sizeof(env_sock), "RTID_SOCKET=%s", sock ? sock : d->sock);
	snprintf(env_proc, sizeof(env_proc), "RTID_PROC=%s", d->proc);
	s.status = plugin_call(shim, (char *const *)argv, env, s.out, sizeof(s.out));
	assert_true(s.status >= 0);
	return s;
}

void hd_shim_start(const struct daemon *d, const char *const *args, struct shim_bg *b)
{
	char shim[400], env_sock[600], env_proc[600];
	const char *argv[12] = { "cuda-checkpoint" };
	int p[2], n = 1;

	snprintf(shim, sizeof(shim), "%s/cuda-checkpoint", d->dir);
	if (access(shim, F_OK) < 0)
		assert_int_equal(symlink(env_path("RTID_BIN"), shim), 0);
	for (; *args; args++)
		argv[n++] = *args;
	snprintf(env_sock, sizeof(env_sock), "RTID_SOCKET=%s", d->sock);
	snprintf(env_proc, sizeof(env_proc), "RTID_PROC=%s", d->proc);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	b->pid = fork();
	assert_true(b->pid >= 0);
	if (b->pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		putenv(env_sock);
		putenv(env_proc);
		execv(shim, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	b->out = p[0];
}

struct shim_run hd_shim_wait(struct shim_bg *b)
{
	struct shim_run r = { 0 };
	size_t got = 0;
	ssize_t n;
	int st;

	while ((n = read(b->out, r.out + got, sizeof(r.out) - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (got += (size_t)n) + 1 >= sizeof(r.out))
			break;
	}
	r.out[got] = '\0';
	close(b->out);
	while (waitpid(b->pid, &st, 0) < 0 && errno == EINTR)
		;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return r;
}

double hd_log_time(const struct daemon *d, const char *event, int pid, int n)
{
	char *text = slurp_alloc(d->log), *line = text, *next;
	char want_event[80], want_pid[32];
	double t = -1;

	snprintf(want_event, sizeof(want_event), "\"event\":\"%s\"", event);
	snprintf(want_pid, sizeof(want_pid), "\"pid\":%d,", pid);
	for (; line && *line && t < 0; line = next) {
		char *s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strstr(line, want_event) && strstr(line, want_pid) && n-- == 0 &&
		    (s = strstr(line, "\"t\":")))
			t = strtod(s + 4, NULL);
	}
	free(text);
	return t;
}

double hd_log_wait(const struct daemon *d, const char *event, int pid, int n)
{
	double t;

	/* The mock's log has no signal to wait on: polled, bounded. */
	for (int i = 0; i < 2000 * time_factor(); i++) {
		if ((t = hd_log_time(d, event, pid, n)) >= 0)
			return t;
		poll(NULL, 0, 10);
	}
	fail_msg("no %s for pid %d in the mock log", event, pid);
	return -1;
}

int hd_log_count(const struct daemon *d, const char *needle)
{
	char *text = slurp_alloc(d->log), *p = text;
	int n = 0;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	free(text);
	return n;
}

int hd_log_self(const struct daemon *d, const char *needle)
{
	char *text = slurp_alloc(d->log), *line = text, *next;
	int self = -1;

	for (; line && *line; line = next) {
		char *s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strstr(line, needle) && (s = strstr(line, "\"self\":")))
			self = (int)strtol(s + 7, NULL, 10);
	}
	free(text);
	return self;
}

bool hd_said(const struct daemon *d, const char *needle)
{
	char *text = slurp_alloc(d->stderr_path);
	bool yes = strstr(text, needle) != NULL;

	free(text);
	return yes;
}

int hd_connect_raw(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int hd_recv(int fd, char *buf, size_t cap, double seconds)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, (int)(seconds * 1000)) != 1)
		return -1;
	n = recv(fd, buf, cap - 1, 0);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return (int)n;
}

long hd_rss_kb(pid_t pid)
{
	char path[64], *text, *p;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	text = slurp_alloc(path);
	if ((p = strstr(text, "VmRSS:")))
		kb = strtol(p + 6, NULL, 10);
	free(text);
	return kb;
}

int hd_fd_count(pid_t pid)
{
	char path[64];
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	while (dir && readdir(dir))
		n++;
	if (dir)
		closedir(dir);
	return n - 2;
}

pid_t hd_listener_as(uid_t uid, const char *sock, int *release)
{
	int ready[2], done[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	if ((pid = fork()) == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd;

		close(ready[0]);
		close(done[1]);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (setgid((gid_t)uid) < 0 || setuid(uid) < 0 ||
		    (fd = socket(AF_UNIX, SOCK_SEQPACKET, 0)) < 0 ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(done[0], &c, 1); /* until the parent closes it */
		_exit(0);
	}
	assert_true(pid > 0);
	close(ready[1]);
	close(done[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*release = done[1];
	return pid;
}

void hd_listener_end(pid_t pid, int release)
{
	close(release);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* One counter of the daemon's status ("stat NAME N"). */
struct stat_want {
	const char *name;
	long value;
};

static void stat_seen(void *ctx, const char *stat)
{
	struct stat_want *w = ctx;
	size_t n = strlen(w->name);

	if (!strncmp(stat, w->name, n) && stat[n] == ' ')
		w->value = strtol(stat + n + 1, NULL, 10);
}

long hd_stat(const struct daemon *d, const char *name)
{
	struct rtid__svc_conn c;
	struct stat_want w = { name, -1 };

	assert_int_equal(rtid__svc_open(d->sock, &c), 0);
	assert_int_equal(rtid__svc_status(&c, rtid__now() + 10, stat_seen, &w), 0);
	rtid__svc_close(&c);
	return w.value;
}
