/* The simulator: calibrated against the write-up's figures, deterministic,
 * strict about its input. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"
#include "sim-run.h"
#include "evidence.h"
#include "helpers.h"
#include "plot.h"

static void vllm_8b_matches_the_write_up(void **state)
{
	struct sim_result up = run("vllm-8b", "upstream", 7), scan = run("vllm-8b", "scan", 7);

	(void)state;
	/* "about 5 s of a ~26 s restore for a 2-3 pid workload" */
	assert_true(up.restore_s >= 20 && up.restore_s <= 32);
	assert_true(up.restore_s - scan.restore_s >= 3.5 && up.restore_s - scan.restore_s <= 7);
	assert_false(up.dump_timed_out);
}

/* The same figures as means over seeds: the calibration holds for the
 * distribution, not for one lucky draw. */
static void vllm_8b_over_seeds(void **state)
{
	double up = 0, saved = 0;
	const int n = 200;

	(void)state;
	for (int seed = 1; seed <= n; seed++) {
		struct sim_result u = run("vllm-8b", "upstream", (uint64_t)seed);

		up += u.restore_s / n;
		saved += (u.restore_s - run("vllm-8b", "scan", (uint64_t)seed).restore_s) / n;
	}
	assert_true(up >= 24 && up <= 28);
	assert_true(saved >= 4 && saved <= 6.5);
}

static void sglang_103_dump_timeouts(void **state)
{
	(void)state;
	/* The write-up: it fails at the ~10 min dump timeout with and without the scan. */
	assert_true(run("sglang-103", "upstream", 1).dump_timed_out);
	assert_true(run("sglang-103", "scan", 1).dump_timed_out);
	assert_false(run("sglang-103", "api", 1).dump_timed_out);
	assert_false(run("sglang-103", "parallel:8", 1).dump_timed_out);
	assert_false(run("sglang-103", "serve", 1).dump_timed_out);
	/* toggle removes one spawn of five per GPU pid: not enough on its own */
	assert_true(run("sglang-103", "toggle", 1).dump_timed_out);
	assert_false(run("sglang-103", "toggle+parallel:8", 1).dump_timed_out);
}

static void risk_only_where_names_are_trusted(void **state)
{
	(void)state;
	assert_true(run("nim-24", "upstream", 1).wrong_tid_per_million == 0);
	assert_true(run("nim-24", "api", 1).wrong_tid_per_million == 0);
	assert_true(run("nim-24", "parallel:8", 1).wrong_tid_per_million == 0);
	assert_true(run("nim-24", "scan", 1).wrong_tid_per_million > 0);
	/* The canary catches drift that hits every process alike. */
	assert_true(run("nim-24", "canary", 1).wrong_tid_per_million <
		    run("nim-24", "scan", 1).wrong_tid_per_million);
}

static void same_seed_same_result(void **state)
{
	struct sim_result a = run("nim-24", "upstream", 42), b = run("nim-24", "upstream", 42),
			  c = run("nim-24", "upstream", 43);

	(void)state;
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(a.restore_s != c.restore_s); /* the seed drives the jitter */
	assert_int_equal(a.spawns, 24 * 8 + 4 * 3);
}

static void api_attaches_once(void **state)
{
	struct sim_result a = run("sglang-103", "api", 1);

	(void)state;
	assert_int_equal(a.spawns, 0);
	assert_int_equal(a.attaches, 2); /* one worker per CRIU run */
	assert_true(a.restore_tid_s < sim_defaults.attach_max_s + 1);
}

/* The hooks add up: each hook's calls are the plugin's time when serial, the
 * kinds are the plugin's (no lock in a restore, no toggle unless asked). */
