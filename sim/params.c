/* The simulator's parameters and where each number comes from. */
#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct sim_params sim_defaults = {
	.attach_s = 2.525,
	.attach_sigma = 0.58,
	.attach_min_s = 0.383,
	.attach_max_s = 7.119,
	.attach_per_gpu_s = 0.045,
	.nocuda_query_s = 0.0238,
	.spawn_overhead_s = 0.0026,
	.scan_s = 0.0005,
	.api_query_s = 0.0025,
	.plugin_query_s = 0.00007,
	.gpu_copy_gbps = 12.0,
	.lock_s = 0.0,
	.host_gbps = 2.0,
	.criu_base_dump_s = 1.0,
	.criu_base_restore_s = 1.5,
	.criu_per_process_s = 0.02,
	.dump_timeout_s = 600.0,
	.restore_timeout_s = 600.0,
	.scan_fallback_rate = 0.0,
	.p_drift = 0.1,
	.p_wrong_given_drift = 0.05,
	.p_nvml_lookalike = 0.001,
	.p_independent = 1e-6,
};

#define P(field, unit, basis, source) \
	{ #field, offsetof(struct sim_params, field), unit, basis, source }

#define MODAL "https://github.com/modal-labs/modal-client/pull/3603"
#define CUDF "https://github.com/NVIDIA/cudf/issues/627"
#define WRITEUP "the write-up, https://github.com/NVIDIA/nvcf/issues/437"

const struct sim_param_doc sim_param_docs[] = {
	P(attach_s, "s", "public", "median of 25 single cuda-checkpoint --get-state spawns (mean 2.669 s, "
			 "variance 1.969, min 0.383 s, max 7.119 s), " MODAL),
	P(attach_sigma, "log s", "fitted", "fitted: a log-normal with that median, cut to that min..max, has "
				 "that variance (1.97); one spawn of 2.724 s "
				 "(https://github.com/NVIDIA/nvcf/issues/437) and six of ~2.7 s "
				 "(https://github.com/NVIDIA/nvcf/pull/263) lie inside it"),
	P(attach_min_s, "s", "public", "the fastest of the 25, " MODAL),
	P(attach_max_s, "s", "public", "the slowest of the 25, " MODAL),
	P(attach_per_gpu_s, "s per GPU", "public", "(0.394 - 0.080) / 7: first driver call on a DGX with 8 "
					 "GPUs visible against 1, " CUDF),
	P(nocuda_query_s, "s", "public", "26.4 ms per pid per call less the spawn (spawn_overhead_s): "
			       "the description of criu PR #3076 (the driver-API path, "
			       "https://github.com/checkpoint-restore/criu/pull/3076) tables, for 17 "
			       "CPU-only pids of an SGLang job on an H200 node, each hook's time by "
			       "the tool: pause 448.9 ms, checkpoint 450.2 ms, resume 448.0 ms (the API: "
			       "0.63, 0.52, 0.59 ms), the whole hook over the 17 pids; the same whatever "
			       "GPUs are visible (was 0.080 s, cudf's driver init, 3.1x off)"),
	P(spawn_overhead_s, "s", "measured", "measured: make bench, bare posix_spawn+waitpid (2.4 ms) plus "
				 "rtid's overhead (0.2 ms), bench/bench.c"),
	P(scan_s, "s", "measured", "measured: make bench, 9.1 ms for 1000 threads, taken for ~50 "
			 "threads, bench/bench.c"),
	P(api_query_s, "s", "public", "mean of two unlocks through a helper that had called cuInit once, "
			    "0.001 s and 0.004 s (by a spawn each: 2.313 s and 2.412 s), "
			    "https://github.com/ai-dynamo/dynamo/pull/7773"),
	P(plugin_query_s, "s", "measured", "measured: make bench part 8 (bench/hooks.c), rtid's "
			       "plugin's own time per task without CUDA in PAUSE_DEVICES and "
			       "CHECKPOINT_DEVICES with rtid serve, 65-96 us at 17 and 103 tasks on 2 "
			       "cores (its questions in batches); a question alone costs 0.1-0.3 ms"),
	P(gpu_copy_gbps, "GB/s", "assumed", "PCIe gen4 x16 with staging: no public timing of a "
				 "checkpoint or restore action gives the GPU memory it moved; "
				 "the copies: sim/engine.c"),
	P(lock_s, "s", "assumed", "no public figure times a lock alone: it waits for the work the "
			   "process has in flight, which the workloads do not say (0: an idle "
			   "process); bench/plugin-model.c sets the mocks' delay, sim/engine.c adds it"),
	P(host_gbps, "GB/s", "fitted", "fitted: keeps vllm-8b's restore at the write-up's ~26 s; restores "
			     "from network storage are slower (20.3 GiB in 38.7 s, "
			     "https://github.com/ai-dynamo/dynamo/pull/13400)"),
	P(criu_base_dump_s, "s", "assumed", "no public figure separates CRIU's fixed cost from its "
				 "page transfer; used in sim/engine.c"),
	P(criu_base_restore_s, "s", "assumed", "as criu_base_dump_s (sim/engine.c)"),
	P(criu_per_process_s, "s", "assumed", "as criu_base_dump_s (sim/engine.c)"),
	P(dump_timeout_s, "s", "public", "the fork of CRIU in " WRITEUP " (upstream has none)"),
	P(restore_timeout_s, "s", "assumed", "the dump's bound (" WRITEUP "); upstream "
				  "bounds neither"),
	P(scan_fallback_rate, "fraction", "public", "measured: 0 of 9 cross-checked lookups fell back "
					  "(" WRITEUP "); a parameter"),
	P(p_drift, "per release", "assumed", "the name was the same in every public sighting; "
				  "no release is known to have changed it, so no rate exists; the "
				  "naming: " WRITEUP),
	P(p_wrong_given_drift, "probability", "assumed", "no drift has been observed to count; "
				      "the risk: sim/engine.c"),
	P(p_nvml_lookalike, "per CPU process", "assumed", "NVML-only processes were seen with "
					       "a matching thread (cases/nvml-only.case), at "
					       "no published rate"),
	P(p_independent, "per process", "assumed", "no single wrong match has been "
				"observed; the exactly-one rule: src/rules/decide.c"),
};

const size_t sim_param_count = sizeof(sim_param_docs) / sizeof(sim_param_docs[0]);

double *sim_param_ref(struct sim_params *p, const char *name)
{
	for (size_t i = 0; i < sim_param_count; i++)
		if (!strcmp(sim_param_docs[i].name, name))
			return (double *)((char *)p + sim_param_docs[i].offset);
	return NULL;
}

/* The lowest value name takes, and whether it must lie above it; the highest. */
static void range(const char *name, double *lo, int *open_lo, double *hi)
{
	*lo = 0;
	*open_lo = strstr(name, "gbps") || strstr(name, "timeout");
	*hi = !strncmp(name, "p_", 2) || strstr(name, "_rate") ? 1 : HUGE_VAL;
}

int sim_param_set(struct sim_params *p, const char *assign, char *why, size_t len)
{
	const char *eq = strchr(assign, '=');
	char name[64], *end;
	double v, lo, hi, *ref;
	int open_lo;

	if (!eq || eq == assign || (size_t)(eq - assign) >= sizeof(name))
		return snprintf(why, len, "'%s': expected NAME=VALUE", assign), -EINVAL;
	memcpy(name, assign, (size_t)(eq - assign));
	name[eq - assign] = '\0';
	ref = sim_param_ref(p, name);
	if (!ref)
		return snprintf(why, len, "unknown parameter '%s' (rtid-sim --params lists them)",
				name), -EINVAL;
	v = strtod(eq + 1, &end);
	if (end == eq + 1 || *end || !isfinite(v))
		return snprintf(why, len, "%s: '%s' is not a number", name, eq + 1), -EINVAL;
	range(name, &lo, &open_lo, &hi);
	if (v < lo || (open_lo && v == lo) || v > hi) {
		if (hi == 1)
			snprintf(why, len, "%s: %s is out of range: from 0 to 1", name, eq + 1);
		else
			snprintf(why, len, "%s: %s is out of range: %s 0", name, eq + 1,
				 open_lo ? "above" : "at least");
		return -EINVAL;
	}
	*ref = v;
	return 0;
}
