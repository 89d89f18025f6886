/* rtid's CUDA plugin under the real CRIU: a tree of stand-in GPU processes
 * (four with CUDA, one without) dumped and restored through the plugin, with
 * rtid serve in front of the mock libcuda, or the mock tool alone; images
 * passed between it and CRIU's own plugin both ways; a dump that fails after
 * the checkpoints, rolled back. (Not a failing post-dump script: CRIU then
 * gives the plugins' exit a success while the tree lives on, which leaves
 * its own plugin's tasks checkpointed too.) A roll-back whose restore of one
 * process is stuck in the driver past the daemon's deadline: that process is
 * reported not set back, never handed to the tool; the others are set back.
 * rtid's plugin is enabled only where
 * /proc/driver/nvidia/gpus/ exists: the test runs in a mount namespace of
 * its own with a tmpfs there, and starts the tree inside it (CRIU would
 * otherwise have a mount namespace to dump). CRIU's own plugin is forced on
 * by CRIU_FAULT=138 (criu_run), which rtid's ignores.
 *
 *   criu-plugin SCENARIO    (exit 0 pass, 1 fail, 77 skip with the reason) */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criu-run.h"
#include "helpers.h"
#include "plugin-call.h"

#define RESTORE_NAME "cuda00001400006"
#define SLOW_S 2.0 /* each checkpoint and restore of the slow scenarios */

enum side { OURS, THEIRS }; /* rtid's plugin, CRIU's own */

struct scenario {
	const char *name;
	enum side dump_by, restore_by;
	bool serve; /* rtid serve runs (rtid's plugin asks it) */
	bool slow;  /* checkpoint and restore take SLOW_S each */
	bool fail;  /* the dump fails after the checkpoints (an image it cannot write) */
	bool other; /* rtid's plugin as built for another CRIU version: it refuses */
	bool conf;  /* the socket named in the settings file only (as engines run CRIU) */
	bool prefix; /* with conf: the file found beside the plugin's own file
		      * (PREFIX/etc/rtid/shim.conf, the plugin in PREFIX/LIBDIR/rtid/criu),
		      * as in an unpacked install; no RTID_SHIM_CONF */
	bool leave; /* criu dump -R: the tree lives on, its GPU state given back */
	bool busy;  /* the restore's daemon serves one action at a time: the rest
		     * go to the tool, each in its own call */
	bool nogpu; /* no /proc/driver/nvidia/gpus/: rtid's plugin stays out */
	bool spoil; /* the record spoilt between dump and restore: task by task */
	bool locked; /* every CUDA process locked before the dump: no lock, an unlock */
	bool reuse;  /* the image directory dumped into again, by CRIU's own plugin */
	bool broken; /* no daemon, and a tool that cannot tell (exit 2): the dump fails */
	bool lost;   /* no daemon, and the driver refuses every restore: killed */
	bool stuck;  /* with fail: the roll-back's restore of the first CUDA process
		      * never returns from the driver (the daemon's deadline: STUCK_S) */
	bool map;    /* the restore onto other GPUs: a map beside the images */
};

/* The node's two GPUs (the mock driver's); each process is on the first. */
#define GPU_A "GPU-0a1b2c3d-0000-4000-8000-00000000000a"
#define GPU_B "GPU-0a1b2c3d-0000-4000-8000-00000000000b"

#define STUCK_S 2.0