static void hooks_add_up(void **state)
{
	struct sim_result r = run("vllm-8b", "upstream", 3), p = run("nim-24", "parallel:8", 3);
	const struct sim_params *d = &sim_defaults;

	(void)state;
	assert_true(fabs(sim_hook_total(&r, SIM_PAUSE) + sim_hook_total(&r, SIM_CHECKPOINT) -
			 r.dump_plugin_s) < 1e-9);
	assert_true(fabs(sim_hook_total(&r, SIM_RESUME) - r.restore_plugin_s) < 1e-9);
	assert_true(r.dump_plugin_s < r.dump_s && r.restore_plugin_s < r.restore_s);
	assert_true(r.dump_s - r.dump_plugin_s - d->criu_base_dump_s > 0);
	assert_true(r.hooks[SIM_PAUSE][SIM_LOCK] > 0 && r.hooks[SIM_PAUSE][SIM_GET_STATE] > 0);
	assert_true(r.hooks[SIM_CHECKPOINT][SIM_CKPT] > 0);
	assert_true(r.hooks[SIM_RESUME][SIM_RESTORE] > 0 && r.hooks[SIM_RESUME][SIM_UNLOCK] > 0);
	assert_true(r.hooks[SIM_RESUME][SIM_LOCK] == 0 && r.hooks[SIM_PAUSE][SIM_UNLOCK] == 0);
	for (int h = 0; h < SIM_NHOOKS; h++)
		assert_true(r.hooks[h][SIM_TOGGLE] == 0);
	/* The restore's get-restore-tid calls are the restore-tid phase. */
	assert_true(fabs(r.hooks[SIM_RESUME][SIM_GET_TID] - r.restore_tid_s) < 1e-9);
	/* In parallel the calls sum over processes: more than the hook's wall. */
	assert_true(sim_hook_total(&p, SIM_RESUME) > 2 * p.restore_plugin_s);
	assert_string_equal(sim_hook_names[SIM_RESUME], "resume_devices_late");
	assert_string_equal(sim_call_names[SIM_GET_TID], "get_restore_tid");
}

static void toggle_saves_a_spawn_per_pair(void **state)
{
	struct sim_result up = run("vllm-8b", "upstream", 5), t = run("vllm-8b", "toggle", 5);

	(void)state;
	/* lock+checkpoint and restore+unlock: one spawn fewer in each, per GPU pid */
	assert_int_equal(up.spawns - t.spawns, 2 * 2);
	assert_true(t.restore_s < up.restore_s && t.dump_s < up.dump_s);
	assert_true(t.hooks[SIM_PAUSE][SIM_TOGGLE] > 0 && t.hooks[SIM_RESUME][SIM_TOGGLE] > 0);
	assert_true(t.hooks[SIM_RESUME][SIM_RESTORE] == 0 && t.hooks[SIM_RESUME][SIM_UNLOCK] == 0);
	assert_true(t.hooks[SIM_PAUSE][SIM_LOCK] == 0 && t.hooks[SIM_CHECKPOINT][SIM_CKPT] == 0);
	/* The same calls draw the same attach: what toggle keeps costs the same. */
	assert_true(fabs(t.hooks[SIM_RESUME][SIM_GET_TID] - up.hooks[SIM_RESUME][SIM_GET_TID]) <
		    1e-9);
}

static void serve_attaches_before(void **state)
{
	struct sim_result s = run("sglang-103", "serve", 1), up = run("sglang-103", "upstream", 1),
			  api = run("sglang-103", "api", 1),
			  sp = run("sglang-103", "serve+parallel:8", 1);

	(void)state;
	assert_int_equal(s.attaches, 0);
	assert_true(s.serve_attach_s >= sim_defaults.attach_min_s);
	assert_int_equal(s.spawns, up.spawns); /* a shim spawn for every call */
	assert_false(s.dump_timed_out);
	assert_true(s.dump_s < api.dump_s && sp.dump_s < s.dump_s);
	/* Each call: a shim spawn and a driver call, nothing else. */
	assert_true(fabs(s.restore_tid_s - 115 * (sim_defaults.spawn_overhead_s +
						  sim_defaults.api_query_s)) < 1e-9);
}

/* rtid's plugin: a question about a process without CUDA costs its measured
 * share of a batch (plugin_query_s), a GPU process's a driver call through
 * the daemon (api_query_s): sglang-103 has 12 without CUDA. */
static struct sim_result run_p(const char *workload, double plugin_query_s)
{
	struct sim_params p = sim_defaults;
	struct sim_strategy st;
	struct sim_workload w;
	struct sim_result r;

	p.plugin_query_s = plugin_query_s;
	if (workload)
		assert_int_equal(sim_workload_builtin(workload, &w), 0);
	else /* 4 GPU processes, none without CUDA */
		assert_int_equal(sim_workload_synthetic(4, 1.0, &w), 0);
	assert_int_equal(sim_strategy_parse("plugin", &st), 0);
	sim_run(&p, &w, &st, 1, &r);
	sim_workload_free(&w);
	return r;
}

static void plugin_question_costs(void **state)
{
	struct sim_result a = run_p("sglang-103", 0), b = run_p("sglang-103", 0.01);

	(void)state;
	assert_int_equal(b.spawns, 0);
	assert_true(b.dump_plugin_s - a.dump_plugin_s >= 0.01 * 12 - 1e-9);
	assert_true(b.dump_plugin_s - a.dump_plugin_s <= 0.01 * 24 + 1e-9);
	assert_true(fabs(run_p(NULL, 0).dump_plugin_s - run_p(NULL, 0.01).dump_plugin_s) < 1e-9);
}

