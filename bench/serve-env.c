/* The stage rtid-bench's serve parts share: a directory with a workload's
 * case file and proc tree (the shim and the daemon judge every number by
 * it), the shim as cuda-checkpoint, the environment a CRIU run would give
 * it, and rtid serve on the mock libcuda. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "casefile.h"
#include "plugin-call.h"

static void put(const struct serve_env *e, const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", e->dir, rel);
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		exit(1);
}

/* The workload's threads as the kernel shows them. */
static void proc_tree(const struct serve_env *e)
{
	struct casefile *c;
	char err[256], rel[64], text[64];

	if (cf_load(e->casefile, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "rtid-bench: %s\n", err);
		exit(1);
	}
	for (size_t i = 0; i < c->ntasks; i++) {
		const struct cf_task *t = &c->tasks[i];

		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", t->pid, t->tid);
		snprintf(text, sizeof(text), "%.*s\n", (int)t->comm_len, t->comm);
		put(e, rel, text);
		snprintf(rel, sizeof(rel), "proc/%d/status", t->tid);
		snprintf(text, sizeof(text), "Name:\tpython3\nTgid:\t%d\nThreads:\t1\n", t->pid);
		put(e, rel, text);
	}
	cf_free(c);
}

void se_setup(struct serve_env *e, const char *case_text)
{
	char proc[128];

	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "/tmp/rtid-bench-serve-XXXXXX");
	if (!mkdtemp(e->dir))
		exit(1);
	snprintf(e->casefile, sizeof(e->casefile), "%s/w.case", e->dir);
	snprintf(e->shim, sizeof(e->shim), "%s/cuda-checkpoint", e->dir);
	snprintf(e->sock, sizeof(e->sock), "%s/rtid.sock", e->dir);
	snprintf(proc, sizeof(proc), "%s/proc", e->dir);
	put(e, "w.case", case_text);
	put(e, "proc/driver/nvidia/version",
	    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Jan  1 2026\n");
	proc_tree(e);
	if (symlink(env_path("RTID_BIN"), e->shim) < 0)
		exit(1);
	setenv("RTID_CASE", e->casefile, 1);
	setenv("RTID_REAL_TOOL", env_path("MOCK_TOOL"), 1);
	setenv("RTID_SOCKET", e->sock, 1);
	setenv("RTID_PROC", proc, 1);
	e->daemon = -1;
}

void se_daemon(struct serve_env *e)
{
	char proc[128];
	const char *argv[] = { env_path("RTID_BIN"), "serve", "--socket", e->sock, "--proc", proc,
			       "--libcuda", env_path("MOCK_LIBCUDA"), "--actions", NULL };

	snprintf(proc, sizeof(proc), "%s/proc", e->dir);
	e->daemon = serve_spawn(argv, -1, 20);
	if (e->daemon < 0) {
		fprintf(stderr, "rtid-bench: rtid serve did not start: %s\n", strerror((int)-e->daemon));
		exit(1);
	}
}

int se_call(const char *prog, char *const *argv, int *tid)
{
	char buf[129];
	int rc = plugin_call(prog, argv, NULL, buf, sizeof(buf));

	if (rc < 0)
		exit(1);
	if (tid)
		*tid = atoi(buf); /* the plugin's parsing, on purpose */
	return rc;
}

void se_teardown(struct serve_env *e)
{
	char cmd[128];

	if (e->daemon > 0) {
		kill(e->daemon, SIGTERM);
		waitpid(e->daemon, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "rtid-bench: cannot remove %s\n", e->dir);
}
