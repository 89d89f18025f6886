/* rtid-bench part 6: one node, R CRIU runs side by side (R = 1, 2, 4, 8),
 * as engines checkpoint containers independently. Each run dumps its own
 * processes, one after another, each with the CUDA plugin's calls
 * (get-restore-tid, get-state, lock, get-restore-tid, checkpoint), every call
 * a spawn of cuda-checkpoint as CRIU makes it. The stand-in driver's
 * checkpoint takes a set time (RTID_MOCK_SLOW_S, in the mock tool and the
 * mock libcuda alike) and every tool spawn pays the driver attach, both
 * scaled by RTID_TIME_SCALE. Side by side: the shim with rtid serve, the
 * tool alone, and the ideal (one run alone through the shim and rtid serve:
 * what R runs would take if they did not slow each other at all). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "casefile.h"
#include "basic/basic.h"

#define RUNS_MAX 8
#define PER_RUN 2           /* processes per run */
#define FIRST 30000
#define CHECKPOINT_S "30"   /* a large model's checkpoint, seconds before scaling */
#define REAL_ATTACH 2.724   /* one cuda-checkpoint spawn in the write-up */

struct run {
	const char *prog;
	int first;   /* its first pid; the others follow 10 apart */
	double took; /* seconds for its whole dump */
	int bad;     /* calls that failed or answered a wrong tid */
};

static void *one_run(void *arg)
{
	static const char *const ops[5][6] = {
		{ "--get-restore-tid", "--pid", "P" }, { "--get-state", "--pid", "P" },
		{ "--action", "lock", "--pid", "P", "--timeout", "10000" },
		{ "--get-restore-tid", "--pid", "P" }, { "--action", "checkpoint", "--pid", "P" },
	};
	struct run *r = arg;
	double t0 = rtid__now();

	for (int p = 0; p < PER_RUN; p++) {
		int pid = r->first + 10 * p;
		char ps[16];

		snprintf(ps, sizeof(ps), "%d", pid);
		for (int c = 0; c < 5; c++) {
			char *argv[8] = { "cuda-checkpoint" };
			int n = 1, tid = 0, rc;

			for (int k = 0; k < 6 && ops[c][k]; k++)
				argv[n++] = !strcmp(ops[c][k], "P") ? ps : (char *)ops[c][k];
			rc = se_call(r->prog, argv, &tid);
			r->bad += rc != 0 || (c % 3 == 0 && tid != pid + 2);
		}
	}
	r->took = rtid__now() - t0;
	return NULL;
}

/* R runs at once through prog, each on processes no other run touches
 * (round names a fresh set, since a checkpointed process stays so). The
 * wall time until the last ends; failures added to *bad. */
static double node(const char *prog, int runs, int round, int *bad)
{
	pthread_t th[RUNS_MAX];
	struct run r[RUNS_MAX];
	double t0 = rtid__now();

	for (int i = 0; i < runs; i++) {
		r[i] = (struct run){ .prog = prog,
				     .first = FIRST + (round * RUNS_MAX + i) * PER_RUN * 10 };
		if (pthread_create(&th[i], NULL, one_run, &r[i]) != 0)
			exit(1);
	}
	for (int i = 0; i < runs; i++) {
		pthread_join(th[i], NULL);
		*bad += r[i].bad;
	}
	return rtid__now() - t0;
}

void bench_node(void)
{
	static const int rs[] = { 1, 2, 4, 8 };
	enum { ROUNDS = 2 * 4 + 1 };
	struct serve_env env;
	char case_text[256];
	double ideal;
	int bad = 0, round = 0;

	/* Every round of every strategy dumps processes of its own. */
	snprintf(case_text, sizeof(case_text), "title bench node\nproves nothing\n"
		 "attach-delay %.3f\nbackend api\nworkload %d %d\nexpect all * error=-\n",
		 REAL_ATTACH, ROUNDS * RUNS_MAX * PER_RUN, FIRST);
	se_setup(&env, case_text);
	{
		char state[128];

		snprintf(state, sizeof(state), "%s/state", env.dir);
		if (mkdir(state, 0700) < 0)
			exit(1);
		setenv("RTID_MOCK_STATE", state, 1);
	}
	setenv("RTID_MOCK_SLOW_OPS", "checkpoint", 1);
	setenv("RTID_MOCK_SLOW_S", CHECKPOINT_S, 1);
	se_daemon(&env);
	ideal = node(env.shim, 1, round++, &bad);
	printf("\n## One node, R CRIU runs dumping side by side (%d processes each)\n\n", PER_RUN);
	printf("Each process: get-restore-tid, get-state, lock, get-restore-tid, checkpoint, one\n"
	       "spawn per call. Checkpoint %.0f ms, tool attach %.0f ms (%s s and %.3f s scaled).\n"
	       "Ideal: one run alone through the shim and rtid serve, %.3f s.\n\n",
	       cf_scaled(strtod(CHECKPOINT_S, NULL)) * 1e3, cf_scaled(REAL_ATTACH) * 1e3,
	       CHECKPOINT_S, REAL_ATTACH, ideal);
	printf("| R | shim + rtid serve s | tool alone s | ideal s | serve / ideal | "
	       "serve / tool |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t k = 0; k < sizeof(rs) / sizeof(rs[0]); k++) {
		double served = node(env.shim, rs[k], round++, &bad);
		double tool = node(env_path("MOCK_TOOL"), rs[k], round++, &bad);

		printf("| %d | %.3f | %.3f | %.3f | %.2fx | %.2fx |\n", rs[k], served, tool, ideal,
		       served / ideal, served / tool);
	}
	printf("\nFailed calls or wrong tids: %d.\n", bad);
	unsetenv("RTID_MOCK_SLOW_OPS");
	unsetenv("RTID_MOCK_SLOW_S");
	unsetenv("RTID_MOCK_STATE");
	se_teardown(&env);
}