/* The attach is the fitted distribution of Modal's 25 spawns. */
static void attach_distribution(void **state)
{
	enum { N = 20001 };
	static double v[N];
	double mean = 0, var = 0;
	uint64_t rng = 11;

	(void)state;
	for (int i = 0; i < N; i++) {
		v[i] = sim_attach_draw(&sim_defaults, 1, &rng);
		assert_true(v[i] >= 0.383 && v[i] <= 7.119);
		mean += v[i] / N;
	}
	for (int i = 0; i < N; i++)
		var += (v[i] - mean) * (v[i] - mean) / (N - 1);
	assert_true(fabs(mean - 2.669) < 0.05 * 2.669);
	assert_true(fabs(var - 1.969) < 0.15 * 1.969);
	rng = 11;
	/* Each GPU the tool sees beyond the first adds its share. */
	assert_true(fabs(sim_attach_draw(&sim_defaults, 8, &rng) - v[0] -
			 7 * sim_defaults.attach_per_gpu_s) < 1e-12);
}

static void visible_gpus_grow_every_attach(void **state)
{
	struct sim_workload w;
	struct sim_result one, eight;

	(void)state;
	assert_int_equal(sim_workload_builtin("nim-24", &w), 0);
	assert_int_equal(w.visible_gpus, 1);
	one = run_w(&w, "upstream", 9);
	w.visible_gpus = 8;
	eight = run_w(&w, "upstream", 9);
	/* 24 GPU pids x 3 calls in the restore; the 4 CPU-only queries cost the
	 * same whatever the GPUs (criu PR #3076's 26 ms on an H200 node). */
	assert_true(fabs(eight.restore_s - one.restore_s -
			 7 * sim_defaults.attach_per_gpu_s * (24 * 3)) < 1e-9);
	sim_workload_free(&w);
	assert_int_equal(sim_workload_builtin("sglang-103", &w), 0);
	assert_int_equal(w.visible_gpus, 8);
	sim_workload_free(&w);
}

/* A process without CUDA costs a failed query, not an attach. */
static void cpu_only_costs_a_query(void **state)
{
	struct sim_workload w = { .visible_gpus = 1 };
	struct sim_proc cpu[3] = { { false, 0, 0, false }, { false, 0, 0, false }, { false, 0, 0, false } };
	struct sim_result r;

	(void)state;
	w.procs = cpu;
	w.n = 3;
	r = run_w(&w, "upstream", 1);
	assert_int_equal(r.attaches, 0);
	assert_true(fabs(r.restore_plugin_s - 3 * (sim_defaults.nocuda_query_s +
						   sim_defaults.spawn_overhead_s)) < 1e-9);
}

static void strategies_parse(void **state)
{
	struct sim_strategy s;

	(void)state;
	assert_int_equal(sim_strategy_parse("parallel:16", &s), 0);
	assert_int_equal(s.k, 16);
	assert_int_equal(sim_strategy_parse("parallel:0", &s), -EINVAL);
	assert_int_equal(sim_strategy_parse("parallel:x", &s), -EINVAL);
	assert_int_equal(sim_strategy_parse("fast", &s), -EINVAL);
	assert_int_equal(sim_strategy_parse("serve+parallel:8", &s), 0);
	assert_true(s.backend == SIM_BACKEND_SERVE && s.k == 8 && !s.toggle);
	assert_string_equal(s.name, "serve+parallel:8");
	assert_int_equal(sim_strategy_parse("toggle+parallel:8", &s), 0);
	assert_true(s.backend == SIM_BACKEND_SPAWN && s.k == 8 && s.toggle);
	assert_int_equal(sim_strategy_parse("scan+toggle", &s), 0);
	assert_true(s.tid == SIM_TID_SCAN && s.toggle && s.k == 1);
	assert_int_equal(sim_strategy_parse("canary", &s), 0);
	assert_true(s.tid == SIM_TID_CANARY && s.backend == SIM_BACKEND_SPAWN);
	static const char *const bad[] = { "scan+canary", "api+serve", "serve+serve", "upstream+scan",
					   "serve+", "+serve", "parallel:8+parallel:4", "",
					   "toggle++scan", "parallel:65", "api+parallel:8" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sim_strategy_parse(bad[i], &s), -EINVAL);
}

