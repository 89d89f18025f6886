/* Running the real CRIU on stand-in processes. See criu-run.h. */
#include "criu-run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static bool usable(const char *dir, struct criu_env *e)
{
	snprintf(e->criu, sizeof(e->criu), "%s/criu", dir);
	snprintf(e->libdir, sizeof(e->libdir), "%s/cuda_plugin.so", dir);
	if (access(e->criu, X_OK) < 0 || access(e->libdir, R_OK) < 0)
		return false;
	snprintf(e->libdir, sizeof(e->libdir), "%s", dir);
	return true;
}

/* "Version: 4.2" from criu --version: at least 4.1 (the CUDA plugin came
 * with 4.0; the fix for the split vvar, which kernels from 6.13 on need, with
 * 4.1). */
static bool version_ok(const char *criu, char *why, size_t len)
{
	char cmd[PATH_MAX + 32], line[128] = "";
	long major = 0, minor = 0;
	char *end;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --version 2>&1", criu);
	f = popen(cmd, "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			pclose(f);
		snprintf(why, len, "%s --version printed nothing", criu);
		return false;
	}
	pclose(f);
	if (strncmp(line, "Version: ", 9) == 0) {
		major = strtol(line + 9, &end, 10);
		if (*end == '.')
			minor = strtol(end + 1, NULL, 10);
	}
	if (major > 4 || (major == 4 && minor >= 1))
		return true;
	snprintf(why, len, "%s is not CRIU 4.1 or later: %s", criu, line);
	return false;
}

/* criu on PATH, its plugin beside it or in the usual ../lib/criu. */
static bool on_path(struct criu_env *e)
{
	const char *path = getenv("PATH");
	char dir[PATH_MAX / 2], lib[PATH_MAX];

	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		p += n + (p[n] == ':');
		if (usable(dir, e))
			return true;
		snprintf(e->criu, sizeof(e->criu), "%s/criu", dir);
		snprintf(lib, sizeof(lib), "%s/../lib/criu/cuda_plugin.so", dir);
		if (access(e->criu, X_OK) == 0 && access(lib, R_OK) == 0) {
			snprintf(e->libdir, sizeof(e->libdir), "%s/../lib/criu", dir);
			return true;
		}
	}
	return false;
}

int criu_find(struct criu_env *e, char *why, size_t len)
{
	const char *dir = getenv("RTID_CRIU_DIR"), *src = getenv("RTID_SOURCE_ROOT");
	char def[PATH_MAX];

	if (geteuid() != 0) {
		snprintf(why, len, "CRIU needs root");
		return -1;
	}
	if (dir && *dir) {
		if (!usable(dir, e)) {
			snprintf(why, len, "RTID_CRIU_DIR=%s holds no criu and cuda_plugin.so", dir);
			return -1;
		}
	} else {
		snprintf(def, sizeof(def), "%s/../shared/tools/criu", src ? src : ".");
		if (!usable(def, e) && !on_path(e)) {
			snprintf(why, len, "no CRIU: set RTID_CRIU_DIR, or put criu >= 4.1 with "
				 "cuda_plugin.so beside it on PATH (looked in %s too)", def);
			return -1;
		}
	}
	return version_ok(e->criu, why, len) ? 0 : -1;
}

/* One report line: "PID RESTORE_TID TID...". */
static int parse_line(char *line, struct proc *p)
{
	char *s = line, *end;
	long v[THREADS_MAX + 2];
	int n = 0;

	while (*s && n < THREADS_MAX + 2) {
		v[n] = strtol(s, &end, 10);
		if (end == s)
			break;
		n++;
		s = end;
	}
	if (n < 3)
		return -1;
	p->pid = (int)v[0];
	p->restore_tid = (int)v[1];
	p->ntids = n - 2;
	for (int i = 0; i < p->ntids; i++)
		p->tids[i] = (int)v[i + 2];
	return 0;
}

int task_start(bool tree, struct tree *t)
{
	return task_start_n(tree, 0, t);
}

/* Every stand-in process a test started, killed on every way out: at exit
 * and on the signals a timeout or a user sends, so that a test that fails
 * midway, or is ended, leaves no tree behind, restored ones included (CRIU
 * restores them at the same pids). A pid is killed only while it is still a
 * stand-in (its comm): never another process that took the number since. */
#define STARTED_MAX 256
static int started[STARTED_MAX];
static size_t nstarted;

static bool stand_in(int pid)
{
	char path[64], comm[32] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return n > 0 && !strncmp(comm, "criu-task\n", 10);
}

static pid_t children[16]; /* other children of the test's (a daemon), alive till reaped */
static size_t nchildren;

static void kill_started(void)
{
	for (size_t i = 0; i < nstarted; i++)
		if (started[i] > 0 && stand_in(started[i]))
			kill(started[i], SIGKILL);
	/* A child not yet reaped holds its pid: no other process has it. */
	for (size_t i = 0; i < nchildren; i++)
		if (waitpid(children[i], NULL, WNOHANG) == 0)
			kill(children[i], SIGKILL);
}

