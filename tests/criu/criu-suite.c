/* The shim under the real CRIU: criu dump and criu restore of real processes
 * with the real CUDA plugin (CRIU_FAULT=138 enables it without a GPU), the
 * cuda-checkpoint on CRIU's PATH being rtid's shim in front of the mock tool.
 * Each scenario checks that the restored (or surviving) process's threads
 * all run, that the restore thread the plugin used is the one the mock named,
 * and that the mock saw the plugin's sequence of calls. Controls run the same
 * without the shim, to show what CRIU does with the tool alone.
 *
 *   criu-suite SCENARIO    (exit 0 pass, 1 fail, 77 skip with the reason) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu-run.h"
#include "helpers.h"
#include "plugin-call.h"

#define RESTORE_NAME "cuda00001400006"
#define RENAMED "renamed-thread0" /* as long as RESTORE_NAME: the image stays valid */
#define DRIVER "580.159.03"

struct scenario {
	const char *name;
	bool shim, tree, scan, leave_running, rename, noise, fail_lock, own_failure;
	bool dump_fails; /* expected: the dump fails, the process lives on */
	bool serve;      /* rtid serve --actions behind the shim answers every call */
	bool confined;   /* ... confined as rtid.service confines it (what can be tried
			  * without systemd: one capability, no new privileges, no network) */
};

static const struct scenario scenarios[] = {
	{ .name = "driver", .shim = true },
	{ .name = "attested-scan", .shim = true, .scan = true },
	{ .name = "tree", .shim = true, .tree = true },
	{ .name = "renamed", .shim = true, .scan = true, .rename = true },
	{ .name = "stderr-chatter", .shim = true, .noise = true },
	{ .name = "stderr-chatter-control", .noise = true, .dump_fails = true },
	{ .name = "lock-fails", .shim = true, .fail_lock = true, .dump_fails = true },
	{ .name = "leave-running", .shim = true, .leave_running = true },
	{ .name = "own-failure", .shim = true, .own_failure = true },
	{ .name = "own-failure-control", .own_failure = true },
	{ .name = "serve", .shim = true, .serve = true },
	{ .name = "serve-confined", .shim = true, .serve = true, .confined = true },
};

static struct criu_env env;
static char dir[512], img[600], path_env[2048], mocklog[600];
static int failures;

static __attribute__((format(printf, 2, 3))) void check(bool ok, const char *fmt,
							    ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The bin folders: shim/cuda-checkpoint -> rtid, real/cuda-checkpoint -> mock. */
static void set_up(const struct scenario *s)
{
	char link[700], *d = tmp_dir();

	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(img, sizeof(img), "%s/img", dir);
	snprintf(mocklog, sizeof(mocklog), "%s/mock.log", dir);
	write_file(dir, "img/.keep", "");
	write_file(dir, "shim/.keep", "");
	write_file(dir, "real/.keep", "");
	snprintf(link, sizeof(link), "%s/shim/cuda-checkpoint", dir);
	check(symlink(env_path("RTID_BIN"), link) == 0, "symlink %s", link);
	snprintf(link, sizeof(link), "%s/real/cuda-checkpoint", dir);
	check(symlink(env_path("MOCK_TOOL"), link) == 0, "symlink %s", link);
	if (s->shim)
		snprintf(path_env, sizeof(path_env), "%s/shim:%s/real:/usr/sbin:/usr/bin:/bin", dir,
			 dir);
	else
		snprintf(path_env, sizeof(path_env), "%s/real:/usr/sbin:/usr/bin:/bin", dir);
	setenv("RTID_MOCK_LOG", mocklog, 1);
	if (s->scan) {
		char att[700];

		write_file(dir, "att.json", "{\"format\": 1, \"drivers\": {\"" DRIVER
					   "\": {\"agree\": 12, \"mismatch\": 0}}}");
		snprintf(att, sizeof(att), "%s/att.json", dir);
		setenv("RTID_MODE", "scan", 1);
		setenv("RTID_ATTESTATION", att, 1);
		setenv("RTID_DRIVER_VERSION", DRIVER, 1);
	}
	if (s->fail_lock)
		setenv("RTID_MOCK_FAIL_ACTION", "lock", 1);
	if (s->own_failure) {
		/* rtid's own machinery fails: its driver-API worker is missing. */
		char note[700];

		snprintf(note, sizeof(note), "%s/shim.log", dir);
		setenv("RTID_BACKEND", "api", 1);
		setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
		setenv("RTID_SHIM_LOG", note, 1);
	}
}

/* The mock's answers: each process's restore thread, none for the CPU one. */
static void write_case(const struct scenario *s, const struct tree *t)
{
	char text[4096], path[700];
	int n = snprintf(text, sizeof(text), "title CRIU scenario %s\nproves the shim under "
			 "CRIU\ndriver " DRIVER "\n", s->name);

	for (int i = 0; i < t->n; i++) {
		const struct proc *p = &t->p[i];

		n += snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\n", p->pid,
			      p->pid);
		if (p->restore_tid)
			n += snprintf(text + n, sizeof(text) - (size_t)n, "answer %d tid %d%s\n",
				      p->pid, p->restore_tid,
				      s->noise ? " noise \"WARNING: the driver is chatty\\n\"" : "");
		else
			n += snprintf(text + n, sizeof(text) - (size_t)n, "answer %d none\n", p->pid);
		if (p->restore_tid && s->serve) /* the mock libcuda takes the tid for its process */
			n += snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d " RESTORE_NAME "\n",
				      p->pid, p->restore_tid);
		if (p->restore_tid)
			n += snprintf(text + n, sizeof(text) - (size_t)n,
				      "expect driver %d tid=%d\n", p->pid, p->restore_tid);
		else
			n += snprintf(text + n, sizeof(text) - (size_t)n,
				      "expect driver %d tid=none\n", p->pid);
	}
	write_file(dir, "case", text);
	snprintf(path, sizeof(path), "%s/case", dir);
	setenv("RTID_CASE", path, 1);
}

