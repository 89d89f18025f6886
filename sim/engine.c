/* The simulation. Each CRIU hook is a phase: every process gets its sequence
 * of plugin operations (as cuda_plugin.c issues them), and processes are laid
 * on K slots in order (K = 1 serially, as upstream does). An operation costs
 * what its strategy makes it cost: a spawn with a driver attach, a scan, or a
 * call into a worker that attached once. */
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtid.h"

#define GIB 1.073741824 /* GB per GiB */

enum op { OP_GET_TID, OP_GET_STATE, OP_LOCK, OP_CHECKPOINT, OP_RESTORE, OP_UNLOCK };

/* The plugin's calls per CUDA process in each hook (domain facts). */
static const enum op pause_ops[] = { OP_GET_TID, OP_GET_STATE, OP_LOCK };
static const enum op checkpoint_ops[] = { OP_GET_TID, OP_CHECKPOINT };
static const enum op resume_ops[] = { OP_GET_TID, OP_RESTORE, OP_UNLOCK };

struct sim {
	const struct sim_params *p;
	const struct sim_workload *w;
	const struct sim_strategy *s;
	uint64_t rng;
	unsigned long spawns;
	bool attached;      /* api: the worker of this dump or restore has attached */
	bool canary_done;   /* canary: this phase's canary was cross-checked */
};

int sim_strategy_parse(const char *s, struct sim_strategy *out)
{
	static const char *const names[] = { "upstream", "scan", NULL, "api", "canary" };
	struct sim_strategy st = { 0 };
	int k;

	for (int i = 0; i < 5; i++)
		if (names[i] && !strcmp(s, names[i]))
			st.kind = (enum sim_kind)i, st.k = 1;
	if (!st.k && !strncmp(s, "parallel:", 9) && !rtid_parse_pid(s + 9, &k) && k <= 1024)
		st.kind = SIM_PARALLEL, st.k = (unsigned)k;
	if (!st.k)
		return -EINVAL;
	snprintf(st.name, sizeof(st.name), "%s", s);
	*out = st;
	return 0;
}

/* xorshift64*: small, seeded, the same everywhere. Uniform in [-1, 1). */
static double jitter(struct sim *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return (double)((m->rng * 2685821657736338717ULL) >> 11) / 4503599627370496.0 - 1.0;
}

static double uniform01(struct sim *m)
{
	return (jitter(m) + 1.0) / 2.0;
}

static double spawn(struct sim *m, const struct sim_proc *pr)
{
	m->spawns++;
	if (!pr->gpu)
		return m->p->nocuda_query_s + m->p->spawn_overhead_s;
	return m->p->attach_s * (1.0 + m->p->attach_jitter * jitter(m)) + m->p->spawn_overhead_s;
}

static double copy_s(const struct sim *m, const struct sim_proc *pr, enum op op)
{
	return op == OP_CHECKPOINT || op == OP_RESTORE ? pr->gpu_gib * GIB / m->p->gpu_copy_gbps : 0;
}

/* How the strategy finds a restore tid. */
static double get_tid(struct sim *m, const struct sim_proc *pr)
{
	const struct sim_params *p = m->p;

	switch (m->s->kind) {
	case SIM_SCAN:
		/* No candidate in a CPU-only process: the scan falls back to the tool. */
		if (!pr->gpu || uniform01(m) < p->scan_fallback_rate)
			return p->scan_s + spawn(m, pr);
		return p->scan_s;
	case SIM_CANARY:
		if (!pr->gpu)
			return p->scan_s + spawn(m, pr);
		if (!m->canary_done) {
			m->canary_done = true;
			return p->scan_s + spawn(m, pr);
		}
		return p->scan_s;
	default:
		return spawn(m, pr);
	}
}

static double op_cost(struct sim *m, const struct sim_proc *pr, enum op op)
{
	double attach = 0;

	if (m->s->kind == SIM_API) {
		if (!m->attached) {
			m->attached = true;
			attach = m->p->attach_s + m->p->spawn_overhead_s; /* the worker, once */
		}
		return attach + m->p->api_query_s + copy_s(m, pr, op);
	}
	if (op == OP_GET_TID)
		return get_tid(m, pr);
	return spawn(m, pr) + copy_s(m, pr, op);
}

/* One hook over all processes on K slots. tid_only: just the get-tid calls. */
static double phase(struct sim *m, const enum op *ops, size_t nops, bool tid_only)
{
	unsigned k = m->s->kind == SIM_PARALLEL ? m->s->k : 1;
	double *slot = calloc(k, sizeof(*slot)), end = 0;

	m->canary_done = false;
	for (size_t i = 0; slot && i < m->w->n; i++) {
		const struct sim_proc *pr = &m->w->procs[i];
		unsigned best = 0;
		double t = 0;

		for (unsigned j = 1; j < k; j++)
			if (slot[j] < slot[best])
				best = j;
		/* A process without CUDA only answers get-restore-tid (it fails). */
		for (size_t o = 0; o < nops && (pr->gpu || o == 0); o++)
			if (!tid_only || ops[o] == OP_GET_TID)
				t += op_cost(m, pr, ops[o]);
		slot[best] += t;
		if (slot[best] > end)
			end = slot[best];
	}
	free(slot);
	return end;
}

static double host_s(const struct sim *m)
{
	double gib = 0;

	for (size_t i = 0; i < m->w->n; i++)
		gib += m->w->procs[i].host_gib;
	return gib * GIB / m->p->host_gbps + (double)m->w->n * m->p->criu_per_process_s;
}

/* Wrong-tid resumes per restore: a strategy that trusts a name can be fooled
 * by naming drift (scan), by a lookalike in a CPU-side process, or by one
 * process alone. The canary catches drift, which hits every process alike. */
static double risk(const struct sim *m)
{
	const struct sim_params *p = m->p;
	double g = (double)sim_workload_gpus(m->w), c = (double)m->w->n - g, ok;

	if (m->s->kind == SIM_SCAN)
		ok = (1 - p->p_drift * (1 - pow(1 - p->p_wrong_given_drift, g))) *
		     pow(1 - p->p_nvml_lookalike, c) * pow(1 - p->p_independent, g);
	else if (m->s->kind == SIM_CANARY)
		ok = pow(1 - p->p_nvml_lookalike, c) * pow(1 - p->p_independent, g > 1 ? g - 1 : 0);
	else
		ok = 1;
	return (1 - ok) * 1e6;
}

void sim_run(const struct sim_params *p, const struct sim_workload *w,
	     const struct sim_strategy *s, uint64_t seed, struct sim_result *out)
{
	struct sim m = { p, w, s, seed ? seed : 0x9e3779b97f4a7c15ULL, 0, false, false };
	struct sim_result r = { 0 };

	r.dump_s = p->criu_base_dump_s + phase(&m, pause_ops, 3, false) + host_s(&m) +
		   phase(&m, checkpoint_ops, 2, false);
	m.attached = false; /* restore is another CRIU run: another worker */
	r.restore_s = p->criu_base_restore_s + host_s(&m) + phase(&m, resume_ops, 3, false);
	/* The restore-tid phase alone, as a resolver batch would run it. */
	{
		unsigned long spawns = m.spawns;

		m.attached = false;
		r.restore_tid_s = phase(&m, resume_ops, 3, true);
		m.spawns = spawns;
	}
	r.spawns = m.spawns;
	r.dump_timed_out = r.dump_s > p->dump_timeout_s;
	r.restore_timed_out = r.restore_s > p->restore_timeout_s;
	r.wrong_tid_per_million = risk(&m);
	*out = r;
}
