/* rtid-bench: the figures behind rtid's performance claims, measured side by
 * side in one run.
 *
 *  1. 103 GPU pids against the mocks, the driver attach (2.724 s) scaled by
 *     RTID_TIME_SCALE (default 0.02 here): serial tool, --jobs 8, the api
 *     backend, attested scan, canary. Wall time and ratio to serial.
 *  2. One scan of this process with 1000 real threads, against the floor: a
 *     bare opendir/readdir/openat/read/close loop over the same files.
 *  3. One tool query through rtid against a bare posix_spawn + waitpid of the
 *     same do-nothing program: rtid's overhead per spawn.
 *  4. Loading attestations of 1000 to 16000 versions: time per version.
 *  5. rtid serve behind the shim, called as CRIU calls the tool (serve.c).
 *  6. One node, R = 1, 2, 4, 8 CRIU runs dumping side by side: the shim and
 *     rtid serve, the tool alone, the ideal (node.c).
 *  7. The real CRIU on 4 and 16 processes with slow actions: rtid's plugin,
 *     CRIU's plugin through the shim and rtid serve, the tool (plugin.c).
 *
 * Environment: MOCK_TOOL, MOCK_LIBCUDA, RTID_WORKER, FAKE_TOOL (meson sets them). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "basic/parse.h"
#include "core/core.h"

extern char **environ;

/* --- 2. the scan of 1000 real threads --- */

static int stop_pipe[2];

static void *parked(void *arg)
{
	char c;

	(void)arg;
	/* Park on a pipe until main closes it: no sleeping. */
	while (read(stop_pipe[0], &c, 1) > 0)
		;
	return NULL;
}

/* The floor: what any scan must do, with nothing else. */
static int floor_scan(int pid)
{
	char path[300], buf[64];
	struct dirent *de;
	int n = 0, dfd;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/comm", de->d_name);
		fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n += read(fd, buf, sizeof(buf)) > 0;
			close(fd);
		}
	}
	closedir(d);
	return n;
}

static void bench_scan_1000(void)
{
	enum { THREADS = 999, REPS = 30 };
	static pthread_t th[THREADS];
	double t_scan[REPS], t_floor[REPS];
	struct rtid__matcher m;
	struct rtid__scan s;

	if (pipe(stop_pipe) < 0)
		exit(1);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, parked, NULL) != 0) {
			fprintf(stderr, "rtid-bench: cannot start thread %d\n", i);
			exit(1);
		}
	pthread_setname_np(th[THREADS / 2], "cuda00001400006");
	rtid__matcher_init(&m, NULL);
	for (int r = 0; r < REPS; r++) {
		double t0 = rtid__now();

		rtid__scan("/proc", getpid(), &m, &s);
		t_scan[r] = rtid__now() - t0;
		t0 = rtid__now();
		floor_scan(getpid());
		t_floor[r] = rtid__now() - t0;
	}
	close(stop_pipe[1]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	close(stop_pipe[0]);
	rtid__matcher_fini(&m);
	printf("\n## Scan of one process with 1000 real threads (median of %d)\n\n", REPS);
	printf("| what | ms | ratio to floor |\n| --- | ---: | ---: |\n");
	printf("| rtid scan (found tid: %s) | %.2f | %.2f |\n",
	       s.status == RTID__SCAN_FOUND ? "yes" : "NO", median(t_scan, REPS) * 1e3,
	       median(t_scan, REPS) / median(t_floor, REPS));
	printf("| floor: opendir/readdir/openat/read/close | %.2f | 1.00 |\n",
	       median(t_floor, REPS) * 1e3);
}

/* --- 3. the cost of one tool spawn --- */

static void bench_spawn(void)
{
	enum { REPS = 200 };
	const char *tool = env_path("FAKE_TOOL");
	struct rtid_config cfg = { RTID_CONFIG_INIT, .tool = tool, .timeout_s = 10 };
	double t_rtid[REPS], t_bare[REPS];
	struct rtid_ctx *ctx = NULL;
	struct rtid_result res;

	posix_spawn_file_actions_t quiet;
	char self[16];

	/* The bare spawn's output goes nowhere, as rtid's goes into its pipe. */
	posix_spawn_file_actions_init(&quiet);
	posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
	setenv("FAKE_STDOUT", "4244\n", 1);
	rtid_ctx_new(&cfg, &ctx);
	/* This process: a pid must be a process in /proc to be asked about. */
	snprintf(self, sizeof(self), "%d", (int)getpid());
	for (int r = 0; r < REPS; r++) {
		char *argv[] = { (char *)tool, "--get-restore-tid", "--pid", self, NULL };
		double t0 = rtid__now();
		pid_t pid;

		rtid_resolve(ctx, (int)getpid(), &res);
		t_rtid[r] = rtid__now() - t0;
		t0 = rtid__now();
		posix_spawn(&pid, tool, &quiet, NULL, argv, environ);
		waitpid(pid, NULL, 0);
		t_bare[r] = rtid__now() - t0;
	}
	rtid_ctx_free(ctx);
	posix_spawn_file_actions_destroy(&quiet);
	unsetenv("FAKE_STDOUT");
	printf("\n## One tool query: rtid against a bare spawn of the same program (median of %d)\n\n",
	       REPS);
	printf("| what | ms |\n| --- | ---: |\n");
	printf("| rtid driver query (tid %d) | %.3f |\n", res.tid, median(t_rtid, REPS) * 1e3);
	printf("| bare posix_spawn + waitpid | %.3f |\n", median(t_bare, REPS) * 1e3);
	printf("| rtid's overhead beyond the spawn | %.3f |\n",
	       (median(t_rtid, REPS) - median(t_bare, REPS)) * 1e3);
}

/* RTID_BENCH_ONLY=serve, =node, =plugin, =hooks: part 5, 6, 7 or 8 alone (a quick look while working
 * on it). */
int main(void)
{
	const char *only = getenv("RTID_BENCH_ONLY");

	if (!getenv("RTID_TIME_SCALE"))
		setenv("RTID_TIME_SCALE", "0.02", 1);
	if (only && !strcmp(only, "serve")) {
		bench_serve();
		return 0;
	}
	if (only && !strcmp(only, "node")) {
		bench_node();
		return 0;
	}
	if (only && !strcmp(only, "hooks"))
		return bench_hooks(false);
	/* RTID_BENCH_CHECK=1: part 7 as a test of the simulator (its status). */
	if (only && !strcmp(only, "plugin")) {
		const char *check = getenv("RTID_BENCH_CHECK");

		return bench_plugin(check && !strcmp(check, "1"));
	}
	bench_batches();
	bench_scan_1000();
	bench_spawn();
	bench_attest();
	bench_serve();
	bench_node();
	bench_plugin(false);
	bench_hooks(false);
	return 0;
}