/* What the plugin asks of the tool for one process (cuda_plugin.c). */
static int expected(const struct scenario *s, const struct proc *p, char out[][96])
{
	int n = 0, pid = p->pid, tid = p->restore_tid;
	bool grt = !s->scan; /* an attested scan answers without the tool */

#define CALL(...) snprintf(out[n++], 96, __VA_ARGS__)
	if (!tid) { /* no CUDA: asked at pause, at checkpoint and at restore; never scanned */
		CALL("--get-restore-tid --pid %d", pid);
		CALL("--get-restore-tid --pid %d", pid);
		CALL("--get-restore-tid --pid %d", pid);
		return n;
	}
	if (grt)
		CALL("--get-restore-tid --pid %d", pid);
	CALL("--get-state --pid %d", tid);
	CALL("--action lock --pid %d --timeout 10000", pid);
	if (s->fail_lock)
		return n;
	if (grt)
		CALL("--get-restore-tid --pid %d", pid);
	CALL("--action checkpoint --pid %d", pid);
	/* After the dump (-R), or at restore: the renamed thread is not found by
	 * the scan, so the driver is asked. */
	if (grt || s->rename)
		CALL("--get-restore-tid --pid %d", pid);
	CALL("--action restore --pid %d", pid);
	CALL("--action unlock --pid %d", pid);
#undef CALL
	return n;
}

static void compare_calls(const struct scenario *s, const struct tree *t)
{
	char got[CALLS_MAX][96], want[CALLS_MAX][96];

	for (int i = 0; i < t->n; i++) {
		int ids[2] = { t->p[i].pid, t->p[i].restore_tid };
		int ng = mock_calls(mocklog, ids, t->p[i].restore_tid ? 2 : 1, got, CALLS_MAX);
		int nw = expected(s, &t->p[i], want);

		check(ng == nw, "pid %d: the mock saw %d calls, the plugin makes %d", ids[0], ng, nw);
		for (int k = 0; k < ng && k < nw; k++)
			check(!strcmp(got[k], want[k]), "pid %d call %d: \"%s\", expected \"%s\"",
			      ids[0], k + 1, got[k], want[k]);
	}
}

/* The restore thread the plugin used is the one the mock named, and every
 * thread of every process runs. */
