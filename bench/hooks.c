/* rtid-bench part 8: what a CUDA plugin costs CRIU per task that has no
 * CUDA state. The real CRIU dumps and restores a tree of one stand-in CUDA
 * process (the root, so that the restore runs the plugin too) and N children
 * without CUDA (N = 1, 17, 103), three ways in one run: no CUDA plugin (the
 * floor), rtid's plugin with rtid serve, CRIU's plugin with the shim and rtid
 * serve. The mock driver answers at once (no attach delay, no slow action):
 * what is left is the plugins' own work.
 *
 * Each hook's cost per task without CUDA: rtid's plugin measures its own
 * time in each hook, entry to return (its "hook cost" line in CRIU's log,
 * src/plugin/plugin.c); for CRIU's plugin, CRIU's own log gives it, the gap
 * between CRIU's line before the hook ("plugin: `cuda_plugin' hook N") and
 * the plugin's line for that task ("no need to ... devices on pid P"), the
 * way the same figure is read for rtid's plugin in the column beside. The
 * reference: criu PR #3076, the driver API in a private worker per CRIU run,
 * 0.63 ms per hook for 17 processes (37 us per task) on an H200 host, and
 * 11.7 ms of driver initialisation per CRIU run. Whole runs are printed too:
 * they vary by +-10 ms from run to run, more than these costs. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "bench.h"
#include "criu-run.h"
#include "plugin-call.h"
#include "proto/service-client.h"

#define REF_TASK_US 37.0 /* #3076: 0.63 ms per hook / 17 processes */
#define REF_INIT_MS 11.7
#define TARGET_US 75.0

enum way { FLOOR, PLUGIN, SHIM, WAYS };
static const char *const way_name[WAYS] = {
	"no CUDA plugin (floor)", "rtid's plugin + rtid serve", "CRIU's plugin + shim + rtid serve",
};
enum { H_PAUSE, H_CHECKPOINT, H_RESUME, HOOKS };
static const char *const hook_name[HOOKS] = { "PAUSE_DEVICES", "CHECKPOINT_DEVICES",
					      "RESUME_DEVICES_LATE" };
static const int hook_no[HOOKS] = { 10, 11, 9 }; /* CR_PLUGIN_HOOK__... */

static struct criu_env env;
static char dir[600];

/* One run's figures: -1 where there are none. */
struct fig {
	double dump_s, restore_s;
	double in_us[HOOKS];   /* inside rtid's plugin, per task without CUDA */
	double cuda_us[HOOKS]; /* inside rtid's plugin, for the CUDA task */
	double log_us[HOOKS];  /* from CRIU's log, per task without CUDA */
	double init_us[2];     /* inside rtid's plugin: dump, restore */
	int counted[HOOKS];    /* tasks without CUDA seen in each hook */
};

static void put(const char *rel, const char *text)
{
	char path[800];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "rtid-bench: cannot write %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static void sub(const char *rel, const char *target, const char *name)
{
	char path[800];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "rtid-bench: cannot make %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (target) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, rel, name);
		if (symlink(target, path) < 0) {
			fprintf(stderr, "rtid-bench: cannot link %s: %s\n", path, strerror(errno));
			exit(2);
		}
	}
}

/* The case: the root's restore thread, every other pid none. */
static void stage(const struct tree *t)
{
	static char text[64 * TREE_MAX];
	char path[700];
	int n = snprintf(text, sizeof(text), "title bench hooks\nproves nothing\ndriver 580.159.03\n");

	for (int i = 0; i < t->n; i++)
		n += t->p[i].restore_tid > 0
		     ? snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\nanswer %d tid "
				"%d\ntask %d %d cuda00001400006\n", t->p[i].pid, t->p[i].pid,
				t->p[i].pid, t->p[i].restore_tid, t->p[i].pid, t->p[i].restore_tid)
		     : snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\nanswer %d "
				"none\n", t->p[i].pid, t->p[i].pid, t->p[i].pid);
	snprintf(text + n, sizeof(text) - (size_t)n, "expect driver %d tid=%d\n", t->p[0].pid,
		 t->p[0].restore_tid);
	put("case", text);
	snprintf(path, sizeof(path), "%s/case", dir);
	setenv("RTID_CASE", path, 1);
}