static void workload_files(void **state)
{
	char *dir = tmp_dir(), path[512], err[512] = "";
	struct sim_workload w;

	(void)state;
	write_file(dir, "ok.wl", "name mine\nframework vllm\ngpu 3 10 2  # three GPUs\ncpu 2 0.5\n");
	snprintf(path, sizeof(path), "%s/ok.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), 0);
	assert_int_equal(w.n, 5);
	assert_int_equal(sim_workload_gpus(&w), 3);
	assert_string_equal(w.name, "mine");
	sim_workload_free(&w);
	write_file(dir, "bad.wl", "name x\ngpu 3 10 2\ngpu three 10 2\n");
	snprintf(path, sizeof(path), "%s/bad.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad.wl:3: "));
	write_file(dir, "bad2.wl", "cpu 1 -4\n");
	snprintf(path, sizeof(path), "%s/bad2.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad2.wl:1: "));
	write_file(dir, "v.wl", "gpu 2 10 2\nvisible-gpus 4\n");
	snprintf(path, sizeof(path), "%s/v.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), 0);
	assert_int_equal(w.visible_gpus, 4);
	sim_workload_free(&w);
	write_file(dir, "v0.wl", "gpu 2 10 2\nvisible-gpus 0\n");
	snprintf(path, sizeof(path), "%s/v0.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "v0.wl:2: visible-gpus: N must be at least 1, got 0"));
	write_file(dir, "v2.wl", "visible-gpus 2 3\ngpu 1 1 1\n");
	snprintf(path, sizeof(path), "%s/v2.wl", dir);
	assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "v2.wl:1: "));
	rm_tree(dir);
	free(dir);
}

/* Each bad line says which field is wrong and how, not one message for all. */
static void workload_errors_are_specific(void **state)
{
	static const char *const cases[][2] = {
		{ "gpu four 70 20", "w.wl:2: gpu: count 'four' is not a number" },
		{ "gpu 4 70", "w.wl:2: gpu: needs COUNT MEM_GB HOST_GB, got 2 fields" },
		{ "gpu -4 70 20", "w.wl:2: gpu: count '-4' is negative" },
		{ "gpu 0 1 1", "w.wl:2: gpu: count must be at least 1, got 0" },
		{ "gpu 1 x 1", "w.wl:2: gpu: MEM_GB 'x' is not a number" },
		{ "gpu 1 1 -1", "w.wl:2: gpu: HOST_GB '-1' is negative" },
		{ "cpu 1", "w.wl:2: cpu: needs COUNT HOST_GB, got 1 field" },
		{ "visible-gpus 2000", "w.wl:2: visible-gpus: N must be at most 1024, got 2000" },
		{ "gpus 1 1 1", "w.wl:2: unknown directive 'gpus'" },
		{ "launch-job", "w.wl:2: launch-job: needs COUNT (1..10000), got 0 fields" },
		{ "launch-job 0", "w.wl:2: launch-job: COUNT must be at least 1, got 0" },
		{ "launch-job 9\ngpu 2 1 1", "w.wl: launch-job 9: more than the 2 GPU processes" },
	};
	char *dir = tmp_dir(), path[512], body[128], err[512];
	struct sim_workload w;

	(void)state;
	snprintf(path, sizeof(path), "%s/w.wl", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body), "name x\n%s\n", cases[i][0]);
		write_file(dir, "w.wl", body);
		err[0] = '\0';
		assert_int_equal(sim_workload_load(path, &w, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, cases[i][1]));
	}
	rm_tree(dir);
	free(dir);
}

static void strategy_errors_are_specific(void **state)
{
	static const char *const cases[][2] = {
		{ "parallel:0", "parallel:K needs K from 1 to 64, got '0'" },
		{ "parallel:65", "parallel:K needs K from 1 to 64" },
		{ "fast", "unknown part 'fast'; parts: upstream, scan, canary, api, serve, plugin" },
		{ "scan+canary", "pick one" },
		{ "api+parallel:8", "takes no parallel:K" },
		{ "serve+serve", "'serve' given twice" },
		{ "serve+", "empty part" },
		{ "batch:0", "batch:K needs K from 1 to 64, got '0'" },
		{ "runs:65", "runs:K needs K from 1 to 64" },
		{ "serve+plugin", "three backends: pick one" },
		{ "toggle+coalesced", "pick toggle or coalesced" },
		{ "parallel:8+batch:8", "pick parallel or batch" },
		{ "api+batch:4", "takes no batch:K" },
		{ "runs:4+queue", "queue is how a daemon schedules: it needs serve or plugin" },
		{ "batch:2+serve+batch:4", "'batch:K' given twice" },
	};
	struct sim_strategy s;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		assert_int_equal(sim_strategy_parse_why(cases[i][0], &s, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, cases[i][1]));
	}
	assert_int_equal(sim_strategy_parse_why("parallel:64", &s, why, sizeof(why)), 0);
}