static const struct scenario scenarios[] = {
	{ .name = "plugin-serve", .serve = true, .slow = true },
	{ .name = "plugin-tool" },
	{ .name = "plugin-to-criu", .restore_by = THEIRS, .serve = true },
	{ .name = "criu-to-plugin", .dump_by = THEIRS, .serve = true },
	{ .name = "plugin-rollback", .serve = true, .fail = true },
	{ .name = "plugin-rollback-stuck", .serve = true, .fail = true, .stuck = true },
	{ .name = "plugin-other-criu", .serve = true, .other = true },
	{ .name = "plugin-settings", .serve = true, .conf = true },
	{ .name = "plugin-prefix-settings", .serve = true, .conf = true, .prefix = true },
	{ .name = "plugin-leave-running", .serve = true, .leave = true },
	{ .name = "plugin-busy", .serve = true, .busy = true },
	{ .name = "plugin-no-gpu", .serve = true, .nogpu = true },
	{ .name = "plugin-bad-record", .serve = true, .spoil = true },
	{ .name = "plugin-locked", .serve = true, .locked = true },
	{ .name = "plugin-reused-dir", .serve = true, .reuse = true },
	{ .name = "plugin-broken-tool", .broken = true },
	{ .name = "plugin-restore-fails", .lost = true },
	{ .name = "plugin-device-map", .serve = true, .map = true },
};

static struct criu_env env;
static char dir[512], img[600], path_env[2048], mocklog[600], ours[600], states[600];
static int failures;

static __attribute__((format(printf, 2, 3))) void check(bool ok, const char *fmt, ...)
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A GPU under /proc/driver, for this namespace only. */
static const char *private_gpu(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return "cannot unshare the mount namespace";
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		return "cannot make / private";
	if (mount("gpu", "/proc/driver", "tmpfs", 0, "mode=0755") < 0)
		return "cannot mount a tmpfs on /proc/driver";
	if (mkdir("/proc/driver/nvidia", 0755) < 0 || mkdir("/proc/driver/nvidia/gpus", 0755) < 0)
		return "cannot make /proc/driver/nvidia/gpus";
	return NULL;
}

static void set_up(const struct scenario *s)
{
	char link[700], *d = tmp_dir();

	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(img, sizeof(img), "%s/img", dir);
	snprintf(mocklog, sizeof(mocklog), "%s/mock.log", dir);
	if (s->prefix) {
		const char *libdir = getenv("RTID_PLUGIN_LIBDIR");
		char keep[700];

		snprintf(ours, sizeof(ours), "%s/prefix/%s/rtid/criu", dir, libdir ? libdir : "lib");
		snprintf(keep, sizeof(keep), "%s/.keep", ours + strlen(dir) + 1);
		write_file(dir, keep, "");
	} else {
		snprintf(ours, sizeof(ours), "%s/ours", dir);
	}
	snprintf(states, sizeof(states), "%s/states", dir);
	write_file(dir, "img/.keep", "");
	write_file(dir, "real/.keep", "");
	write_file(dir, "ours/.keep", "");
	write_file(dir, "states/.keep", "");
	snprintf(link, sizeof(link), "%s/real/cuda-checkpoint", dir);
	check(symlink(env_path("MOCK_TOOL"), link) == 0, "symlink %s", link);
	snprintf(link, sizeof(link), "%s/cuda_plugin.so", ours);
	check(symlink(env_path(s->other ? "RTID_PLUGIN_OTHER" : "RTID_PLUGIN"), link) == 0,
	      "symlink %s", link);
	snprintf(path_env, sizeof(path_env), "%s/real:/usr/sbin:/usr/bin:/bin", dir);
	setenv("RTID_MOCK_LOG", mocklog, 1);
	setenv("RTID_MOCK_STATE", states, 1); /* the daemon's workers share the driver's state */
	if (s->slow) {
		char secs[16];

		snprintf(secs, sizeof(secs), "%g", SLOW_S);
		setenv("RTID_MOCK_SLOW_OPS", "checkpoint,restore", 1);
		setenv("RTID_MOCK_SLOW_S", secs, 1);
	}
}