static pid_t daemon_start(void)
{
	char sock[700];
	const char *argv[] = { env_path("RTID_BIN"), "serve", "--socket", sock, "--actions",
			       "--quiet", "--libcuda", env_path("MOCK_LIBCUDA"), NULL };
	pid_t pid;

	/* On a node the socket and the record of work in flight beside it are
	 * on a tmpfs (/run/rtid): so here, or every request pays a journaled
	 * rename of the record (ext4: 0.3-0.5 ms). */
	snprintf(sock, sizeof(sock), "%s/run", dir);
	if (mount("run", sock, "tmpfs", 0, "mode=0755") < 0) {
		fprintf(stderr, "rtid-bench: no tmpfs on %s: %s\n", sock, strerror(errno));
		exit(2);
	}
	snprintf(sock, sizeof(sock), "%s/run/rtid.sock", dir);
	if ((pid = serve_spawn(argv, -1, 60)) <= 0) {
		fprintf(stderr, "rtid-bench: rtid serve did not start on %s\n", sock);
		exit(2);
	}
	setenv("RTID_SOCKET", sock, 1);
	return pid;
}

/* "(SS.UUUUUU) ..." : the seconds, or -1. */
static double stamp(const char *line)
{
	char *end;
	double t;

	if (line[0] != '(')
		return -1;
	t = strtod(line + 1, &end);
	return end > line + 1 && *end == ')' ? t : -1;
}

/* The value after key in text, or -1. */
static double after(const char *text, const char *key)
{
	const char *s = text ? strstr(text, key) : NULL;

	return s ? strtod(s + strlen(key), NULL) : -1;
}

/* From rtid's plugin's "hook cost" line of a log (run: 0 dump, 1 restore). */
static void inside(const char *line, struct fig *f, int run)
{
	char key[64];

	f->init_us[run] = after(line, "init ");
	for (int k = 0; k < HOOKS; k++) {
		const char *h;
		char *end;
		double n, us;

		snprintf(key, sizeof(key), "%s ", hook_name[k]);
		if (!(h = strstr(line, key)))
			continue;
		n = strtod(h + strlen(key), &end);
		us = after(h, " without CUDA ");
		if (n > 0 && us >= 0)
			f->in_us[k] = us / n;
		f->cuda_us[k] = after(h, "us, 1 with ");
	}
}

/* From CRIU's log: for each hook, the gaps between CRIU's line before it
 * and the plugin's "need to ... devices on pid" line for that task. */
static void log_gaps(const char *log, struct fig *f, int log_run)
{
	double t0 = -1, sum[HOOKS] = { 0 };
	int pending = -1, n[HOOKS] = { 0 };
	FILE *in = fopen(log, "r");
	char line[1024];

	while (in && fgets(line, sizeof(line), in)) {
		const char *h;

		if ((h = strstr(line, "plugin: `cuda_plugin' hook "))) {
			int no = atoi(h + strlen("plugin: `cuda_plugin' hook ")); /* CRIU's own line */

			pending = -1;
			for (int k = 0; k < HOOKS; k++)
				if (hook_no[k] == no)
					pending = k;
			t0 = stamp(line);
		} else if (pending >= 0 && strstr(line, "eed to ") && strstr(line, " devices on pid ")) {
			if (stamp(line) >= 0 && t0 >= 0) {
				sum[pending] += stamp(line) - t0;
				n[pending]++;
			}
			pending = -1;
		} else if (strstr(line, "hook cost: ")) {
			inside(line, f, log_run);
		}
	}
	if (in)
		fclose(in);
	for (int k = 0; k < HOOKS; k++) {
		f->log_us[k] = n[k] ? sum[k] / n[k] * 1e6 : -1;
		f->counted[k] = n[k];
	}
}

