/* rtid-bench part 4: rtid serve behind the shim, as an unmodified CRIU meets
 * it. A CRIU-like client spawns a process per call (fork + exec, stdout and
 * stderr in one pipe, a 128-byte buffer, the rest drained, waitpid), one call
 * after another, for 103 GPU pids: the shim answered by the daemon against
 * the mock tool, which pays the scaled driver attach on every spawn, and
 * against the floor, a spawn of the shim that does nothing at all. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "casefile.h"
#include "basic/parse.h"
#include "core/core.h"
#include "plugin-call.h"

#define PIDS 103
#define FIRST 20000
#define REAL_ATTACH 2.724 /* seconds: one cuda-checkpoint spawn in the write-up */

static struct serve_env env;

struct seq {
	const char *what;
	int calls; /* per process */
	const char *ops[8][6];
};

/* The calls the CUDA plugin makes per process (criu plugins/cuda). */
static const struct seq dump = { "dump", 5, {
	{ "--get-restore-tid", "--pid", "P" }, { "--get-state", "--pid", "T" },
	{ "--action", "lock", "--pid", "P", "--timeout", "10000" },
	{ "--get-restore-tid", "--pid", "P" }, { "--action", "checkpoint", "--pid", "P" } } };
static const struct seq restore = { "restore", 3, {
	{ "--get-restore-tid", "--pid", "P" }, { "--action", "restore", "--pid", "P" },
	{ "--action", "unlock", "--pid", "P" } } };
static const struct seq query = { "get-restore-tid", 1, { { "--get-restore-tid", "--pid", "P" } } };

static double floor_call(void)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "1", NULL };
	double t0;

	/* The shim refuses at once under its own guard (one line on stderr): a
	 * spawn of the same binary that does nothing. */
	setenv("RTID_SHIM_ACTIVE", "1", 1);
	t0 = rtid__now();
	se_call(env.shim, argv, NULL);
	unsetenv("RTID_SHIM_ACTIVE");
	return rtid__now() - t0;
}

struct timing {
	double total;             /* seconds for the whole sequence */
	double call[PIDS * 8];    /* each call */
	double floor[PIDS * 8];   /* a floor spawn right after each call */
	int n, bad;
};

/* Run seq for every pid through prog, one call after another, a floor spawn
 * after each call so that both see the same load. */
static void run_seq(const char *prog, const struct seq *s, struct timing *t)
{
	t->n = t->bad = 0;
	t->total = 0;
	for (int i = 0; i < PIDS; i++) {
		char p[16], tid_s[16];
		int pid = FIRST + 10 * i;

		snprintf(p, sizeof(p), "%d", pid);
		snprintf(tid_s, sizeof(tid_s), "%d", pid + 2);
		for (int c = 0; c < s->calls; c++) {
			char *argv[8] = { "cuda-checkpoint" };
			int n = 1, tid, rc;
			double t0;

			for (int k = 0; k < 6 && s->ops[c][k]; k++)
				argv[n++] = !strcmp(s->ops[c][k], "P") ? p
					    : !strcmp(s->ops[c][k], "T") ? tid_s : (char *)s->ops[c][k];
			t0 = rtid__now();
			rc = se_call(prog, argv, &tid);
			t->call[t->n] = rtid__now() - t0;
			t->total += t->call[t->n];
			t->floor[t->n++] = floor_call();
			t->bad += rc != 0 || (!strcmp(argv[1], "--get-restore-tid") && tid != pid + 2);
		}
	}
}

/* 24 serial calls, each a fork and exec of the shim asking the daemon for
 * one restore tid, as CRIU's plugin spawns it, against 24 fork-and-execs of
 * a compiled program that exits at once; rounds interleaved, medians. */
static void shim_vs_spawn(void)
{
	enum { CALLS = 24, ROUNDS = 15 };
	char *trivial[] = { (char *)env_path("BENCH_TRIVIAL"), NULL };
	char *ask[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "20000", NULL };
	double shim[ROUNDS], bare[ROUNDS];
	int bad = 0;

	for (int r = 0; r < ROUNDS; r++) {
		double t0 = rtid__now();

		for (int i = 0; i < CALLS; i++) {
			int tid;

			bad += se_call(env.shim, ask, &tid) != 0 || tid != 20002;
		}
		shim[r] = rtid__now() - t0;
		t0 = rtid__now();
		for (int i = 0; i < CALLS; i++)
			bad += se_call(trivial[0], trivial, NULL) != 0;
		bare[r] = rtid__now() - t0;
	}
	printf("\n%d serial calls of the shim, each answered by rtid serve, against %d spawns of a "
	       "program that exits at once (median of %d rounds): %.2f ms against %.2f ms, "
	       "%.2fx (target 2.0x); %d failures.\n", CALLS, CALLS, ROUNDS,
	       median(shim, ROUNDS) * 1e3, median(bare, ROUNDS) * 1e3,
	       median(shim, ROUNDS) / median(bare, ROUNDS), bad);
}

static void row(const char *what, struct timing *t)
{
	double call = median(t->call, (size_t)t->n), fl = median(t->floor, (size_t)t->n);

	printf("| %s | %d | %.3f | %.3f | %.3f | %.2fx | %d |\n", what, t->n, t->total, call * 1e3,
	       fl * 1e3, call / fl, t->bad);
}

void bench_serve(void)
{
	const struct seq *seqs[] = { &query, &dump, &restore };
	const char *tool = env_path("MOCK_TOOL");
	double scale = cf_scaled(1.0), floor_s = 0, per = 1;

	se_setup(&env, "title bench\nproves nothing\nattach-delay 2.724\nbackend api\n"
		       "workload 103 20000\nexpect all * error=-\n");
	se_daemon(&env);
	printf("\n## rtid serve behind the shim: %d pids, one spawn per call, serially "
	       "(attach %.0f ms scaled)\n\n", PIDS, REAL_ATTACH * scale * 1e3);
	printf("Medians per call; the floor is a spawn of the shim that does nothing, made right\n"
	       "after each call.\n\n");
	printf("| calls | spawns | total s | ms per call | floor ms | vs floor | failures |\n"
	       "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
		static struct timing ts, tt;
		char what[96];

		run_seq(env.shim, seqs[k], &ts);
		run_seq(tool, seqs[k], &tt);
		snprintf(what, sizeof(what), "%s: shim + rtid serve", seqs[k]->what);
		row(what, &ts);
		snprintf(what, sizeof(what), "%s: the tool, attach every spawn", seqs[k]->what);
		row(what, &tt);
		if (k == 0)
			floor_s = median(ts.floor, (size_t)ts.n), per = median(ts.call, (size_t)ts.n);
	}
	printf("\nAt the write-up's real attach of %.3f s a tool call costs %.3f s + a spawn, "
	       "%.0fx the %.2f ms of a call through the shim and rtid serve.\n",
	       REAL_ATTACH, REAL_ATTACH, (REAL_ATTACH + floor_s) / per, per * 1e3);
	shim_vs_spawn();
	se_teardown(&env);
}
