/* The simulator: CRIU's dump and restore of a process tree with the CUDA
 * plugin, in virtual time, per strategy of finding restore threads. */
#ifndef RTID_SIM_ENGINE_H
#define RTID_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "params.h"
#include "workload.h"

/* Who names the restore thread. */
enum sim_tid { SIM_TID_DRIVER, SIM_TID_SCAN, SIM_TID_CANARY };
/* How a driver call is made: a cuda-checkpoint spawn that attaches; one
 * worker that attaches once per CRIU run (api); a daemon attached before the
 * operation, reached by a shim spawn per call (serve), or by a CRIU plugin
 * that talks to it with no spawn at all (plugin). */
enum sim_backend { SIM_BACKEND_SPAWN, SIM_BACKEND_API, SIM_BACKEND_SERVE, SIM_BACKEND_PLUGIN };

/* rtid's plugin's default of processes at once (RTID_PLUGIN_PARALLEL): what
 * "plugin" without parallel:K models. The bench's model check (bench/plugin.c)
 * holds the two equal: it runs the plugin at its own default. */
#define SIM_PLUGIN_K 8

struct sim_strategy {
	enum sim_tid tid;
	enum sim_backend backend;
	bool toggle; /* restore+unlock as one --toggle call; lock+checkpoint as another */
	bool coalesced; /* restore+unlock as one call (nvsnap's resume); the dump as it is */
	unsigned k;  /* processes at once in each hook (parallel:K; 1 = serial; plugin:
		      * SIM_PLUGIN_K, and its locks one by one) */
	unsigned batch; /* batch:K: the plugin gets every pid at once (criu PR #3105): its
			 * queries per pid as today, then the hook's actions K at once,
			 * locks and unlocks all at once, a launch job's one by one */
	unsigned runs;  /* runs:R: R CRIU runs of the workload at once on one node */
	bool queue;     /* the daemon serves all runs' calls from one queue (serve, plugin) */
	char name[48];
};

/* The plugin's hooks and its call kinds, in the order the JSON lists them. */
enum sim_hook { SIM_PAUSE, SIM_CHECKPOINT, SIM_RESUME, SIM_NHOOKS };
enum sim_call { SIM_GET_TID, SIM_GET_STATE, SIM_LOCK, SIM_CKPT, SIM_RESTORE, SIM_UNLOCK,
		SIM_TOGGLE, SIM_RESUME_CALL, SIM_NCALLS };
extern const char *const sim_hook_names[SIM_NHOOKS];
extern const char *const sim_call_names[SIM_NCALLS];

struct sim_result {
	double dump_s, restore_s, restore_tid_s, wrong_tid_per_million;
	/* Seconds in calls of each kind in each hook, summed over processes. */
	double hooks[SIM_NHOOKS][SIM_NCALLS];
	/* Wall time of the plugin's hooks in the dump and in the restore. */
	double dump_plugin_s, restore_plugin_s;
	/* serve: the daemon's one attach, paid before the dump or restore starts. */
	double serve_attach_s;
	unsigned long spawns;   /* processes started in dump and restore (shims too) */
	unsigned long attaches; /* driver attaches paid in dump and restore */
	bool dump_timed_out, restore_timed_out;
};

/* Parts joined by '+': "upstream" (nothing changed), "scan", "canary", "api",
 * "serve", "plugin", "toggle", "coalesced", "parallel:K", "batch:K" (1..64),
 * "runs:R" (1..64), "queue"; e.g. "serve+parallel:8". At most one of
 * scan/canary, one of api/serve/plugin, one of toggle/coalesced, one of
 * parallel/batch; each part once; api with neither parallel nor batch; queue
 * only with serve or plugin. 0 or -EINVAL. */
int sim_strategy_parse(const char *s, struct sim_strategy *out);
/* The same, with why it was refused written to why (the part, and what is
 * allowed) when it returns -EINVAL. */
int sim_strategy_parse_why(const char *s, struct sim_strategy *out, char *why, size_t len);

/* One driver attach for a tool that sees `visible` GPUs: a draw from the
 * fitted distribution (params.h) plus the per-GPU growth. *rng: the state of
 * the seeded generator, advanced. */
double sim_attach_draw(const struct sim_params *p, unsigned visible, uint64_t *rng);

/* The seeded generator's next draw, uniform in (0, 1]; advances *rng. */
double sim_rng_uniform(uint64_t *rng);

/* Sum of one hook's calls (the `total` of the JSON). */
double sim_hook_total(const struct sim_result *r, enum sim_hook h);

/* Run one simulation; the same seed gives the same result. */
void sim_run(const struct sim_params *p, const struct sim_workload *w,
	     const struct sim_strategy *s, uint64_t seed, struct sim_result *out);

#endif
