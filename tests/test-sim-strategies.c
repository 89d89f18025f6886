/* The simulator's strategies beyond the plugin as it is: each does what its
 * model in sim/README.md says, against the same runs without it. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine.h"
#include "sim-run.h"

/* Restore and unlock as one call: one spawn fewer per GPU process in the
 * restore, and the dump as it was. */
static void coalesced_saves_a_call_per_gpu_pid(void **state)
{
	struct sim_result up = run("vllm-8b", "upstream", 3), c = run("vllm-8b", "coalesced", 3);

	(void)state;
	assert_int_equal(up.spawns - c.spawns, 2);
	assert_true(fabs(c.dump_s - up.dump_s) < 1e-9);
	assert_true(c.restore_s < up.restore_s);
	assert_true(c.hooks[SIM_RESUME][SIM_RESUME_CALL] > 0);
	assert_true(c.hooks[SIM_RESUME][SIM_RESTORE] == 0 && c.hooks[SIM_RESUME][SIM_UNLOCK] == 0);
	/* with the daemon, only the spawn of the shim is saved */
	assert_int_equal(run("vllm-8b", "serve", 3).spawns - run("vllm-8b", "serve+coalesced", 3).spawns,
			 2);
}

/* batch:K: locks all at once, however small K; checkpoints K at a time. */
static void batch_locks_all_first_then_k_at_a_time(void **state)
{
	struct sim_workload w;
	struct sim_result one, eight, ser;

	(void)state;
	assert_int_equal(sim_workload_synthetic(8, 20, &w), 0);
	one = run_w(&w, "serve+batch:1", 4);
	eight = run_w(&w, "serve+batch:8", 4);
	ser = run_w(&w, "serve", 4);
	/* Locks: the wall time of one (all at once), not of eight. */
	assert_true(one.dump_plugin_s < ser.dump_plugin_s);
	assert_true(fabs(ser.dump_plugin_s - one.dump_plugin_s -
			 7.0 / 8 * ser.hooks[SIM_PAUSE][SIM_LOCK]) < 1e-9);
	/* Checkpoints: 8 at once take an eighth of the copies' time. */
	assert_true(fabs(one.hooks[SIM_CHECKPOINT][SIM_CKPT] - eight.hooks[SIM_CHECKPOINT][SIM_CKPT]) <
		    1e-9);
	assert_true(fabs((one.dump_plugin_s - eight.dump_plugin_s) -
			 7.0 / 8 * one.hooks[SIM_CHECKPOINT][SIM_CKPT]) < 1e-9);
	sim_workload_free(&w);
}

/* A launch job's processes run their actions one after another even when
 * the batch could run them all at once. */
static void launch_job_runs_one_by_one(void **state)
{
	struct sim_workload w;
	struct sim_result job, free_;
	double ckpt = 40 * 1.073741824 / sim_defaults.gpu_copy_gbps; /* one large rank's copy */

	(void)state;
	assert_int_equal(sim_workload_builtin("sglang-103", &w), 0);
	assert_int_equal(w.job, 8);
	job = run_w(&w, "plugin+batch:64", 2);
	for (size_t i = 0; i < w.n; i++)
		w.procs[i].job = false;
	free_ = run_w(&w, "plugin+batch:64", 2);
	assert_true(job.dump_plugin_s - free_.dump_plugin_s > 6.5 * ckpt);
	assert_true(job.dump_plugin_s > 8 * ckpt);
	sim_workload_free(&w);
}

/* plugin: the daemon without any spawn: no process started, no attach in
 * the operation, each call a round trip to the daemon (one at a time here,
 * as serve's calls are, to compare the two call by call). */
static void plugin_spawns_nothing(void **state)
{
	struct sim_result p = run("sglang-103", "plugin+parallel:1", 1),
			  s = run("sglang-103", "serve", 1);

	(void)state;
	assert_int_equal(p.spawns, 0);
	assert_int_equal(p.attaches, 0);
	assert_true(p.serve_attach_s > 0);
	/* sglang-103's restore: 103 GPU processes x 3 calls, 12 CPU-only x 1,
	 * each a spawn more through the shim; the CPU-only questions cost the
	 * plugin its batches' share, not a driver call. */
	assert_true(fabs(s.restore_plugin_s - p.restore_plugin_s -
			 (103 * 3 + 12) * sim_defaults.spawn_overhead_s -
			 12 * (sim_defaults.api_query_s - sim_defaults.plugin_query_s)) < 1e-9);
}

/* plugin alone is rtid's plugin as built (doc/plugin.md): its locks one
 * after another whatever K, its checkpoints and its restores with their
 * unlocks K at a time, K at the plugin's default (8) unless named. */
