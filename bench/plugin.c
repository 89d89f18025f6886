/* rtid-bench part 7: the real CRIU dumping and restoring N stand-in CUDA
 * processes (N = 4, 16) whose lock, checkpoint and restore are slow, three
 * ways in one run: rtid's CUDA plugin with rtid serve (side by side, K at its
 * default), CRIU's own plugin with the shim and rtid serve, and CRIU's own
 * plugin with the tool alone. The mocks' delays are scaled by
 * RTID_TIME_SCALE: a lock, checkpoint or restore of SLOW_S, the tool's attach
 * of 2.724 s (the slow lock holds the model's locks one by one to the
 * plugin's). Needs root, CRIU 4.2 (tests/criu/criu-run.c finds it) and the
 * plugin built; runs in a child of its own, in a mount namespace with a
 * tmpfs GPU under /proc/driver (rtid's plugin is enabled only where
 * /proc/driver/nvidia/gpus/ exists).
 *
 * Beside each measured time, the simulator's model of it, and each row is
 * measured first with no driver delay at all: CRIU's own work, process starts
 * and daemon calls are what this machine makes them, and the model adds what
 * the delays add. RTID_BENCH_CHECK=1 (the CRIU suite's criu-plugin-model)
 * fails when the model misses a row by more than 25 %.
 *
 * The child's exit status is the part's: 0, 1 when the model misses a row,
 * 2 when a run failed or could not be set up (never taken for a miss). */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "bench.h"
#include "casefile.h"
#include "criu-run.h"
#include "engine.h"
#include "plugin-call.h"
#include "plugin-model.h"
#include "plugin/plugin.h"

/* "plugin" alone is the plugin at its default: the simulator's is the plugin's. */
_Static_assert(SIM_PLUGIN_K == PLUG_PARALLEL_DEFAULT, "sim/engine.h's K is not the plugin's");

#define SLOW_S 25.0 /* scaled: 0.5 s at the bench's 0.02 */

enum way { PLUGIN, SHIM, TOOL, WAYS };
static const char *const way_name[WAYS] = {
	"rtid's plugin + rtid serve", "CRIU's plugin + shim + rtid serve", "CRIU's plugin + tool",
};

static struct criu_env env;
static char dir[600], img[700], path_env[2048];

/* A set-up step of a run failed: a failed run (2), not a miss of the model. */
static void setup_failed(const char *what, const char *path)
{
	fprintf(stderr, "rtid-bench: %s %s: %s\n", what, path, strerror(errno));
	exit(2);
}

static void put(const char *rel, const char *text)
{
	char path[800];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0)
		setup_failed("cannot write", path);
}

static void link_to(const char *target, const char *rel)
{
	char path[800];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (symlink(target, path) < 0)
		setup_failed("cannot link", path);
}

static void stage(enum way w, const struct tree *t)
{
	static char text[160 * TREE_MAX];
	char path[800];
	int n = snprintf(text, sizeof(text), "title bench plugin\nproves nothing\ndriver "
			 "580.159.03\nattach-delay 2.724\n");

	for (int i = 0; i < t->n; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "task %d %d python3\nanswer %d tid "
			      "%d\ntask %d %d cuda00001400006\nexpect driver %d tid=%d\n", t->p[i].pid,
			      t->p[i].pid, t->p[i].pid, t->p[i].restore_tid, t->p[i].pid,
			      t->p[i].restore_tid, t->p[i].pid, t->p[i].restore_tid);
	put("case", text);
	snprintf(path, sizeof(path), "%s/case", dir);
	setenv("RTID_CASE", path, 1);
	if (w == SHIM) /* the shim first, the real tool behind it */
		snprintf(path_env, sizeof(path_env), "%s/shim:%s/real:/usr/sbin:/usr/bin:/bin", dir,
			 dir);
	else
		snprintf(path_env, sizeof(path_env), "%s/real:/usr/sbin:/usr/bin:/bin", dir);
}

static pid_t daemon_start(void)
{
	char sock[700];
	const char *argv[] = { env_path("RTID_BIN"), "serve", "--socket", sock, "--actions",
			       "--quiet", "--libcuda", env_path("MOCK_LIBCUDA"), NULL };
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rtid.sock", dir);
	if ((pid = serve_spawn(argv, -1, 60)) <= 0) {
		fprintf(stderr, "rtid-bench: rtid serve did not start on %s\n", sock);
		exit(2);
	}
	setenv("RTID_SOCKET", sock, 1);
	return pid;
}

/* How many of the action reached a driver: the mock libcuda's OP-end, the
 * mock tool's end of --action OP. */
static int seen(const char *op)
{
	char path[700], a[64], b[64], line[4096];
	FILE *f;
	int n = 0;

	/* Line by line: at 103 processes the log is past any fixed buffer. */
	snprintf(path, sizeof(path), "%s/mock.log", dir);
	snprintf(a, sizeof(a), "\"event\":\"%s-end\"", op);
	snprintf(b, sizeof(b), "\"--action\",\"%s\"", op);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) != NULL || (strstr(line, "\"event\":\"end\"") && strstr(line, b));
	fclose(f);
	return n;
}