static void check_live(const struct scenario *s, const struct tree *t, const char *log,
		       const char *comm)
{
	char text[160], name[32];

	for (int i = 0; i < t->n; i++) {
		const struct proc *p = &t->p[i];

		check(proc_runs(p), "pid %d: not every thread runs", p->pid);
		if (!p->restore_tid)
			continue;
		snprintf(text, sizeof(text), "Restore thread pid %d found for real pid %d",
			 p->restore_tid, p->pid);
		check(file_has(log, text), "%s does not say \"%s\"", log, text);
		check(thread_comm(p->pid, p->restore_tid, name, sizeof(name)) == 0 &&
			      !strcmp(name, comm), "pid %d: thread %d is not named %s", p->pid,
		      p->restore_tid, comm);
	}
	(void)s;
}

/* Rename the restore thread in the dump: its name is in its core image. */
static void rename_in_image(const struct proc *p)
{
	char path[700], cmd[1600];

	snprintf(path, sizeof(path), "%s/core-%d.img", img, p->restore_tid);
	snprintf(cmd, sizeof(cmd), "grep -c " RESTORE_NAME " '%s' >/dev/null && "
		 "sed -i 's/" RESTORE_NAME "/" RENAMED "/' '%s'", path, path);
	check(system(cmd) == 0, "cannot rename the thread in %s", path);
}

static void dump(const struct scenario *s, const struct tree *t)
{
	char pid[16], log[700];
	char *args[] = { "dump", "-t", pid, "-D", img, "--shell-job", "-L", env.libdir, "-v4",
			 "-o", "dump.log", s->leave_running ? "-R" : NULL, NULL };
	char text[160];
	int rc;

	snprintf(pid, sizeof(pid), "%d", t->p[0].pid);
	snprintf(log, sizeof(log), "%s/dump.log", img);
	rc = criu_run(&env, dir, path_env, args);
	check((rc != 0) == s->dump_fails, "criu dump exit %d, expected %s (see %s)", rc,
	      s->dump_fails ? "a failure" : "0", log);
	for (int i = 0; i < t->n && rc == 0; i++) {
		if (!t->p[i].restore_tid)
			continue;
		snprintf(text, sizeof(text), "Checkpointing CUDA devices on pid %d restore_tid %d",
			 t->p[i].pid, t->p[i].restore_tid);
		check(file_has(log, text), "%s does not say \"%s\"", log, text);
	}
	printf("%s: criu dump exit %d%s\n", s->name, rc, s->shim ? "" : " (without the shim)");
	if (s->dump_fails || s->leave_running) {
		/* The process lives on, as after a failed or a -R dump of the real tool. */
		for (int i = 0; i < t->n; i++)
			check(proc_runs(&t->p[i]), "pid %d: not every thread runs after the dump",
			      t->p[i].pid);
		if (s->leave_running)
			check_live(s, t, log, RESTORE_NAME);
		tree_kill(t);
		return;
	}
	tree_reap(t); /* the pids must be free for the restore */
	if (s->rename)
		rename_in_image(&t->p[0]);
}

static void restore(const struct scenario *s, const struct tree *t)
{
	char *args[] = { "restore", "-D", img, "--shell-job", "-L", env.libdir, "-v4", "-o",
			 "restore.log", "-d", NULL };
	char log[700];
	int rc;

	snprintf(log, sizeof(log), "%s/restore.log", img);
	rc = criu_run(&env, dir, path_env, args);
	check(rc == 0, "criu restore exit %d (see %s)", rc, log);
	printf("%s: criu restore exit %d\n", s->name, rc);
	if (rc == 0)
		check_live(s, t, log, s->rename ? RENAMED : RESTORE_NAME);
	tree_kill(t);
}

/* rtid serve --actions on a socket of the scenario's own, ready before CRIU
 * runs; the shim finds it through RTID_SOCKET. confined: in a network
 * namespace of its own, with CAP_SYS_PTRACE alone in its bounding set and no
 * new privileges, as systemd/rtid.service runs it (PrivateNetwork=,
 * CapabilityBoundingSet=, NoNewPrivileges=); unshare and setpriv exec, so
 * the pid is the daemon's. */
