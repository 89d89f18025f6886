/* rtid-bench part 7: the real CRIU dumping and restoring N stand-in CUDA
 * processes (N = 4, 16) whose checkpoint and restore are slow, three ways in
 * one run: rtid's CUDA plugin with rtid serve (side by side, K at its
 * default), CRIU's own plugin with the shim and rtid serve, and CRIU's own
 * plugin with the tool alone. The mocks' delays are scaled by
 * RTID_TIME_SCALE: a checkpoint or restore of SLOW_S, the tool's attach of
 * 2.724 s. Needs root, CRIU 4.2 (tests/criu/criu-run.c finds it) and the
 * plugin built; runs in a child of its own, in a mount namespace with a
 * tmpfs GPU under /proc/driver (rtid's plugin is enabled only where
 * /proc/driver/nvidia/gpus/ exists). */
#include <errno.h>
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
#include "plugin-call.h"

#define SLOW_S 25.0 /* scaled: 0.5 s at the bench's 0.02 */

enum way { PLUGIN, SHIM, TOOL, WAYS };
static const char *const way_name[WAYS] = {
	"rtid's plugin + rtid serve", "CRIU's plugin + shim + rtid serve", "CRIU's plugin + tool",
};

static struct criu_env env;
static char dir[600], img[700], path_env[2048];

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
		exit(1);
}

static void link_to(const char *target, const char *rel)
{
	char path[800];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (symlink(target, path) < 0)
		exit(1);
}

static void stage(enum way w, const struct tree *t)
{
	char text[8192], path[800];
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
	if ((pid = serve_spawn(argv, -1, 60)) <= 0)
		exit(1);
	setenv("RTID_SOCKET", sock, 1);
	return pid;
}

/* How many of the action reached a driver: the mock libcuda's OP-end, the
 * mock tool's end of --action OP. */
static int seen(const char *op)
{
	char path[700], a[64], b[64];
	const char *text, *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/mock.log", dir);
	snprintf(a, sizeof(a), "\"event\":\"%s-end\"", op);
	snprintf(b, sizeof(b), "\"--action\",\"%s\"", op);
	for (p = text = slurp(path); p && (p = strstr(p, a)); p++)
		n++;
	for (p = text; p && (p = strstr(p, "\"event\":\"end\"")); p++) {
		const char *eol = strchr(p, '\n'), *hit = strstr(p, b);

		n += hit && (!eol || hit < eol);
	}
	return n;
}

/* One dump and one restore: their seconds, or -1 for a failed CRIU run, and
 * how many checkpoints and restores reached a driver. */
static void one(enum way w, int n, double *dump_s, double *restore_s, int *ck, int *rs)
{
	char pid[16], libdir[PATH_MAX], states[700];
	char *dump[] = { "dump", "-t", pid, "-D", img, "--shell-job", "-o", "dump.log", "-L", libdir,
			 NULL };
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
		exit(1);
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

static void run(void)
{
	static const int sizes[] = { 4, 16 };
	double slow = cf_scaled(SLOW_S), attach = cf_scaled(2.724);
	char secs[32];

	snprintf(secs, sizeof(secs), "%g", SLOW_S);
	setenv("RTID_MOCK_SLOW_OPS", "checkpoint,restore", 1);
	setenv("RTID_MOCK_SLOW_S", secs, 1);
	printf("\n## The real CRIU, N CUDA processes, checkpoint and restore %.2f s each, "
	       "attach %.3f s: three ways\n\n", slow, attach);
	printf("| N | way | dump s | restore s | one by one, actions alone s | checkpoints, "
	       "restores seen |\n| ---: | --- | ---: | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int w = 0; w < WAYS; w++) {
			double d, r;
			int ck, rs;

			one((enum way)w, sizes[i], &d, &r, &ck, &rs);
			printf("| %d | %s | %.2f | %.2f | %.2f | %d, %d |\n", sizes[i], way_name[w], d,
			       r, sizes[i] * slow, ck, rs);
			fflush(stdout);
		}
	printf("\nrtid's plugin: K = %s side by side (RTID_PLUGIN_PARALLEL; default 8), "
	       "rtid serve --workers 16.\n",
	       getenv("RTID_PLUGIN_PARALLEL") ? getenv("RTID_PLUGIN_PARALLEL") : "8");
}

void bench_plugin(void)
{
	char why[600];
	const char *plugin = getenv("RTID_PLUGIN");
	pid_t child;

	if (criu_find(&env, why, sizeof(why)) < 0 || !plugin || !*plugin) {
		printf("\n## The real CRIU, three ways: skipped (%s)\n",
		       !plugin || !*plugin ? "rtid's plugin is not built" : why);
		return;
	}
	fflush(stdout);
	if ((child = fork()) == 0) {
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("gpu", "/proc/driver", "tmpfs", 0, "mode=0755") < 0 ||
		    mkdir("/proc/driver/nvidia", 0755) < 0 || mkdir("/proc/driver/nvidia/gpus", 0755) < 0) {
			printf("\n## The real CRIU, three ways: skipped (no private /proc/driver: %s)\n",
			       strerror(errno));
			_exit(0);
		}
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		run();
		fflush(stdout);
		_exit(0);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
}
