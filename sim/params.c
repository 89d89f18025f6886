/* The simulator's parameters and where each number comes from. */
#include "params.h"

const struct sim_params sim_defaults = {
	.attach_s = 2.724,
	.attach_jitter = 0.05,
	.nocuda_query_s = 0.05,
	.spawn_overhead_s = 0.0026,
	.scan_s = 0.0005,
	.api_query_s = 0.001,
	.gpu_copy_gbps = 12.0,
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

#define P(field, unit, source) { #field, offsetof(struct sim_params, field), unit, source }

const struct sim_param_doc sim_param_docs[] = {
	P(attach_s, "s", "measured: one cuda-checkpoint spawn in a restore log (the write-up)"),
	P(attach_jitter, "fraction", "assumption"),
	P(nocuda_query_s, "s", "assumption: a query for a non-CUDA pid fails without the full "
			       "attach (domain facts)"),
	P(spawn_overhead_s, "s", "measured: make bench, bare posix_spawn+waitpid (2.4 ms) plus "
				 "rtid's overhead (0.2 ms)"),
	P(scan_s, "s", "measured: make bench, 9.1 ms for 1000 threads, taken for ~50 threads"),
	P(api_query_s, "s", "assumption: one driver call in an attached process"),
	P(gpu_copy_gbps, "GB/s", "assumption: PCIe gen4 x16 with staging"),
	P(host_gbps, "GB/s", "assumption: CRIU page dump/restore to local disk"),
	P(criu_base_dump_s, "s", "assumption"),
	P(criu_base_restore_s, "s", "assumption"),
	P(criu_per_process_s, "s", "assumption"),
	P(dump_timeout_s, "s", "the write-up's fork of CRIU (upstream has none)"),
	P(restore_timeout_s, "s", "assumption"),
	P(scan_fallback_rate, "fraction", "measured: 0 of 9 cross-checked lookups fell back "
					  "(the write-up); a parameter"),
	P(p_drift, "per release", "assumption"),
	P(p_wrong_given_drift, "probability", "assumption"),
	P(p_nvml_lookalike, "per CPU process", "assumption: NVML-only processes were seen with "
					       "a matching thread (domain facts)"),
	P(p_independent, "per process", "assumption"),
};

const size_t sim_param_count = sizeof(sim_param_docs) / sizeof(sim_param_docs[0]);