/* One dump and one restore: their seconds, or -1 for a failed CRIU run, and
 * how many checkpoints and restores reached a driver. */
static void one(enum way w, int n, double *dump_s, double *restore_s, int *ck, int *rs)
{
	char pid[16], libdir[PATH_MAX], states[700];
	/* CRIU's --timeout bounds the seizing and PAUSE_DEVICES: the tool's 16
	 * slow locks one by one, each with its attaches, pass its default 10 s. */
	char *dump[] = { "dump", "-t", pid, "-D", img, "--shell-job", "-o", "dump.log", "-L", libdir,
			 "--timeout", "60", NULL };
	char *restore[] = { "restore", "-D", img, "--shell-job", "-o", "restore.log", "-d", "-L",
			    libdir, NULL };
	pid_t daemon = -1;
	struct tree t;
	double t0;
	char *d = tmp_dir();

	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	snprintf(img, sizeof(img), "%s/img", dir);
	put("img/.keep", "");
	put("real/.keep", "");
	put("shim/.keep", "");
	put("ours/.keep", "");
	put("states/.keep", "");
	link_to(env_path("MOCK_TOOL"), "real/cuda-checkpoint");
	link_to(env_path("RTID_BIN"), "shim/cuda-checkpoint");
	link_to(env_path("RTID_PLUGIN"), "ours/cuda_plugin.so");
	if (w == PLUGIN)
		snprintf(libdir, sizeof(libdir), "%s/ours", dir);
	else
		snprintf(libdir, sizeof(libdir), "%s", env.libdir);
	snprintf(states, sizeof(states), "%s/mock.log", dir);
	setenv("RTID_MOCK_LOG", states, 1);
	snprintf(states, sizeof(states), "%s/states", dir);
	setenv("RTID_MOCK_STATE", states, 1); /* the daemon's workers share the driver's state */
	*dump_s = *restore_s = -1;
	if (task_start_n(false, n - 1, &t) < 0) {
		fprintf(stderr, "rtid-bench: the stand-in tree did not start\n");
		exit(2);
	}
	stage(w, &t);
	if (w != TOOL)
		daemon = daemon_start();
	snprintf(pid, sizeof(pid), "%d", t.p[0].pid);
	t0 = rtid__now();
	if (criu_run(&env, dir, path_env, dump) == 0) {
		*dump_s = rtid__now() - t0;
		tree_reap(&t);
		t0 = rtid__now();
		if (criu_run(&env, dir, path_env, restore) == 0)
			*restore_s = rtid__now() - t0;
	}
	tree_kill(&t);
	*ck = seen("checkpoint");
	*rs = seen("restore");
	if (daemon > 0) {
		kill(daemon, SIGTERM);
		waitpid(daemon, NULL, 0);
	}
	unsetenv("RTID_SOCKET");
	if (*dump_s < 0 || *restore_s < 0)
		fprintf(stderr, "rtid-bench: a CRIU run failed (%s, %d processes): see %s\n",
			way_name[w], n, dir);
	else if (!getenv("RTID_BENCH_KEEP"))
		rm_tree(dir);
	else
		fprintf(stderr, "rtid-bench: kept %s\n", dir);
}

/* The way as the simulator names it (bench/plugin-model.c): rtid's plugin
 * at the K it runs with, read by the plugin's own rule (plug_run_parallel:
 * RTID_PLUGIN_PARALLEL from 1 to 64, else its default), "plugin" alone at
 * the simulator's default. */
static const char *model_name(enum way w, char *buf, size_t len)
{
	static const char *const names[WAYS] = { "plugin", "serve", "upstream" };
	unsigned k = plug_run_parallel();

	if (w != PLUGIN || k == SIM_PLUGIN_K)
		return names[w];
	snprintf(buf, len, "plugin+parallel:%u", k);
	return buf;
}

#define TOLERANCE 0.25 /* the model against the measured, as sim/README.md says */
#define ATTEMPTS 3     /* a row outside it is measured again: load only adds */

/* One row: the way with no driver delay (the baseline: CRIU's own work, the
 * process starts and daemon calls), then with the delays; the model's
 * prediction is the baseline and what the simulator adds for the delays.
 * Returns 0, 1 when the model misses by more than TOLERANCE, 2 when a run
 * failed or an action did not reach the driver exactly once per process. */
