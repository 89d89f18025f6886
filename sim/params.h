/* Every parameter of the simulator, in one place, each with its source:
 * "measured" (where and how) or "assumption" (to be replaced by a measurement). */
#ifndef RTID_SIM_PARAMS_H
#define RTID_SIM_PARAMS_H

#include <stddef.h>

struct sim_params {
	double attach_s;          /* driver attach per cuda-checkpoint spawn */
	double attach_jitter;     /* +/- fraction, uniform, per spawn */
	double nocuda_query_s;    /* a query for a pid without CUDA state */
	double spawn_overhead_s;  /* fork/exec/wait of a process, beyond its own work */
	double scan_s;            /* one scan of one process's threads */
	double api_query_s;       /* one driver-API call in a warm worker */
	double gpu_copy_gbps;     /* device <-> host copy in checkpoint/restore actions */
	double host_gbps;         /* CRIU's dump/restore of host memory */
	double criu_base_dump_s, criu_base_restore_s, criu_per_process_s;
	double dump_timeout_s, restore_timeout_s;
	double scan_fallback_rate; /* share of GPU pids whose scan falls back */
	double p_drift;            /* a driver release changes the thread naming */
	double p_wrong_given_drift;/* ...and leaves exactly one wrong thread matching */
	double p_nvml_lookalike;   /* a CPU-side process has a matching thread (NVML) */
	double p_independent;      /* one process alone has a wrong single match */
};

struct sim_param_doc {
	const char *name;
	size_t offset;
	const char *unit, *source;
};

extern const struct sim_params sim_defaults;
extern const struct sim_param_doc sim_param_docs[];
extern const size_t sim_param_count;

#endif