/* One dump and restore of the root and n children without CUDA. */
static int one(enum way w, int n, struct fig *f)
{
	char pid[16], libdir[PATH_MAX], path_env[2048], log[800];
	char *dump[] = { "dump", "-t", pid, "-D", "img", "--shell-job", "-o", "dump.log", "-v4", "-L",
			 libdir, NULL };
	char *restore[] = { "restore", "-D", "img", "--shell-job", "-o", "restore.log", "-v4", "-d",
			    "-L", libdir, NULL };
	char *d = tmp_dir();
	pid_t daemon = -1;
	struct tree t;
	double t0;
	int ok = -1;

	*f = (struct fig){ .dump_s = -1, .restore_s = -1 };
	for (int k = 0; k < HOOKS; k++)
		f->in_us[k] = f->cuda_us[k] = f->log_us[k] = -1;
	f->init_us[0] = f->init_us[1] = -1;
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	sub("img", NULL, NULL);
	sub("none", NULL, NULL);
	sub("run", NULL, NULL);
	sub("states", NULL, NULL);
	snprintf(log, sizeof(log), "%s/states", dir);
	setenv("RTID_MOCK_STATE", log, 1); /* the daemon's workers share the driver's state */
	sub("real", env_path("MOCK_TOOL"), "cuda-checkpoint");
	sub("shim", env_path("RTID_BIN"), "cuda-checkpoint");
	sub("ours", env_path("RTID_PLUGIN"), "cuda_plugin.so");
	if (w == SHIM) /* CRIU's plugin; the shim first on PATH, the real tool behind it */
		snprintf(libdir, sizeof(libdir), "%s", env.libdir);
	else
		snprintf(libdir, sizeof(libdir), "%s/%s", dir, w == FLOOR ? "none" : "ours");
	snprintf(path_env, sizeof(path_env), "%s%s%s/real:/usr/sbin:/usr/bin:/bin",
		 w == SHIM ? dir : "", w == SHIM ? "/shim:" : "", dir);
	if (task_start_mix(true, 0, n, &t) < 0) {
		fprintf(stderr, "rtid-bench: the stand-in tree did not start\n");
		exit(2);
	}
	stage(&t);
	if (w != FLOOR)
		daemon = daemon_start();
	snprintf(pid, sizeof(pid), "%d", t.p[0].pid);
	if (chdir(dir) < 0)
		exit(2);
	t0 = rtid__now();
	if (criu_run(&env, dir, path_env, dump) == 0) {
		f->dump_s = rtid__now() - t0;
		tree_reap(&t);
		t0 = rtid__now();
		if (criu_run(&env, dir, path_env, restore) == 0) {
			f->restore_s = rtid__now() - t0;
			ok = 0;
		}
	}
	if (chdir("/") < 0)
		exit(2);
	tree_kill(&t);
	if (daemon > 0) {
		kill(daemon, SIGTERM);
		waitpid(daemon, NULL, 0);
		snprintf(log, sizeof(log), "%s/run", dir);
		umount2(log, MNT_DETACH);
	}
	unsetenv("RTID_SOCKET");
	if (ok == 0 && w != FLOOR) {
		struct fig r = *f;

		snprintf(log, sizeof(log), "%s/img/dump.log", dir);
		log_gaps(log, f, 0);
		snprintf(log, sizeof(log), "%s/img/restore.log", dir);
		log_gaps(log, &r, 1);
		f->log_us[H_RESUME] = r.log_us[H_RESUME];
		f->counted[H_RESUME] = r.counted[H_RESUME];
		f->in_us[H_RESUME] = r.in_us[H_RESUME];
		f->cuda_us[H_RESUME] = r.cuda_us[H_RESUME];
		f->init_us[1] = r.init_us[1];
	}
	if (ok < 0)
		fprintf(stderr, "rtid-bench: a CRIU run failed (%s, %d children): see %s\n",
			way_name[w], n, dir);
	else if (!getenv("RTID_BENCH_KEEP"))
		rm_tree(dir);
	else
		fprintf(stderr, "rtid-bench: kept %s\n", dir);
	return ok;
}

