/* The real side of the simulator's check: the restore-tid phase of a
 * workload run by the actual resolver (librtid) against fakeproc and the
 * mocks, with the driver attach scaled down, and the costs this machine paid
 * in it (check.c holds the model's side and the verdict). */
#include "check-run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check-serve.h"
#include "rtid.h"

extern char **environ;

#define VERSION "580.159.03"

/* A helper next to this program in the build tree, unless the environment
 * names it (the test suite does). */
const char *check_helper(const char *env, const char *rel, char *buf, size_t len)
{
	const char *v = getenv(env);
	char self[PATH_MAX - 64];
	ssize_t n;

	if (v && *v)
		return v;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return rel;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(buf, len, "%s/../%s", self, rel);
	return buf;
}

/* The workload as a case file: same processes, same order. */
int check_write_case(const char *path, const struct sim_params *p, const struct sim_workload *w)
{
	FILE *f = fopen(path, "w");
	int pid = 10000;

	if (!f)
		return -1;
	fprintf(f, "title sim check\nproves the model\ndriver " VERSION "\n"
		   "attach-delay %.6f\nnone-delay %.6f\n", p->attach_s, p->nocuda_query_s);
	for (size_t i = 0; i < w->n;) {
		size_t j = i;

		while (j < w->n && w->procs[j].gpu == w->procs[i].gpu)
			j++;
		fprintf(f, "workload %zu %d%s\n", j - i, pid, w->procs[i].gpu ? "" : " cpu");
		pid += 10 * (int)(j - i);
		i = j;
	}
	fprintf(f, "expect all * error=-\n");
	return fclose(f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct rtid_config config_for(const struct sim_strategy *s, const char *mnt,
				     const char *sock)
{
	struct rtid_config c = { RTID_CONFIG_INIT, .proc_root = mnt, .timeout_s = 120, .jobs = 1 };

	/* The model's serial strategies are serial, as the plugin is. A toggle
	 * changes no restore-tid lookup: its phase runs as the plain one. */
	c.mode = s->tid == SIM_TID_SCAN ? RTID_MODE_SCAN
	       : s->tid == SIM_TID_CANARY ? RTID_MODE_CANARY : RTID_MODE_DRIVER;
	c.backend = s->backend == SIM_BACKEND_API ? RTID_BACKEND_API
		  : s->backend == SIM_BACKEND_SERVE ? RTID_BACKEND_SERVICE : RTID_BACKEND_TOOL;
	c.service_socket = sock;
	c.jobs = s->k > 64 ? 64 : s->k;
	return c;
}

/* The fastest of a few bare starts of the mock tool (-h answers at once, with
 * no delay): what a process start costs here, with nothing driver-like in it.
 * Returns seconds, or 0 when the tool cannot be started. */
double check_bare_start(const char *tool)
{
	enum { REPS = 7 };
	char *argv[] = { (char *)tool, "-h", NULL };
	posix_spawn_file_actions_t fa;
	double best = 0;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return 0;
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < REPS; i++) {
		double t = now();
		pid_t pid;
		int st;

		if (posix_spawn(&pid, tool, &fa, NULL, argv, environ) != 0 ||
		    waitpid(pid, &st, 0) != pid)
			break;
		t = now() - t;
		best = i == 0 || t < best ? t : best;
	}
	posix_spawn_file_actions_destroy(&fa);
	return best;
}

/* Read every thread's name of one process once, untimed: a fresh mount's
 * first lookups are several times slower than the rest, which in a batch of a
 * few tens of milliseconds is more than the model's 10 %. */
void check_warm(const char *mnt, int pid)
{
	char path[PATH_MAX], comm[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task", mnt, pid);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		int fd;

		snprintf(path, sizeof(path), "%s/%d/task/%.16s/comm", mnt, pid, de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			if (read(fd, comm, sizeof(comm)) < 0)
				comm[0] = '\0';
			close(fd);
		}
	}
	closedir(d);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t k)
{
	qsort(v, k, sizeof(*v), by_value);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}


/* The costs as this very batch paid them: the median scan of the pids the
 * scan answered, the median call of the pids the worker answered, and the
 * median process start of the pids the tool answered (their time less their
 * scan and the mock's scaled delay). Timed apart from the batch, a burst of
 * load on the machine made a scan (a few FUSE round trips) look forty times
 * dearer than the batch's own scans were, and the model missed by a third;
 * under a busy core the batch's spawns cost four times the spawn timed apart.
 * A cost the batch did not pay keeps its value from before (the parameter for
 * a scan, a bare start for a spawn, the scaled parameter for a call).
 *
 * A process start taken from the spawning pids would hide a second delay per
 * pid, and a call taken from the answered pids an attach per call, so each
 * must stay a small part of the delay it could hide: more than half
 * of the pids' median delay (or, where that delay is itself as small as a few
 * process starts and a second one cannot be told from a slow start, more than
 * four bare starts) is not a process start, and the batch is then reported as
 * not the model's (-1). */
static int batch_costs(const struct rtid_result *r, const struct sim_workload *w,
		       const struct sim_params *p, double k, struct costs *c)
{
	double *v = calloc(2 * w->n + 1, sizeof(*v)), *d = v ? v + w->n : NULL;
	size_t m = 0;
	int ok = 0;

	for (size_t i = 0; v && i < w->n; i++)
		if (r[i].source == RTID_SRC_SCAN)
			v[m++] = r[i].ms / 1000.0;
	if ((c->scanned = m > 0))
		c->scan_s = median(v, m);
	m = 0;
	for (size_t i = 0; v && i < w->n; i++)
		if (r[i].source == RTID_SRC_API || r[i].source == RTID_SRC_SERVICE)
			v[m++] = r[i].ms / 1000.0;
	if (m) { /* the mock's calls have no delay of their own: all of it is ours */
		double attach = p->attach_s * k / 2;

		c->call_s = median(v, m);
		ok = c->call_s <= (attach > 4 * c->spawn_s ? attach : 4 * c->spawn_s) ? 0 : -1;
	}
	m = 0;
	for (size_t i = 0; v && i < w->n; i++)
		if (r[i].source == RTID_SRC_TOOL) {
			d[m] = (w->procs[i].gpu ? p->attach_s : p->nocuda_query_s) * k;
			v[m] = r[i].ms / 1000.0 - (r[i].scan_candidates >= 0 ? c->scan_s : 0) - d[m];
			m++;
		}
	if (m) {
		double apart = c->spawn_s, bound = median(d, m) / 2;

		c->spawn_s = median(v, m);
		if (c->spawn_s > (bound > 4 * apart ? bound : 4 * apart))
			ok = -1;
	}
	free(v);
	return ok;
}

/* Resolve every pid; returns wall seconds, -1 if any answer is wrong, -2 if
 * the pids' times are not the model's calls (batch_costs; not asked of a
 * baseline, whose pids have no delay to hide one in). *c becomes this
 * batch's own. */
static double measure(const struct sim_params *p, const struct sim_strategy *s, const char *mnt,
		      const char *sock, const char *cf, const struct sim_workload *w, double k,
		      struct costs *c, bool baseline)
{
	struct rtid_attestation *att = NULL;
	struct rtid_config cfg = config_for(s, mnt, sock);
	struct rtid_result *r = calloc(w->n, sizeof(*r));
	int *pids = calloc(w->n, sizeof(*pids)), bad = 0;
	struct rtid_ctx *ctx = NULL;
	char buf[PATH_MAX];
	double t;

	cfg.tool = check_helper("MOCK_TOOL", "mocks/cuda-checkpoint", buf, sizeof(buf));
	cfg.tool = strdup(cfg.tool);
	cfg.libcuda = strdup(check_helper("MOCK_LIBCUDA", "mocks/libmockcuda.so", buf, sizeof(buf)));
	setenv("RTID_WORKER", check_helper("RTID_WORKER", "src/rtid-cuda-worker", buf, sizeof(buf)), 1);
	setenv("RTID_CASE", cf, 1);
	rtid_attest_new(&att);
	rtid_attest_add(att, VERSION, 10, 0, 0, false);
	cfg.attestation = att;
	for (size_t i = 0, pid = 10000; i < w->n; i++, pid += 10)
		pids[i] = (int)pid;
	if (!r || !pids || rtid_ctx_new(&cfg, &ctx) < 0)
		return -1;
	t = now();
	rtid_resolve_many(ctx, pids, w->n, r);
	t = now() - t;
	if (batch_costs(r, w, p, k, c) < 0 && !baseline)
		bad = -1;
	for (size_t i = 0; bad >= 0 && i < w->n; i++)
		bad += r[i].error || r[i].tid != (w->procs[i].gpu ? pids[i] + 2 : 0);
	rtid_ctx_free(ctx);
	rtid_attest_free(att);
	free((char *)cfg.tool);
	free((char *)cfg.libcuda);
	free(r);
	free(pids);
	return bad < 0 ? -2 : bad ? -1 : t;
}

/* The batch at scale k (text, as the mocks read it): the daemon started
 * first for serve, its start timed with the batch. measure's value; *c
 * becomes the batch's own costs. */
double check_run_batch(const struct sim_params *p, const struct sim_strategy *s, const char *mnt,
			const char *sock, const char *cf, const struct sim_workload *w,
			const char *text, double k, struct costs *c, bool baseline)
{
	char buf[PATH_MAX];
	double start_s = 0, real = -3;
	pid_t sv = 0;

	setenv("RTID_TIME_SCALE", text, 1);
	/* serve: the daemon attaches before the batch, as it does before CRIU runs;
	 * the check times its start too, so that one attach in all is what the
	 * model is held to (the batch alone is a millisecond of calls). */
	if (s->backend == SIM_BACKEND_SERVE) {
		start_s = now();
		sv = check_serve_start(check_helper("RTID_BIN", "src/rtid", buf, sizeof(buf)), sock, mnt,
				       check_helper("MOCK_LIBCUDA", "mocks/libmockcuda.so", buf + PATH_MAX / 2,
					      PATH_MAX / 2));
		start_s = now() - start_s;
	}
	if (sv >= 0 && (real = measure(p, s, mnt, sock, cf, w, k, c, baseline)) >= 0)
		real += start_s;
	check_serve_stop(sv);
	return real;
}

