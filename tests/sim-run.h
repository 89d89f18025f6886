/* The simulator's tests run a workload by strategy name, with the default
 * parameters: one place for it. Include after cmocka.h. */
#ifndef RTID_TESTS_SIM_RUN_H
#define RTID_TESTS_SIM_RUN_H

#include "engine.h"

/* One run of w under strategy (which must parse) with seed. */
static inline struct sim_result run_w(const struct sim_workload *w, const char *strategy,
				      uint64_t seed)
{
	struct sim_strategy s;
	struct sim_result r;

	assert_int_equal(sim_strategy_parse(strategy, &s), 0);
	sim_run(&sim_defaults, w, &s, seed, &r);
	return r;
}

/* The same for a built-in workload by name. */
static inline struct sim_result run(const char *workload, const char *strategy, uint64_t seed)
{
	struct sim_workload w;
	struct sim_result r;

	assert_int_equal(sim_workload_builtin(workload, &w), 0);
	r = run_w(&w, strategy, seed);
	sim_workload_free(&w);
	return r;
}

#endif