static int row(enum way w, int n, double slow, double attach, bool check)
{
	const char *scale = getenv("RTID_TIME_SCALE");
	double d0, r0, d, r, md, mr;
	char keep[32], name[48];
	int ck, rs, verdict = 2;

	snprintf(keep, sizeof(keep), "%s", scale ? scale : "1");
	for (int a = 1; a <= ATTEMPTS; a++) {
		setenv("RTID_TIME_SCALE", "0", 1);
		one(w, n, &d0, &r0, &ck, &rs);
		setenv("RTID_TIME_SCALE", keep, 1);
		if (d0 < 0 || r0 < 0 || ck != n || rs != n)
			break;
		one(w, n, &d, &r, &ck, &rs);
		if (d < 0 || r < 0 || ck != n || rs != n ||
		    plugin_model(model_name(w, name, sizeof(name)), n, attach, slow, &md, &mr) < 0)
			break;
		md += d0;
		mr += r0;
		verdict = fabs(d - md) > TOLERANCE * md || fabs(r - mr) > TOLERANCE * mr;
		printf("| %d | %s | %.2f | %.2f (%+.0f %%) | %.2f | %.2f (%+.0f %%) | %.2f, %.2f | "
		       "%.2f, %.2f | %d, %d |\n", n, way_name[w], d, md, (d - md) / md * 100, r, mr,
		       (r - mr) / mr * 100, d0, r0, 2 * n * slow, n * slow, ck, rs);
		fflush(stdout);
		if (!verdict || !check || a == ATTEMPTS)
			return verdict;
		fprintf(stderr, "rtid-bench: %s, %d processes: the model misses by more than %.0f "
			"%%; measured again (%d of %d)\n", way_name[w], n, TOLERANCE * 100, a + 1,
			ATTEMPTS);
	}
	printf("| %d | %s | failed: a CRIU run, or an action not once per process (%d, %d) |\n",
	       n, way_name[w], ck, rs);
	return 2;
}

static int run(bool check)
{
	/* 103: the seed's SGLang configuration (its dump ran past a 10-minute
	 * timeout); in make bench only, not in the check (minutes of runs). */
	static const int sizes[] = { 4, 16, 103 };
	double slow = cf_scaled(SLOW_S), attach = cf_scaled(2.724);
	char secs[32];
	int worst = 0;

	snprintf(secs, sizeof(secs), "%g", SLOW_S);
	setenv("RTID_MOCK_SLOW_OPS", "lock,checkpoint,restore", 1);
	setenv("RTID_MOCK_SLOW_S", secs, 1);
	printf("\n## The real CRIU, N CUDA processes, lock, checkpoint and restore %.2f s each, "
	       "attach %.3f s: three ways, and the simulator's model\n\n", slow, attach);
	printf("| N | way | dump s | model s | restore s | model s | no delay: dump, restore s | "
	       "one by one, actions alone: dump, restore s | checkpoints, restores seen |\n"
	       "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) - (check ? 1 : 0); i++)
		for (int w = 0; w < WAYS; w++) {
			int v = row((enum way)w, sizes[i], slow, attach, check);

			worst = v > worst ? v : worst;
		}
	printf("\nrtid's plugin: K = %u side by side (RTID_PLUGIN_PARALLEL; default %d), its "
	       "locks one by one; rtid serve --workers 16. Model: `rtid-sim`'s engine (strategies "
	       "plugin, serve, upstream) with the mocks' attach and actions, added to the run with "
	       "no driver delay; %s %.0f %%.\n",
	       plug_run_parallel(), PLUG_PARALLEL_DEFAULT,
	       worst == 0 ? "every row within" : worst == 1 ? "a row misses by more than"
							: "a row failed; the others within",
	       TOLERANCE * 100);
	return worst;
}

int bench_plugin(bool check)
{
	const char *req = getenv("RTID_REQUIRE_CRIU");
	char why[600];
	const char *plugin = getenv("RTID_PLUGIN");
	/* A sanitized plugin needs its runtime loaded first, which CRIU, built
	 * plain, does not do (as the CRIU suite's plugin tests): the plain build
	 * runs this part. */
	if (getenv("RTID_UNDER_SANITIZER")) {
		printf("\n## The real CRIU, three ways: skipped (a sanitized plugin cannot load "
		       "into a plain CRIU)\n");
		return 77;
	}
	if (criu_find(&env, why, sizeof(why)) < 0 || !plugin || !*plugin) {
		printf("\n## The real CRIU, three ways: skipped (%s)\n",
		       !plugin || !*plugin ? "rtid's plugin is not built" : why);
		return check && req && !strcmp(req, "1") ? 1 : 77;
	}
	return bench_gpu_ns("The real CRIU, three ways", check, run);
}

int bench_gpu_ns(const char *title, bool check, int (*body)(bool check))
{
	const char *req = getenv("RTID_REQUIRE_CRIU");
	pid_t child;
	int st;

	fflush(stdout);
	if ((child = fork()) == 0) {
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("gpu", "/proc/driver", "tmpfs", 0, "mode=0755") < 0 ||
		    mkdir("/proc/driver/nvidia", 0755) < 0 || mkdir("/proc/driver/nvidia/gpus", 0755) < 0) {
			bool must = check && req && !strcmp(req, "1");

			printf("\n## %s: %s (no private /proc/driver: %s)\n", title,
			       must ? "failed, RTID_REQUIRE_CRIU=1" : "skipped", strerror(errno));
			fflush(stdout);
			_exit(must ? 1 : 77);
		}
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		st = body(check);
		fflush(stdout);
		_exit(st);
	}
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st);
}