static void plugin_as_built(void **state)
{
	struct sim_workload w;
	struct sim_result one, built, eight, four;
	double ckpt, rest;

	(void)state;
	assert_int_equal(sim_workload_synthetic(16, 20, &w), 0);
	one = run_w(&w, "plugin+parallel:1", 4);
	built = run_w(&w, "plugin", 4);
	eight = run_w(&w, "plugin+parallel:8", 4);
	four = run_w(&w, "plugin+parallel:4", 4);
	assert_int_equal(SIM_PLUGIN_K, 8);
	assert_true(fabs(built.dump_s - eight.dump_s) < 1e-9);
	assert_true(fabs(built.restore_s - eight.restore_s) < 1e-9);
	/* Checkpoints, restores: 16 equal processes on K slots take 16/K of one's. */
	ckpt = one.hooks[SIM_CHECKPOINT][SIM_GET_TID] + one.hooks[SIM_CHECKPOINT][SIM_CKPT];
	rest = sim_hook_total(&one, SIM_RESUME);
	assert_true(fabs(one.restore_plugin_s - rest) < 1e-9);
	assert_true(fabs(eight.restore_plugin_s - rest / 8) < 1e-9);
	assert_true(fabs(four.restore_plugin_s - rest / 4) < 1e-9);
	/* Locks: the pause hook takes as long as one by one, whatever K. */
	assert_true(fabs((one.dump_plugin_s - ckpt) - (eight.dump_plugin_s - ckpt / 8)) < 1e-9);
	assert_true(fabs((one.dump_plugin_s - ckpt) - sim_hook_total(&one, SIM_PAUSE)) < 1e-9);
	assert_true(sim_hook_total(&one, SIM_PAUSE) > 0);
	/* A serial plugin is serve without the spawns: parallel:8 is not. */
	assert_true(eight.dump_plugin_s < one.dump_plugin_s);
	sim_workload_free(&w);
}

/* lock_s: each lock waits that long in the driver (the toggle that locks
 * too, not the one that unlocks), laid out as the hook lays its calls: one
 * after another in the plugin's pause whatever K, K at a time under
 * parallel:K, all at once under batch:K; the restore never locks. */
static void a_lock_waits_lock_s(void **state)
{
	static const struct {
		const char *strategy;
		double more; /* the dump's increase for 16 locks of 1 s */
	} t[] = {
		{ "plugin", 16 },	    { "plugin+parallel:1", 16 }, { "upstream", 16 },
		{ "serve", 16 },	    { "toggle", 16 },		 { "plugin+batch:8", 1 },
		/* equal processes whose calls cost the same: their units add up */
		{ "serve+parallel:8", 2 }, { "serve+parallel:4", 4 },
	};
	struct sim_params slow = sim_defaults;
	struct sim_workload w;

	(void)state;
	slow.lock_s = 1;
	assert_true(sim_defaults.lock_s == 0);
	assert_int_equal(sim_workload_synthetic(16, 20, &w), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sim_strategy s;
		struct sim_result a, b;

		assert_int_equal(sim_strategy_parse(t[i].strategy, &s), 0);
		sim_run(&sim_defaults, &w, &s, 5, &a);
		sim_run(&slow, &w, &s, 5, &b);
		if (fabs(b.dump_plugin_s - a.dump_plugin_s - t[i].more) > 1e-9 ||
		    fabs(b.restore_plugin_s - a.restore_plugin_s) > 1e-9)
			fail_msg("%s: dump +%.3f s (expected +%.0f), restore +%.3f s", t[i].strategy,
				 b.dump_plugin_s - a.dump_plugin_s, t[i].more,
				 b.restore_plugin_s - a.restore_plugin_s);
	}
	sim_workload_free(&w);
}

/* R runs at once: with requests for different processes side by side each
 * run takes what it takes alone; from one queue, each daemon call waits for
 * the others' (R times the daemon's share). */
static void runs_share_the_daemon(void **state)
{
	struct sim_result one = run("nim-24", "serve", 6), side = run("nim-24", "serve+runs:8", 6),
			  queue = run("nim-24", "serve+runs:8+queue", 6),
			  q1 = run("nim-24", "serve+runs:1+queue", 6);
	double daemon = one.restore_plugin_s - 28 * sim_defaults.spawn_overhead_s -
			24 * 2 * sim_defaults.spawn_overhead_s;

	(void)state;
	assert_true(fabs(side.restore_s - one.restore_s) < 1e-9);
	assert_true(fabs(q1.restore_s - one.restore_s) < 1e-9);
	assert_true(fabs((queue.restore_plugin_s - one.restore_plugin_s) - 7 * daemon) <
		    1e-6 * daemon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(coalesced_saves_a_call_per_gpu_pid),
		cmocka_unit_test(batch_locks_all_first_then_k_at_a_time),
		cmocka_unit_test(launch_job_runs_one_by_one),
		cmocka_unit_test(plugin_spawns_nothing),
		cmocka_unit_test(plugin_as_built),
		cmocka_unit_test(a_lock_waits_lock_s),
		cmocka_unit_test(runs_share_the_daemon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