static void on_signal(int sig)
{
	kill_started();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void arm(void)
{
	static bool armed;

	if (!armed) {
		atexit(kill_started);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		signal(SIGHUP, on_signal);
		armed = true;
	}
}

static void remember(const struct tree *t)
{
	arm();
	for (int i = 0; i < t->n && nstarted < STARTED_MAX; i++)
		started[nstarted++] = t->p[i].pid;
}

void criu_remember_child(pid_t pid)
{
	arm();
	if (pid > 0 && nchildren < sizeof(children) / sizeof(children[0]))
		children[nchildren++] = pid;
}

static int start(bool tree, bool cuda, int cuda_children, int plain_children, struct tree *t)
{
	char buf[8192], *line, *next, count[16], plain[16];
	int fd[2], n = 0;
	ssize_t r;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	snprintf(count, sizeof(count), "%d", cuda_children);
	snprintf(plain, sizeof(plain), "%d", plain_children);
	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char *argv[8] = { (char *)env_path("CRIU_TASK"), "--cuda-children", count,
				  "--plain-children", plain };
		int a = 5;

		if (!cuda)
			argv[a++] = "--plain";
		if (tree)
			argv[a++] = "--tree";

		close(fd[0]);
		if (dup2(fd[1], 3) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	/* EOF once every process of the tree has reported and closed fd 3. */
	while (pid > 0 && n < (int)sizeof(buf) - 1 &&
	       (r = read(fd[0], buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += (int)r;
	close(fd[0]);
	buf[n] = '\0';
	for (line = buf; *line && t->n < TREE_MAX; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (parse_line(line, &t->p[t->n]) == 0)
			t->n++;
	}
	/* The root first: the report's order is the order the processes finished. */
	for (int i = 1; i < t->n; i++)
		if (t->p[i].pid == pid) {
			struct proc tmp = t->p[0];

			t->p[0] = t->p[i];
			t->p[i] = tmp;
		}
	remember(t);
	return pid > 0 && t->n == (tree ? 3 : 1) + cuda_children + plain_children && t->p[0].pid == pid ? 0 : -1;
}

int task_start_n(bool tree, int cuda_children, struct tree *t)
{
	return start(tree, true, cuda_children, 0, t);
}

int task_start_mix(bool cuda, int cuda_children, int plain_children, struct tree *t)
{
	return start(false, cuda, cuda_children, plain_children, t);
}

int criu_run(const struct criu_env *e, const char *dir, const char *path, char *const args[])
{
	char *argv[32] = { (char *)e->criu };
	char out[PATH_MAX];
	pid_t pid;
	int st, n = 1;

	for (; args[n - 1] && n < 31; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/criu.out", dir);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		int in = open("/dev/null", O_RDONLY);

		if (o < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		setenv("PATH", path, 1);
		setenv("CRIU_FAULT", "138", 1); /* the plugin without /proc/driver/nvidia/gpus */
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void tree_reap(const struct tree *t)
{
	for (int i = 0; i < t->n; i++)
		while (waitpid(t->p[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
}

void tree_kill(const struct tree *t)
{
	for (int i = 0; i < t->n; i++)
		kill(t->p[i].pid, SIGKILL);
	tree_reap(t);
}

static long switches(int pid, int tid)
{
	char path[96], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			v = strtol(line + 24, NULL, 10);
	fclose(f);
	return v;
}

bool proc_runs(const struct proc *p)
{
	long first[THREADS_MAX];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int moved = 0;

	for (int i = 0; i < p->ntids; i++)
		if ((first[i] = switches(p->pid, p->tids[i])) < 0)
			return false;
	/* Each thread wakes every 20 ms: within 5 s each must have moved on.
	 * No event tells us, so this polls the kernel's counters. */
	for (int round = 0; round < 500 && moved != (1 << p->ntids) - 1; round++) {
		nanosleep(&ts, NULL);
		for (int i = 0; i < p->ntids; i++)
			if (switches(p->pid, p->tids[i]) > first[i])
				moved |= 1 << i;
	}
	return moved == (1 << p->ntids) - 1;
}

int thread_comm(int pid, int tid, char *buf, size_t len)
{
	char path[96];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

static bool names_pid(json_t *argv, const int *pids, size_t npids)
{
	for (size_t i = 1; i + 1 < json_array_size(argv); i++) {
		const char *a = json_string_value(json_array_get(argv, i));

		if (a && !strcmp(a, "--pid")) {
			long pid = strtol(json_string_value(json_array_get(argv, i + 1)) ?: "0",
					  NULL, 10);

			for (size_t k = 0; k < npids; k++)
				if (pid == pids[k])
					return true;
		}
	}
	return false;
}

int mock_calls(const char *log, const int *pids, size_t npids, char out[][96], int max)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL), *argv = json_object_get(o, "argv");
		const char *ev = json_string_value(json_object_get(o, "event"));
		size_t len = 0;

		if (ev && !strcmp(ev, "start") && (!pids || names_pid(argv, pids, npids))) {
			out[n][0] = '\0';
			for (size_t i = 1; i < json_array_size(argv) && len < 90; i++)
				len += (size_t)snprintf(out[n] + len, 96 - len, "%s%s", i > 1 ? " " : "",
							json_string_value(json_array_get(argv, i)));
			n++;
		}
		json_decref(o);
	}
	fclose(f);
	return n;
}

bool file_has(const char *path, const char *text)
{
	static char buf[1 << 20];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, text) != NULL;
}