/* The drivers' answers: each process's restore thread, none for the CPU one. */
static void write_case(const struct tree *t)
{
	char text[4096], path[700];
	int n = snprintf(text, sizeof(text), "title rtid's CUDA plugin\nproves the plugin under "
			 "CRIU\ndriver 580.159.03\n");

	for (int i = 0; i < t->n; i++) {
		const struct proc *p = &t->p[i];

		n += snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\n", p->pid,
			      p->pid);
		if (p->restore_tid)
			n += snprintf(text + n, sizeof(text) - (size_t)n, "answer %d tid %d\ntask %d %d "
				      RESTORE_NAME "\nexpect driver %d tid=%d\n", p->pid,
				      p->restore_tid, p->pid, p->restore_tid, p->pid, p->restore_tid);
		else
			n += snprintf(text + n, sizeof(text) - (size_t)n,
				      "answer %d none\nexpect driver %d tid=none\n", p->pid, p->pid);
	}
	write_file(dir, "case", text);
	snprintf(path, sizeof(path), "%s/case", dir);
	setenv("RTID_CASE", path, 1);
}

/* How often the mock libcuda saw ev for pid. */
static int driver_saw(const char *ev, int pid)
{
	char needle[160];
	const char *text = slurp(mocklog), *p = text;
	int n = 0;

	snprintf(needle, sizeof(needle), "\"mock\":\"libcuda\",\"event\":\"%s\",\"pid\":%d,", ev,
		 pid);
	while (p && (p = strstr(p, needle)))
		n++, p++;
	return n;
}

/* How often the mock tool was run for an action on pid. */
static int tool_saw(const char *action, int pid)
{
	char got[CALLS_MAX][96], want[96];
	int n = 0, k = mock_calls(mocklog, &pid, 1, got, CALLS_MAX);

	snprintf(want, sizeof(want), "--action %s --pid %d", action, pid);
	for (int i = 0; i < k; i++)
		n += !strncmp(got[i], want, strlen(want));
	return n;
}

static int run_criu(enum side by, char *const *args)
{
	char *argv[32];
	int n = 0;

	for (; args[n] && n < 26; n++)
		argv[n] = args[n];
	argv[n++] = "-L";
	argv[n++] = by == OURS ? ours : env.libdir;
	argv[n] = NULL;
	return criu_run(&env, dir, path_env, argv);
}

static double dump(const struct scenario *s, const struct tree *t)
{
	char pid[16], core[700];
	char *args[] = { "dump", "-t", pid, "-D", img, "--shell-job", "-v4", "-o", "dump.log",
			 s->leave ? "-R" : NULL, NULL };
	double t0 = now(), took;
	int rc;

	snprintf(pid, sizeof(pid), "%d", t->p[0].pid);
	/* The last task's core image cannot be written: a folder holds its name.
	 * CRIU finds out after every checkpoint. */
	snprintf(core, sizeof(core), "%s/core-%d.img", img, t->p[t->n - 1].pid);
	check(!s->fail || mkdir(core, 0700) == 0, "mkdir %s", core);
	rc = run_criu(s->dump_by, args);
	took = now() - t0;
	check((rc != 0) == (s->fail || s->other || s->broken), "criu dump exit %d, expected %s "
	      "(see %s/dump.log)", rc, s->fail || s->other || s->broken ? "a failure" : "0", img);
	printf("%s: criu dump exit %d in %.2f s\n", s->name, rc, took);
	if (rc == 0 && !s->leave)
		tree_reap(t); /* the pids must be free for the restore */
	return rc == 0 ? took : -1;
}

static double restore(const struct scenario *s)
{
	char *args[] = { "restore", "-D", img, "--shell-job", "-v4", "-o", "restore.log", "-d",
			 NULL };
	double t0 = now(), took;
	int rc = run_criu(s->restore_by, args);

	took = now() - t0;
	check(rc == 0, "criu restore exit %d (see %s/restore.log)", rc, img);
	printf("%s: criu restore exit %d in %.2f s\n", s->name, rc, took);
	return took;
}

/* The mock tool keeps no driver state: after its checkpoint, the state
 * files say what the driver would hold. */
static void checkpointed_by_tool(const struct tree *t)
{
	char name[32];

	for (int i = 0; i < t->n; i++)
		if (t->p[i].restore_tid) {
			snprintf(name, sizeof(name), "states/%d", t->p[i].pid);
			write_file(dir, name, "2\n");
		}
}