#define REPS 5

/* The median over the runs of each figure (-1 where none had it). */
static double med(const struct fig *v, int n, size_t off)
{
	double x[REPS];
	int k = 0;

	for (int i = 0; i < n; i++) {
		double y = *(const double *)((const char *)&v[i] + off);

		if (y >= 0)
			x[k++] = y;
	}
	return k ? median(x, (size_t)k) : -1;
}

/* The hops of a question, measured apart on this machine against a daemon
 * on the mock driver: what one task alone costs a hook, and why. */
#define HOP_REPS 200
#define SLEEPERS RTID__SVC_BATCH_MAX

static void hops(void)
{
	double conn[HOP_REPS], self[HOP_REPS], worker[HOP_REPS], batch[HOP_REPS / 10];
	static char text[64 * (SLEEPERS + 2)];
	struct rtid__svc_ans a[SLEEPERS];
	struct rtid__svc_conn c;
	pid_t daemon, kids[SLEEPERS];
	char path[700];
	int n, pids[SLEEPERS], bad = 0;
	char *d = tmp_dir();

	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	sub("run", NULL, NULL);
	n = snprintf(text, sizeof(text), "title bench hops\nproves nothing\ndriver 580.159.03\n");
	for (int i = 0; i < SLEEPERS; i++) {
		if ((kids[i] = fork()) == 0) {
			close_range(0, ~0U, 0);
			pause();
			_exit(0);
		}
		pids[i] = kids[i];
		n += snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\nanswer %d "
			      "none\n", pids[i], pids[i], pids[i]);
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "expect driver %d tid=none\n", pids[0]);
	put("case", text);
	snprintf(path, sizeof(path), "%s/case", dir);
	setenv("RTID_CASE", path, 1);
	daemon = daemon_start();
	for (int r = 0; r < HOP_REPS; r++) {
		struct rtid__svc_req none = { .op = RTID__OP_RESTORE_TID, .pid = 2147483646 };
		struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = pids[0] };
		char why[160];
		double t0 = rtid__now();

		bad += rtid__svc_open(getenv("RTID_SOCKET"), &c) < 0 ||
		       rtid__svc_untrusted(&c, why, sizeof(why)) != NULL ||
		       rtid__svc_greeted(&c, t0 + 10) < 0;
		conn[r] = rtid__now() - t0;
		t0 = rtid__now();
		bad += rtid__svc_call(&c, &none, t0 + 10, a) < 0 || a[0].kind != RTID__SVC_DENIED;
		self[r] = rtid__now() - t0;
		t0 = rtid__now();
		bad += rtid__svc_call(&c, &q, t0 + 10, a) < 0 || a[0].kind != RTID__SVC_CUERR;
		worker[r] = rtid__now() - t0;
		if (r % 10 == 0) {
			t0 = rtid__now();
			bad += rtid__svc_batch(&c, RTID__OP_RESTORE_TID, pids, SLEEPERS, t0 + 10, a) < 0;
			batch[r / 10] = (rtid__now() - t0) / SLEEPERS;
		}
		rtid__svc_close(&c);
	}
	kill(daemon, SIGTERM);
	waitpid(daemon, NULL, 0);
	for (int i = 0; i < SLEEPERS; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	unsetenv("RTID_SOCKET");
	snprintf(path, sizeof(path), "%s/run", dir);
	umount2(path, MNT_DETACH);
	rm_tree(dir);
	printf("\nThe hops of a question to rtid serve on this machine (medians of %d, from this "
	       "process%s): connecting, proving the daemon and reading its greeting %.0f us (once "
	       "per CRIU run: the plugin's init); a question the daemon answers itself (a pid of "
	       "no process) %.0f us; one through its worker %.0f us; in a batch of %d, %.0f us "
	       "per pid. A hook with one task pays a question through the worker (a batch of "
	       "one), two round trips between processes, beyond %.0f us on its own: the target "
	       "holds per task from some tasks on, where a batch spreads them.\n", HOP_REPS,
	       bad ? ", SOME FAILED" : "", median(conn, HOP_REPS) * 1e6,
	       median(self, HOP_REPS) * 1e6, median(worker, HOP_REPS) * 1e6, SLEEPERS,
	       median(batch, HOP_REPS / 10) * 1e6, TARGET_US);
}

