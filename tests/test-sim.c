/* The simulator: calibrated against the write-up's figures, deterministic,
 * strict about its input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine.h"
#include "helpers.h"

static struct sim_result run(const char *workload, const char *strategy, uint64_t seed)
{
	struct sim_workload w;
	struct sim_strategy s;
	struct sim_result r;

	assert_int_equal(sim_workload_builtin(workload, &w), 0);
	assert_int_equal(sim_strategy_parse(strategy, &s), 0);
	sim_run(&sim_defaults, &w, &s, seed, &r);
	sim_workload_free(&w);
	return r;
}

static void vllm_8b_matches_the_write_up(void **state)
{
	struct sim_result up = run("vllm-8b", "upstream", 7), scan = run("vllm-8b", "scan", 7);

	(void)state;
	/* "about 5 s of a ~26 s restore for a 2-3 pid workload" */
	assert_true(up.restore_s >= 20 && up.restore_s <= 32);
	assert_true(up.restore_s - scan.restore_s >= 3.5 && up.restore_s - scan.restore_s <= 7);
	assert_false(up.dump_timed_out);
}

static void sglang_103_dump_timeouts(void **state)
{
	(void)state;
	/* The write-up: it fails at the ~10 min dump timeout with and without the scan. */
	assert_true(run("sglang-103", "upstream", 1).dump_timed_out);
	assert_true(run("sglang-103", "scan", 1).dump_timed_out);
	assert_false(run("sglang-103", "api", 1).dump_timed_out);
	assert_false(run("sglang-103", "parallel:8", 1).dump_timed_out);
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
	assert_true(a.restore_tid_s < 2 * sim_defaults.attach_s);
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
	rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vllm_8b_matches_the_write_up),
		cmocka_unit_test(sglang_103_dump_timeouts),
		cmocka_unit_test(risk_only_where_names_are_trusted),
		cmocka_unit_test(same_seed_same_result),
		cmocka_unit_test(api_attaches_once),
		cmocka_unit_test(strategies_parse),
		cmocka_unit_test(workload_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