/* action_s: the daemon's deadline of an action (0: its default). */
/* With s->conf, the socket is named in a settings file only. */
static pid_t serve_start(const struct scenario *s, const char *workers, double action_s)
{
	char sock[700], deadline[32];
	const char *argv[] = { env_path("RTID_BIN"), "serve", "--socket", sock, "--actions",
			       "--workers", workers, "--libcuda", env_path("MOCK_LIBCUDA"),
			       action_s > 0 ? "--action-timeout" : NULL, deadline, NULL };
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rtid.sock", dir);
	snprintf(deadline, sizeof(deadline), "%g", action_s);
	pid = serve_spawn(argv, -1, 20 * time_factor());
	check(pid > 0, "rtid serve did not start");
	criu_remember_child(pid);
	if (s->conf) {
		char text[800], path[700];

		const char *rel = s->prefix ? "prefix/etc/rtid/shim.conf" : "shim.conf";

		snprintf(text, sizeof(text), "# as for the shim\nRTID_SOCKET=%s\n", sock);
		write_file(dir, rel, text);
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
		chmod(path, 0600);
		if (s->prefix)
			unsetenv("RTID_SHIM_CONF"); /* the plugin's own lookup */
		else
			setenv("RTID_SHIM_CONF", path, 1);
		unsetenv("RTID_SOCKET");
	} else {
		setenv("RTID_SOCKET", sock, 1);
	}
	return pid;
}

static void serve_stop(pid_t daemon)
{
	int st;

	if (daemon <= 0)
		return;
	kill(daemon, SIGTERM);
	check(waitpid(daemon, &st, 0) == daemon && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "rtid serve did not stop cleanly");
}

/* Lock every CUDA process through the daemon before CRIU comes, as a job
 * that quiesces its processes first would (the shim, asked as the tool). */
static void lock_first(const struct tree *t)
{
	char link[700], cmd[1200];

	snprintf(link, sizeof(link), "%s/cuda-checkpoint", dir);
	check(symlink(env_path("RTID_BIN"), link) == 0, "symlink %s", link);
	for (int i = 0; i < t->n; i++)
		if (t->p[i].restore_tid) {
			snprintf(cmd, sizeof(cmd), "'%s' --action lock --pid %d", link, t->p[i].pid);
			check(system(cmd) == 0, "%s failed", cmd);
		}
}

/* The process whose restore a stuck scenario holds in the driver: the first
 * with CUDA state. */
static const struct proc *stuck_proc(const struct tree *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->p[i].restore_tid)
			return &t->p[i];
	return NULL;
}

/* Who did each action, and how often: exactly once per CUDA process. */
static void check_actions(const struct scenario *s, const struct tree *t)
{
	static const char *const acts[] = { "lock", "checkpoint", "restore", "unlock" };
	int tools = 0;

	for (int i = 0; i < t->n; i++) {
		const struct proc *p = &t->p[i];

		for (int k = 0; k < 4; k++) {
			bool dumping = k < 2, ours_did = (dumping ? s->dump_by : s->restore_by) == OURS;
			int by_driver = driver_saw(acts[k], p->pid), by_tool = tool_saw(acts[k], p->pid);
			int want = p->restore_tid ? 1 : 0;

			if (s->stuck && p == stuck_proc(t) && k == 3)
				want = 0; /* its restore's outcome is unknown: nothing after it */
			if (s->fail || s->leave) /* no restore: the dump's exit restores and unlocks */
				ours_did = true;
			if (s->nogpu) /* rtid's plugin did nothing, and nobody else was there */
				want = 0;
			/* s->locked: the one lock is the test's; the plugin did not lock again */
			if (s->busy && !dumping) {
				tools += by_tool;
				check(by_driver + by_tool == want, "pid %d: %s %d times through the daemon "
				      "and %d through the tool; expected %d in all", p->pid, acts[k],
				      by_driver, by_tool, want);
			} else if (s->serve && ours_did)
				check(by_driver == want && by_tool == 0, "pid %d: %s through the daemon "
				      "%d times, the tool %d; expected %d and 0", p->pid, acts[k],
				      by_driver, by_tool, want);
			else
				check(by_tool == want && by_driver == 0, "pid %d: %s through the tool %d "
				      "times, the daemon %d; expected %d and 0", p->pid, acts[k], by_tool,
				      by_driver, want);
		}
	}
	check(!s->busy || tools > 0, "the busy daemon sent no action to the tool");
}

