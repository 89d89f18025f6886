/* rtid-bench part 1: 103 GPU pids resolved by every strategy, in one run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "casefile.h"
#include "basic/parse.h"
#include "core/core.h"

#define PIDS 103
#define VERSION "580.159.03"

static char root[64] = "/tmp/rtid-bench-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "rtid-bench: cannot write %s\n", path);
		exit(1);
	}
}

/* A proc-like tree and a case file for the mocks, from one workload line. */
static struct casefile *lay_out(void)
{
	struct casefile *c = NULL;
	char err[256], rel[64], text[64], path[128];

	if (!mkdtemp(root))
		exit(1);
	put("w.case", "title bench\nproves nothing\nattach-delay 2.724\n"
		      "workload 103 10000\nexpect all * error=-\n");
	snprintf(path, sizeof(path), "%s/w.case", root);
	if (cf_load(path, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "rtid-bench: %s\n", err);
		exit(1);
	}
	for (size_t i = 0; i < c->ntasks; i++) {
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", c->tasks[i].pid, c->tasks[i].tid);
		snprintf(text, sizeof(text), "%s\n", c->tasks[i].comm);
		put(rel, text);
	}
	/* The scan proves its walk by Threads: in status (src/proc/walk.c). */
	for (size_t i = 0; i < c->npids; i++) {
		int n = 0;

		for (size_t j = 0; j < c->ntasks; j++)
			n += c->tasks[j].pid == c->pids[i];
		snprintf(rel, sizeof(rel), "proc/%d/status", c->pids[i]);
		snprintf(text, sizeof(text), "Tgid:\t%d\nThreads:\t%d\n", c->pids[i], n);
		put(rel, text);
	}
	put("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " VERSION
					  "  Thu Jan  1 2026\n");
	setenv("RTID_CASE", path, 1);
	return c;
}

struct strategy {
	const char *name;
	enum rtid_mode mode;
	enum rtid_backend backend;
	unsigned jobs;
};

/* Wall seconds for one strategy; *right counts pids answered correctly. */
static double run(const struct strategy *s, const struct casefile *c,
		  const struct rtid_attestation *att, int *right)
{
	char proc[96];
	struct rtid_config cfg = { RTID_CONFIG_INIT, .mode = s->mode, .backend = s->backend, .jobs = s->jobs,
				   .proc_root = proc, .tool = env_path("MOCK_TOOL"),
				   .libcuda = env_path("MOCK_LIBCUDA"), .attestation = att,
				   .timeout_s = 60 };
	struct rtid_result r[PIDS];
	struct rtid_ctx *ctx = NULL;
	double t0;

	snprintf(proc, sizeof(proc), "%s/proc", root);
	if (rtid_ctx_new(&cfg, &ctx) < 0)
		exit(1);
	t0 = rtid__now();
	rtid_resolve_many(ctx, c->pids, PIDS, r);
	t0 = rtid__now() - t0;
	rtid_ctx_free(ctx);
	*right = 0;
	for (int i = 0; i < PIDS; i++)
		*right += r[i].error == RTID_OK && r[i].tid == c->pids[i] + 2;
	return t0;
}

void bench_batches(void)
{
	static const struct strategy s[] = {
		{ "serial tool (--jobs 1)", RTID_MODE_DRIVER, RTID_BACKEND_TOOL, 1 },
		{ "tool --jobs 8", RTID_MODE_DRIVER, RTID_BACKEND_TOOL, 8 },
		{ "api backend (one worker)", RTID_MODE_DRIVER, RTID_BACKEND_API, 8 },
		{ "attested scan", RTID_MODE_SCAN, RTID_BACKEND_TOOL, 8 },
		{ "canary (tool)", RTID_MODE_CANARY, RTID_BACKEND_TOOL, 8 },
	};
	struct rtid_attestation *att = NULL;
	struct casefile *c = lay_out();
	double serial = 0;

	rtid_attest_new(&att);
	rtid_attest_add(att, VERSION, 10, 0, 0, false);
	printf("## %d GPU pids, driver attach 2.724 s x RTID_TIME_SCALE=%s per spawn\n\n", PIDS,
	       getenv("RTID_TIME_SCALE"));
	printf("| strategy | wall s | vs serial | right answers |\n| --- | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		int right;
		double t = run(&s[i], c, att, &right);

		if (i == 0)
			serial = t;
		printf("| %s | %.3f | %.1fx faster | %d/%d |\n", s[i].name, t, serial / t, right,
		       PIDS);
		fflush(stdout);
	}
	rtid_attest_free(att);
	cf_free(c);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "rtid-bench: could not remove %s\n", root);
	}
}