static int run_all(bool check)
{
	static const int sizes[] = { 1, 17, 103 };
	double worst = 0;
	int failed = 0;

	(void)check;
	setenv("RTID_TIME_SCALE", "0", 1); /* no attach delay, no slow action */
	printf("\n## A CUDA plugin's cost per task without CUDA: the real CRIU, a CUDA root and N "
	       "children without CUDA, median of %d dumps and restores\n\n", REPS);
	printf("| N | way | dump ms | restore ms | %s us/task (in plugin; CRIU's log) | %s | %s | "
	       "plugin init us (dump, restore) | CUDA root's hooks us (pause, checkpoint, resume) "
	       "|\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
	       hook_name[H_PAUSE], hook_name[H_CHECKPOINT], hook_name[H_RESUME]);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int w = 0; w < WAYS; w++) {
			struct fig v[REPS];
			int got = 0;

			for (int r = 0; r < REPS; r++)
				got += one((enum way)w, sizes[s], &v[got]) == 0;
			if (!got) {
				printf("| %d | %s | failed |\n", sizes[s], way_name[w]);
				failed = 1;
				continue;
			}
			printf("| %d | %s | %.1f | %.1f |", sizes[s], way_name[w],
			       med(v, got, offsetof(struct fig, dump_s)) * 1e3,
			       med(v, got, offsetof(struct fig, restore_s)) * 1e3);
			for (int k = 0; k < HOOKS; k++) {
				double in = med(v, got, offsetof(struct fig, in_us) + k * sizeof(double));
				double lg = med(v, got, offsetof(struct fig, log_us) + k * sizeof(double));
				char a[32] = "–", b[32] = "–";

				if (w == PLUGIN && sizes[s] > 1 && in > worst)
					worst = in; /* one task alone: the hops below */
				if (in >= 0)
					snprintf(a, sizeof(a), "%.0f", in);
				if (lg >= 0)
					snprintf(b, sizeof(b), "%.0f", lg);
				printf(w == FLOOR ? " – |" : " %s; %s |", a, b);
			}
			if (w == PLUGIN)
				printf(" %.0f, %.0f | %.0f, %.0f, %.0f |\n",
				       med(v, got, offsetof(struct fig, init_us)),
				       med(v, got, offsetof(struct fig, init_us) + sizeof(double)),
				       med(v, got, offsetof(struct fig, cuda_us)),
				       med(v, got, offsetof(struct fig, cuda_us) + sizeof(double)),
				       med(v, got, offsetof(struct fig, cuda_us) + 2 * sizeof(double)));
			else
				printf(" – | – |\n");
			fflush(stdout);
		}
	printf("\nReference, criu PR #3076 (the driver API in a private worker per CRIU run; an "
	       "H200 host, 17 processes): %.0f us per task in a hook, %.1f ms of driver "
	       "initialisation per CRIU run. Target for rtid's plugin: at most %.0f us per task "
	       "without CUDA in every hook, no initialisation; worst here at 17 and 103 tasks %.0f "
	       "us (%s).\n",
	       REF_TASK_US, REF_INIT_MS, TARGET_US, worst, worst <= TARGET_US ? "met" : "MISSED");
	hops();
	return failed ? 2 : 0;
}

int bench_hooks(bool check)
{
	char why[600];
	const char *plugin = getenv("RTID_PLUGIN");

	if (getenv("RTID_UNDER_SANITIZER") || criu_find(&env, why, sizeof(why)) < 0 || !plugin ||
	    !*plugin) {
		printf("\n## A CUDA plugin's cost per task without CUDA: skipped (%s)\n",
		       !plugin || !*plugin ? "rtid's plugin is not built" : why);
		return 77;
	}
	return bench_gpu_ns("A CUDA plugin's cost per task without CUDA", check, run_all);
}
