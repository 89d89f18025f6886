/* Workload shapes for the simulator: GPU and CPU-only processes with their
 * memory. Built in, or read from a file. */
#ifndef RTID_SIM_WORKLOAD_H
#define RTID_SIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

struct sim_proc {
	bool gpu;
	double gpu_gib, host_gib;
	bool job; /* one of the processes of the workload's launch job (operated serially) */
};

struct sim_workload {
	char name[64], framework[64];
	struct sim_proc *procs;
	size_t n;
	unsigned visible_gpus; /* GPUs the tool sees on the node (each spawn initialises all) */
	unsigned job;          /* GPU processes in the launch job (launch-job COUNT; 0: none) */
};

/* A built-in workload by name; 0 or -ENOENT. */
int sim_workload_builtin(const char *name, struct sim_workload *out);
/* The built-in names, NULL-terminated. */
extern const char *const sim_workload_names[];
/* Read a workload file (format in sim/README.md). 0, or -EINVAL with err
 * "file:line: reason". */
int sim_workload_load(const char *path, struct sim_workload *out, char *err, size_t errlen);
/* N GPU processes of gpu_gib each, for sweeps. */
int sim_workload_synthetic(size_t n, double gpu_gib, struct sim_workload *out);
void sim_workload_free(struct sim_workload *w);
size_t sim_workload_gpus(const struct sim_workload *w);

#endif
