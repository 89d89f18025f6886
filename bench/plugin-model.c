/* The simulator's model of part 7 (sim/engine.c): what the three ways' hooks
 * add to a dump and a restore when each driver call costs what the mocks
 * make it cost, for the check of the model against the real CRIU
 * (bench/plugin.c). */
#include <errno.h>

#include "engine.h"
#include "plugin-model.h"

#define GIB 1.073741824 /* GB per GiB, as the engine counts a copy */

int plugin_model(const char *strategy, int n, double attach_s, double slow_s, double *dump_s,
		 double *restore_s)
{
	struct sim_params p = sim_defaults;
	struct sim_strategy s;
	struct sim_workload w;
	struct sim_result r;

	if (n < 1 || attach_s < 0 || slow_s < 0 || sim_strategy_parse(strategy, &s) < 0 ||
	    sim_workload_synthetic((size_t)n, 1.0, &w) < 0)
		return -EINVAL;
	for (size_t i = 0; i < w.n; i++)
		w.procs[i].host_gib = 0;
	/* The mocks' driver: every tool run attaches for attach_s, at the median
	 * alone; a checkpoint or restore moves one GiB in slow_s, and a lock
	 * waits slow_s (RTID_MOCK_SLOW_OPS, bench/plugin.c). What a process
	 * start, a daemon call and CRIU's own work cost is the baseline's,
	 * measured beside (the same run with no driver delay). */
	p.attach_s = attach_s;
	p.attach_sigma = 0;
	p.attach_per_gpu_s = 0;
	p.gpu_copy_gbps = slow_s > 0 ? GIB / slow_s : 1e12;
	p.lock_s = slow_s;
	p.spawn_overhead_s = p.api_query_s = p.scan_s = 0;
	p.criu_base_dump_s = p.criu_base_restore_s = p.criu_per_process_s = 0;
	sim_run(&p, &w, &s, 1, &r);
	sim_workload_free(&w);
	*dump_s = r.dump_plugin_s;
	*restore_s = r.restore_plugin_s;
	return 0;
}