static pid_t serve_start(bool confined)
{
	char sock[700];
	const char *argv[] = { "/usr/bin/unshare", "-n", "--", "/usr/bin/setpriv",
			       "--bounding-set=-all,+sys_ptrace", "--no-new-privs", "--",
			       env_path("RTID_BIN"), "serve", "--socket", sock, "--actions",
			       "--libcuda", env_path("MOCK_LIBCUDA"), NULL };
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rtid.sock", dir);
	pid = serve_spawn(confined ? argv : argv + 7, -1, 20 * time_factor());
	criu_remember_child(pid);
	if (confined && pid > 0) {
		char path[64], status[4096] = "", ours[64] = "", its[64] = "";
		FILE *f;
		size_t n;

		/* the confinement took: one capability, no new privileges, no network */
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if ((f = fopen(path, "r"))) {
			n = fread(status, 1, sizeof(status) - 1, f);
			status[n] = '\0';
			fclose(f);
		}
		check(strstr(status, "CapBnd:\t0000000000080000\n") &&
			      strstr(status, "NoNewPrivs:\t1\n"),
		      "rtid serve is not confined as its unit confines it");
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
		check(readlink(path, its, sizeof(its) - 1) > 0 &&
			      readlink("/proc/self/ns/net", ours, sizeof(ours) - 1) > 0 &&
			      strcmp(its, ours) != 0, "rtid serve shares the network namespace");
	}
	check(pid > 0, "rtid serve did not start: %s", pid < 0 ? strerror((int)-pid) : "");
	setenv("RTID_SOCKET", sock, 1);
	return pid;
}

/* The daemon answered every call of the plugin: the tool was never run, the
 * driver saw each action once per process, and attached once in all. */
static void serve_check(const struct tree *t, pid_t daemon)
{
	static const char *const ev[] = { "get-state", "lock", "checkpoint", "restore", "unlock" };
	char got[CALLS_MAX][96], needle[160];
	int st, ids[TREE_MAX * 2], n = 0;

	if (daemon <= 0)
		return; /* serve_start has counted the failure */
	for (int i = 0; i < t->n; i++) {
		ids[n++] = t->p[i].pid;
		if (t->p[i].restore_tid)
			ids[n++] = t->p[i].restore_tid;
	}
	/* The tool's calls name a pid in their argv; the driver's do not. */
	check(mock_calls(mocklog, ids, (size_t)n, got, CALLS_MAX) == 0,
	      "the tool ran beside rtid serve");
	for (int i = 0; i < t->n; i++)
		for (size_t k = 0; k < 5 && t->p[i].restore_tid; k++) {
			snprintf(needle, sizeof(needle), "\"mock\":\"libcuda\",\"event\":\"%s\","
				 "\"pid\":%d,", ev[k], t->p[i].pid);
			check(file_has(mocklog, needle), "the driver saw no %s for pid %d", ev[k],
			      t->p[i].pid);
		}
	check(file_has(mocklog, "cuInit"), "no attach");
	kill(daemon, SIGTERM);
	check(waitpid(daemon, &st, 0) == daemon && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "rtid serve did not stop cleanly");
}

static int run(const struct scenario *s)
{
	pid_t daemon = -1;
	struct tree t;

	set_up(s);
	if (task_start(s->tree, &t) < 0) {
		fprintf(stderr, "FAIL: the test task did not start\n");
		return 1;
	}
	write_case(s, &t);
	if (s->serve)
		daemon = serve_start(s->confined);
	dump(s, &t);
	if (!s->dump_fails && !s->leave_running)
		restore(s, &t);
	if (s->serve)
		serve_check(&t, daemon);
	else if (!s->noise || s->shim)
		compare_calls(s, &t);
	else
		/* CRIU alone read the tid as 0 (atoi of the warning) and asked for the
		 * state of thread 0, which the tool refuses: the dump failed. */
		check(file_has(mocklog, "get-restore-tid") &&
			      !file_has(mocklog, "\"lock\""), "the control did not stop before lock");
	if (s->own_failure && s->shim) {
		char note[700];

		snprintf(note, sizeof(note), "%s/shim.log", dir);
		check(file_has(note, "worker"), "the shim noted no worker failure in %s", note);
	}
	if (!failures)
		rm_tree(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char why[600];

	if (argc != 2) {
		fprintf(stderr, "usage: criu-suite SCENARIO\n");
		return 2;
	}
	if (criu_find(&env, why, sizeof(why)) < 0) {
		const char *req = getenv("RTID_REQUIRE_CRIU");

		fprintf(stderr, "criu suite: %s\n", why);
		return req && !strcmp(req, "1") ? 1 : 77;
	}
	/* Restored tasks and the orphans of a killed tree come to this process. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name))
			return run(&scenarios[i]);
	fprintf(stderr, "criu-suite: no scenario '%s'\n", argv[1]);
	return 2;
}
