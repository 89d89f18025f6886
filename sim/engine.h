/* The simulator: CRIU's dump and restore of a process tree with the CUDA
 * plugin, in virtual time, per strategy of finding restore threads. */
#ifndef RTID_SIM_ENGINE_H
#define RTID_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "params.h"
#include "workload.h"

enum sim_kind { SIM_UPSTREAM, SIM_SCAN, SIM_PARALLEL, SIM_API, SIM_CANARY };

struct sim_strategy {
	enum sim_kind kind;
	unsigned k; /* parallel:K */
	char name[32];
};

struct sim_result {
	double dump_s, restore_s, restore_tid_s, wrong_tid_per_million;
	unsigned long spawns;
	bool dump_timed_out, restore_timed_out;
};

/* "upstream", "scan", "parallel:K" (1..1024), "api", "canary". 0 or -EINVAL. */
int sim_strategy_parse(const char *s, struct sim_strategy *out);

/* Run one simulation; the same seed gives the same result. */
void sim_run(const struct sim_params *p, const struct sim_workload *w,
	     const struct sim_strategy *s, uint64_t seed, struct sim_result *out);

#endif
