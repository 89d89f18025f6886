/* The simulator's model of rtid-bench part 7. */
#ifndef RTID_BENCH_PLUGIN_MODEL_H
#define RTID_BENCH_PLUGIN_MODEL_H

/* What the CUDA plugin's hooks add to a dump and to a restore of n processes
 * under strategy (sim_strategy_parse's names: "plugin", "serve", "upstream")
 * when every tool run pays an attach of attach_s and every lock, checkpoint
 * and restore takes slow_s, beyond the same run with no driver delay: into
 * *dump_s and *restore_s, 0; -EINVAL for a strategy the simulator does not
 * know or a bad figure (nothing written). */
int plugin_model(const char *strategy, int n, double attach_s, double slow_s, double *dump_s,
		 double *restore_s);

#endif