/* Any parameter can be changed by name, and a bad name or value says which. */
static void params_set(void **state)
{
	struct sim_params p = sim_defaults;
	struct sim_workload w;
	struct sim_strategy s;
	struct sim_result slow, fast;
	char why[256] = "";

	(void)state;
	assert_int_equal(sim_param_set(&p, "host_gbps=4", why, sizeof(why)), 0);
	assert_true(p.host_gbps == 4 && p.attach_s == sim_defaults.attach_s);
	assert_int_equal(sim_workload_builtin("vllm-8b", &w), 0);
	assert_int_equal(sim_strategy_parse("upstream", &s), 0);
	sim_run(&sim_defaults, &w, &s, 7, &slow);
	sim_run(&p, &w, &s, 7, &fast);
	assert_true(fast.restore_s < slow.restore_s); /* the value is the one used */
	sim_workload_free(&w);
	static const char *const bad[][2] = {
		{ "hostgbps=4", "unknown parameter 'hostgbps'" },
		{ "host_gbps=fast", "host_gbps: 'fast' is not a number" },
		{ "host_gbps=0", "host_gbps: 0 is out of range: above 0" },
		{ "attach_s=-1", "attach_s: -1 is out of range: at least 0" },
		{ "p_drift=2", "p_drift: 2 is out of range: from 0 to 1" },
		{ "p_drift", "expected NAME=VALUE" },
		{ "=1", "expected NAME=VALUE" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sim_param_set(&p, bad[i][0], why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, bad[i][1]));
	}
	assert_true(p.host_gbps == 4 && p.p_drift == sim_defaults.p_drift);
	assert_non_null(sim_param_ref(&p, "p_independent"));
	assert_null(sim_param_ref(&p, "nope"));
}

/* --evidence: the GPU kit's passing reports on real drivers set the attach
 * (per spawn, less the spawn) and the driver-API query (the api batch beyond
 * one attach, per process); a run against the mocks is no evidence. */
static void evidence_from_kit_reports(void **state)
{
	struct sim_params p = sim_defaults;
	char dir[600], src[512] = "";

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/sim-evidence/real", env_path("RTID_SOURCE_ROOT"));
	assert_int_equal(sim_evidence_load(dir, &p, src, sizeof(src)), 2);
	assert_true(fabs(p.attach_s - 2.5) < 1e-9);
	assert_true(fabs(p.api_query_s - (0.0974 + 0.1974) / 20) < 1e-9);
	assert_non_null(strstr(src, "median of 2 passing GPU kit reports"));
	assert_true(p.host_gbps == sim_defaults.host_gbps);
	/* Only a run against the mocks: nothing taken, p untouched. */
	p = sim_defaults;
	snprintf(dir, sizeof(dir), "%s/tests/sim-evidence/mock-only", env_path("RTID_SOURCE_ROOT"));
	assert_int_equal(sim_evidence_load(dir, &p, src, sizeof(src)), -ENODATA);
	assert_memory_equal(&p, &sim_defaults, sizeof(p));
	assert_int_equal(sim_evidence_load("/nonexistent", &p, src, sizeof(src)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vllm_8b_matches_the_write_up),
		cmocka_unit_test(vllm_8b_over_seeds),
		cmocka_unit_test(hooks_add_up),
		cmocka_unit_test(toggle_saves_a_spawn_per_pair),
		cmocka_unit_test(serve_attaches_before),
		cmocka_unit_test(plugin_question_costs),
		cmocka_unit_test(attach_distribution),
		cmocka_unit_test(visible_gpus_grow_every_attach),
		cmocka_unit_test(cpu_only_costs_a_query),
		cmocka_unit_test(sglang_103_dump_timeouts),
		cmocka_unit_test(risk_only_where_names_are_trusted),
		cmocka_unit_test(same_seed_same_result),
		cmocka_unit_test(api_attaches_once),
		cmocka_unit_test(strategies_parse),
		cmocka_unit_test(workload_files),
		cmocka_unit_test(workload_errors_are_specific),
		cmocka_unit_test(strategy_errors_are_specific),
		cmocka_unit_test(params_set),
		cmocka_unit_test(evidence_from_kit_reports),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