/* A directory used twice: rtid's plugin dumps tree A there (its record names
 * A's CUDA tasks), then CRIU's own plugin dumps tree B into it (and leaves
 * the record). rtid's plugin restores B: the record is A's dump's, not this
 * image's, so it spares no question; every CUDA process of B is restored
 * and unlocked, once each, through the daemon. */
static int run_reused(const struct scenario *s)
{
	struct scenario theirs = *s;
	struct tree a, b;
	char log[700];
	pid_t daemon;

	set_up(s);
	if (task_start_n(true, 2, &a) < 0) {
		fprintf(stderr, "FAIL: the test task did not start\n");
		return 1;
	}
	write_case(&a);
	daemon = serve_start(s, "8", 0);
	if (dump(s, &a) < 0)
		tree_kill(&a);
	if (task_start_n(true, 2, &b) < 0) {
		fprintf(stderr, "FAIL: the second test task did not start\n");
		serve_stop(daemon);
		return 1;
	}
	write_case(&b);
	serve_stop(daemon); /* the mock driver of its workers reads the case at their start */
	daemon = serve_start(s, "8", 0);
	theirs.dump_by = THEIRS;
	if (dump(&theirs, &b) >= 0) {
		checkpointed_by_tool(&b);
		restore(s);
	}
	snprintf(log, sizeof(log), "%s/restore.log", img);
	check(file_has(log, "rtid-cuda.txt is another dump's"), "%s does not say the record is "
	      "another dump's", log);
	for (int i = 0; i < b.n; i++) {
		check(proc_runs(&b.p[i]), "pid %d: not every thread runs", b.p[i].pid);
		for (int k = 0; k < 2; k++) {
			const char *act = k ? "unlock" : "restore";
			int want = b.p[i].restore_tid ? 1 : 0;

			check(driver_saw(act, b.p[i].pid) == want, "pid %d: %s %d times through "
			      "the daemon; expected %d", b.p[i].pid, act, driver_saw(act, b.p[i].pid),
			      want);
		}
	}
	tree_kill(&b);
	serve_stop(daemon);
	if (!failures)
		rm_tree(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return failures ? 1 : 0;
}

/* Dead, or a zombie: not left running. */
static bool gone(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "r")))
		return true;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' && p[2] == 'Z';
}

/* No daemon, and what CRIU's own plugin would take silently:
 * - broken: a cuda-checkpoint that cannot tell whether a process has CUDA
 *   state (exit 2, as without the driver's library). The dump fails, each
 *   process named at error level, and every process still runs.
 * - lost: the driver refuses every restore. CRIU 4.2 takes no error of the
 *   restore hook, so rtid's plugin kills each CUDA process, said at error
 *   level; CRIU then cannot detach it, fails the restore (exit 1) and kills
 *   the rest of the tree: the failure reaches whoever ran CRIU, and nothing
 *   runs as if restored. */
