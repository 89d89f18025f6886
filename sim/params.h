/* Every parameter of the simulator, in one place, each with its source: a
 * public figure (its URL), a measurement here (how), or "assumption" with the
 * reason no figure exists. */
#ifndef RTID_SIM_PARAMS_H
#define RTID_SIM_PARAMS_H

#include <stddef.h>

struct sim_params {
	/* One driver attach per cuda-checkpoint spawn: log-normal with this
	 * median and sigma, redrawn outside [min, max]; plus per_gpu for each
	 * GPU the tool sees beyond the first. */
	double attach_s, attach_sigma, attach_min_s, attach_max_s, attach_per_gpu_s;
	double nocuda_query_s;    /* a query for a pid without CUDA state, one GPU visible */
	double spawn_overhead_s;  /* fork/exec/wait of a process, beyond its own work */
	double scan_s;            /* one scan of one process's threads */
	double api_query_s;       /* one driver-API call in an attached process */
	double plugin_query_s;    /* rtid's plugin asking rtid serve about a process without
				   * CUDA state, per task in its batches */
	double gpu_copy_gbps;     /* device <-> host copy in checkpoint/restore actions */
	double lock_s;            /* a lock's wait for the process's work in flight, beyond the call */
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
	const char *unit;
	const char *basis;  /* "public" (a figure someone published), "measured" (here, by
			     * a benchmark of this repository), "fitted" (to public
			     * figures), or "assumed" (no figure exists; the reason given) */
	const char *source; /* the address or file, and how */
};

extern const struct sim_params sim_defaults;
extern const struct sim_param_doc sim_param_docs[];
extern const size_t sim_param_count;

/* Apply "NAME=VALUE" to p: NAME one of sim_param_docs, VALUE a finite
 * number in the parameter's range (probabilities and rates 0..1, rates of
 * transfer and timeouts above 0, the rest at least 0). 0, or -EINVAL with why
 * (the name, or the value and its range); p is unchanged on error. */
int sim_param_set(struct sim_params *p, const char *assign, char *why, size_t len);
/* The parameter called name's value in p; NULL when there is none. */
double *sim_param_ref(struct sim_params *p, const char *name);

#endif