static int run_untold(const struct scenario *s)
{
	char log[700], link[700], script[1400];
	struct tree t;

	set_up(s);
	if (task_start_n(true, 2, &t) < 0) {
		fprintf(stderr, "FAIL: the test task did not start\n");
		return 1;
	}
	write_case(&t);
	if (s->broken) {
		snprintf(link, sizeof(link), "%s/real/cuda-checkpoint", dir);
		unlink(link);
		snprintf(script, sizeof(script), "#!/bin/sh\n[ \"$1\" = --get-restore-tid ] && { echo "
			 "'Error initializing CUDA: \"OS call failed\"'; exit 2; }\nexec '%s' \"$@\"\n",
			 env_path("MOCK_TOOL"));
		write_file(dir, "real/cuda-checkpoint", script);
		check(chmod(link, 0755) == 0, "chmod %s", link);
	}
	if (dump(s, &t) >= 0 && s->lost) {
		char *args[] = { "restore", "-D", img, "--shell-job", "-v4", "-o", "restore.log",
				 "-d", NULL };
		int rc;

		setenv("RTID_MOCK_FAIL_ACTION", "restore", 1);
		rc = run_criu(OURS, args);
		unsetenv("RTID_MOCK_FAIL_ACTION");
		check(rc != 0, "criu restore exit 0: a restore without GPU state looked whole");
	}
	snprintf(log, sizeof(log), "%s/%s.log", img, s->broken ? "dump" : "restore");
	for (int i = 0; i < t.n; i++) {
		const struct proc *p = &t.p[i];
		char said[160];

		if (s->broken) {
			snprintf(said, sizeof(said), "PAUSE_DEVICES failed on pid %d: no word whether "
				 "it has CUDA state", p->pid);
			check(file_has(log, said) || i > 0, "%s does not say: %s", log, said);
			check(proc_runs(p), "pid %d: not every thread runs after the failed dump",
			      p->pid);
			check(tool_saw("lock", p->pid) == 0, "pid %d: locked by a failed dump", p->pid);
		} else {
			if (p->restore_tid) {
				snprintf(said, sizeof(said), "pid %d: its GPU state was not restored",
					 p->pid);
				check(file_has(log, said), "%s does not say: %s", log, said);
			}
			check(gone(p->pid), "pid %d: left running after a failed restore", p->pid);
		}
	}
	check(s->broken || !file_has(log, "cannot kill"), "%s says a kill failed", log);
	tree_kill(&t);
	if (!failures)
		rm_tree(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return failures ? 1 : 0;
}

/* The operator's map beside the images, as doc/plugin.md says to write it:
 * the record's run line, and the map. */
static void put_map(void)
{
	char path[700], text[400];
	const char *rec, *run;

	snprintf(path, sizeof(path), "%s/rtid-cuda.txt", img);
	rec = slurp(path);
	run = rec ? strstr(rec, "\nrun ") : NULL;
	if (!run) {
		check(false, "%s has no run line", path);
		return;
	}
	snprintf(text, sizeof(text), "rtid-cuda-map 1\n%.*s\nmap %s=%s\n",
		 (int)strcspn(run + 1, "\n"), run + 1, GPU_A, GPU_B);
	write_file(img, "rtid-cuda-map.txt", text);
	snprintf(path, sizeof(path), "%s/rtid-cuda-map.txt", img);
	chmod(path, 0644);
}

/* Every CUDA process restored onto the mapped GPU by the driver, through
 * the daemon (no tool), and the restore's log says from where. */
static void check_map(const struct tree *t)
{
	char log[700];

	for (int i = 0; i < t->n; i++) {
		const struct proc *p = &t->p[i];

		if (!p->restore_tid)
			continue;
		check(driver_saw("restore-map", p->pid) == 1, "pid %d: the driver took no map",
		      p->pid);
		check(tool_saw("restore", p->pid) == 0, "pid %d: restored by the tool", p->pid);
	}
	snprintf(log, sizeof(log), "%s/restore.log", img);
	check(file_has(log, "restoring onto other GPUs: " GPU_A "=" GPU_B " (rtid-cuda-map.txt "
		       "beside the images)"), "%s does not say the map was taken", log);
	unsetenv("RTID_MOCK_GPUS");
}

static int run(const struct scenario *s)
{
	char record[700];
	pid_t daemon = -1;
	struct tree t;
	double d, r = 0;

	if (s->reuse)
		return run_reused(s);
	if (s->broken || s->lost)
		return run_untold(s);
	set_up(s);
	if (task_start_n(true, 2, &t) < 0) {
		fprintf(stderr, "FAIL: the test task did not start\n");
		return 1;
	}
	write_case(&t);
	if (s->stuck) { /* before the daemon: its workers take the environment */
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", stuck_proc(&t)->pid);
		setenv("RTID_MOCK_STUCK_OPS", "restore", 1);
		setenv("RTID_MOCK_STUCK_PIDS", pid, 1);
	}
	if (s->map) /* before the daemon: its workers take the environment */
		setenv("RTID_MOCK_GPUS", GPU_A "," GPU_B, 1);
	if (s->serve)
		daemon = serve_start(s, "8", s->stuck ? STUCK_S * time_factor() : 0);
	/* The daemon's driver only: a tool run beside it would not hang, and is
	 * seen (check_actions). */
	unsetenv("RTID_MOCK_STUCK_OPS");
	unsetenv("RTID_MOCK_STUCK_PIDS");
	if (s->locked)
		lock_first(&t);
	d = dump(s, &t);
	if (s->stuck) {
		char log[700], said[200];

		/* Said at error level, with the daemon's reason; and the dump ends
		 * (the daemon's deadline, then the others set back). */
		snprintf(log, sizeof(log), "%s/dump.log", img);
		snprintf(said, sizeof(said), "pid %d: not set back: restore failed: rtid serve "
			 "started it and could not tell its outcome", stuck_proc(&t)->pid);
		check(file_has(log, said), "%s does not say: %s", log, said);
		check(file_has(log, "it is not run again"), "%s does not say the restore is not "
		      "run again", log);
	}
	if (s->other) {
		char log[700];

		/* Refused at init, loudly, before touching any task. */
		snprintf(log, sizeof(log), "%s/dump.log", img);
		check(file_has(log, "rtid_cuda_plugin: error: refusing to run: built for CRIU 0.1"),
		      "%s does not say the plugin refused", log);
		check(!file_has(mocklog, "\"event\":\"lock\""), "a task was locked");
		for (int i = 0; i < t.n; i++)
			check(proc_runs(&t.p[i]), "pid %d: not every thread runs", t.p[i].pid);
		tree_kill(&t);
		serve_stop(daemon);
		if (!failures)
			rm_tree(dir);
		return failures ? 1 : 0;
	}
	snprintf(record, sizeof(record), "%s/rtid-cuda.txt", img);
	if (s->nogpu) {
		char log[700];

		snprintf(log, sizeof(log), "%s/dump.log", img);
		check(file_has(log, "rtid_cuda_plugin: no GPU device found: disabled"),
		      "%s does not say the plugin is disabled", log);
	}
	check((s->dump_by == OURS && !s->nogpu) == (access(record, F_OK) == 0),
	      "the image %s rtid's record", s->dump_by == OURS ? "lacks" : "has");
	if (!s->fail && !s->leave && d >= 0) {
		if (s->dump_by == THEIRS)
			checkpointed_by_tool(&t);
		if (s->spoil)
			write_file(img, "rtid-cuda.txt", "rtid-cuda-plugin 1\ntask x\n");
		if (s->busy) {
			serve_stop(daemon);
			daemon = serve_start(s, "2", 0); /* actions: --workers less one */
		}
		if (s->map)
			put_map();
		r = restore(s);
		if (s->map)
			check_map(&t);
		if (s->spoil) {
			char log[700];

			snprintf(log, sizeof(log), "%s/restore.log", img);
			check(file_has(log, "rtid-cuda.txt unreadable: working task by task"),
			      "%s does not say the record was unreadable", log);
		}
	}
	for (int i = 0; i < t.n; i++)
		check(proc_runs(&t.p[i]), "pid %d: not every thread runs", t.p[i].pid);
	tree_kill(&t);
	check_actions(s, &t);
	if (!s->fail && !s->spoil) { /* nothing went wrong: the plugin says nothing is */
		static const char *const logs[] = { "dump.log", "restore.log" };

		for (int i = 0; i < 2; i++) {
			char log[700];

			snprintf(log, sizeof(log), "%s/%s", img, logs[i]);
			check(!file_has(log, "rtid_cuda_plugin: error: ") &&
			      !file_has(log, "rtid_cuda_plugin: warning: "),
			      "%s has the plugin's error or warning", log);
		}
	}
	if (s->fail && !s->stuck) {
		char log[700];

		snprintf(log, sizeof(log), "%s/dump.log", img);
		check(!file_has(log, "not set back"), "%s says a process was not set back", log);
	}
	if (s->busy) { /* each action the daemon refused: given to the tool, said so */
		char log[700];

		snprintf(log, sizeof(log), "%s/restore.log", img);
		check(file_has(log, ": asking cuda-checkpoint\n"), "%s does not say the tool "
		      "was asked", log);
	}
	if (s->slow) {
		/* One after another, four processes take 4 x SLOW_S each way;
		 * side by side, one action's time and CRIU's own: under 5 s. */
		double serial = 4 * SLOW_S;

		check(d < 5.0, "dump took %.2f s; one by one takes %.0f s", d, serial);
		check(r < 5.0, "restore took %.2f s; one by one takes %.0f s", r, serial);
	}
	serve_stop(daemon);
	if (!failures)
		rm_tree(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return failures ? 1 : 0;
}

/* Whether env's CRIU is the version the plugin was built for: a plugin for
 * 4.2 refuses inside any other (plugin-other-criu shows it), so another CRIU
 * is a skip here, not a failure. */
static bool same_version(char *why, size_t len)
{
	const char *want = getenv("RTID_PLUGIN_CRIU");
	char cmd[PATH_MAX + 32], line[128] = "", expect[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --version 2>&1", env.criu);
	if ((f = popen(cmd, "r"))) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		pclose(f);
	}
	snprintf(expect, sizeof(expect), "Version: %s\n", want ? want : "?");
	if (!strcmp(line, expect))
		return true;
	snprintf(why, len, "rtid's plugin is built for CRIU %s; %.200s says %.100s", want ? want : "?",
		 env.criu, line);
	return false;
}

int main(int argc, char **argv)
{
	char why[600];
	const char *no;

	if (argc != 2) {
		fprintf(stderr, "usage: criu-plugin SCENARIO\n");
		return 2;
	}
	if (criu_find(&env, why, sizeof(why)) < 0) {
		const char *req = getenv("RTID_REQUIRE_CRIU");

		fprintf(stderr, "criu plugin suite: %s\n", why);
		return req && !strcmp(req, "1") ? 1 : 77;
	}
	/* A sanitized plugin needs its runtime loaded first, which CRIU, built
	 * plain, does not do: CRIU aborts as it loads it (exit 134). The plain
	 * build runs these scenarios. */
	if (getenv("RTID_UNDER_SANITIZER")) {
		fprintf(stderr, "criu plugin suite: a sanitized plugin cannot load into a plain CRIU\n");
		return 77;
	}
	if (!getenv("RTID_PLUGIN") || !*getenv("RTID_PLUGIN")) {
		fprintf(stderr, "criu plugin suite: rtid's plugin is not built (see meson's summary)\n");
		return 77;
	}
	if (!same_version(why, sizeof(why))) {
		fprintf(stderr, "criu plugin suite: %s\n", why);
		return 77;
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name) && scenarios[i].nogpu) {
			if (!access("/proc/driver/nvidia/gpus", F_OK)) {
				fprintf(stderr, "criu plugin suite: this machine has an NVIDIA GPU\n");
				return 77;
			}
			prctl(PR_SET_CHILD_SUBREAPER, 1);
			return run(&scenarios[i]);
		}
	if ((no = private_gpu())) {
		fprintf(stderr, "criu plugin suite: %s: %s\n", no, strerror(errno));
		return 77;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name))
			return run(&scenarios[i]);
	fprintf(stderr, "criu-plugin: no scenario '%s'\n", argv[1]);
	return 2;
}
