/* The simulation. Each CRIU hook is a phase: every process gets its sequence
 * of plugin calls (as cuda_plugin.c issues them), and processes are laid on K
 * slots in order (K = 1 serially, as upstream does). A call costs what its
 * strategy makes it cost: a spawn with a driver attach, a scan, a call into a
 * worker that attached once, or a shim spawn and a call into a daemon that
 * attached before the operation began. */
#include "engine.h"

#include <math.h>
#include <stdlib.h>

#define GIB 1.073741824 /* GB per GiB */

/* The plugin's calls per CUDA process in each hook (domain facts). With
 * --toggle, one spawn locks and checkpoints (PAUSE_DEVICES; CHECKPOINT_DEVICES
 * then finds the process checkpointed and only looks its thread up), and one
 * restores and unlocks. */
struct hook_ops {
	enum sim_call ops[3];
	size_t n;
};
static const struct hook_ops plain[SIM_NHOOKS] = {
	{ { SIM_GET_TID, SIM_GET_STATE, SIM_LOCK }, 3 },
	{ { SIM_GET_TID, SIM_CKPT }, 2 },
	{ { SIM_GET_TID, SIM_RESTORE, SIM_UNLOCK }, 3 },
};
static const struct hook_ops toggled[SIM_NHOOKS] = {
	{ { SIM_GET_TID, SIM_GET_STATE, SIM_TOGGLE }, 3 },
	{ { SIM_GET_TID }, 1 },
	{ { SIM_GET_TID, SIM_TOGGLE }, 2 },
};
/* coalesced: the dump as it is; restore and unlock as one call (nvsnap). */
static const struct hook_ops coalesced[SIM_NHOOKS] = {
	{ { SIM_GET_TID, SIM_GET_STATE, SIM_LOCK }, 3 },
	{ { SIM_GET_TID, SIM_CKPT }, 2 },
	{ { SIM_GET_TID, SIM_RESUME_CALL }, 2 },
};

static const struct hook_ops *ops_of(const struct sim_strategy *s, enum sim_hook h)
{
	return &(s->toggle ? toggled : s->coalesced ? coalesced : plain)[h];
}

struct sim {
	const struct sim_params *p;
	const struct sim_workload *w;
	const struct sim_strategy *s;
	uint64_t seed, rng;
	uint64_t call; /* which call this is: process, hook, kind (call_key) */
	unsigned long spawns, attaches;
	bool attached;    /* api: the worker of this dump or restore has attached */
	bool canary_done; /* canary: this hook's canary was cross-checked */
	struct sim_result *acct; /* where calls are summed; NULL: not summed */
};

/* The attach of one call, from a generator of its own seeded by the run's
 * seed and the call (process, hook, kind): a strategy that drops a call
 * leaves every other call's draw as it was, so two strategies differ by
 * what they do, not by luck (common random numbers). */
static double attach(struct sim *m)
{
	uint64_t z = m->seed + (m->call + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64's finaliser */
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return sim_attach_draw(m->p, m->w->visible_gpus, &z);
}

static uint64_t call_key(size_t proc, enum sim_hook h, enum sim_call c)
{
	return ((uint64_t)proc * SIM_NHOOKS + h) * SIM_NCALLS + c;
}

/* A query for a pid without CUDA state: the tool fails it without attaching
 * to the GPUs. criu PR #3076's description times it on an H200 node, whatever
 * GPUs the node shows: about 26 ms per pid and call, the spawn included, not
 * the whole driver initialisation the per-GPU term of an attach stands for. */
static double nocuda_s(const struct sim *m)
{
	return m->p->nocuda_query_s;
}

/* How many calls of other runs a daemon call waits for: with one queue for
 * all R runs in step, each call waits for the R-1 others' (queue); with
 * requests for different processes side by side, none. */
static double queued(const struct sim *m)
{
	bool daemon = m->s->backend == SIM_BACKEND_SERVE || m->s->backend == SIM_BACKEND_PLUGIN;

	return daemon && m->s->queue && m->s->runs > 1 ? (double)m->s->runs : 1.0;
}

/* One driver call by the strategy's backend. */
static double driver_call(struct sim *m, const struct sim_proc *pr)
{
	const struct sim_params *p = m->p;
	double t = 0;

	switch (m->s->backend) {
	case SIM_BACKEND_API:
		if (!m->attached) { /* the worker, once per CRIU run */
			m->attached = true;
			m->attaches++;
			t = attach(m) + p->spawn_overhead_s;
		}
		return t + p->api_query_s;
	case SIM_BACKEND_SERVE: /* a shim spawn asks the attached daemon */
		m->spawns++;
		return p->spawn_overhead_s + p->api_query_s * queued(m);
	case SIM_BACKEND_PLUGIN: /* the plugin asks the daemon itself; of a tree's
				  * processes without CUDA, in batches */
		return (pr->gpu ? p->api_query_s : p->plugin_query_s) * queued(m);
	default:
		m->spawns++;
		if (!pr->gpu)
			return nocuda_s(m) + p->spawn_overhead_s;
		m->attaches++;
		return attach(m) + p->spawn_overhead_s;
	}
}

/* What an action takes in the driver beyond the call: the copy of a
 * checkpoint, restore, toggle or resume, and the lock's wait (lock_s) of a
 * lock or of the toggle that locks in PAUSE_DEVICES. */
static double action_s(const struct sim *m, const struct sim_proc *pr, enum sim_hook h,
		       enum sim_call c)
{
	bool moves = c == SIM_CKPT || c == SIM_RESTORE || c == SIM_TOGGLE || c == SIM_RESUME_CALL;
	bool locks = c == SIM_LOCK || (c == SIM_TOGGLE && h == SIM_PAUSE);

	return ((moves ? pr->gpu_gib * GIB / m->p->gpu_copy_gbps : 0) +
		(locks ? m->p->lock_s : 0)) * queued(m);
}

/* How the strategy finds a restore tid. */
static double get_tid(struct sim *m, const struct sim_proc *pr)
{
	const struct sim_params *p = m->p;

	switch (m->s->tid) {
	case SIM_TID_SCAN:
		/* No candidate in a CPU-only process: the scan falls back to the tool. */
		if (!pr->gpu || sim_rng_uniform(&m->rng) <= p->scan_fallback_rate)
			return p->scan_s + driver_call(m, pr);
		return p->scan_s;
	case SIM_TID_CANARY:
		if (pr->gpu && m->canary_done)
			return p->scan_s;
		m->canary_done = m->canary_done || pr->gpu;
		return p->scan_s + driver_call(m, pr);
	default:
		return driver_call(m, pr);
	}
}

static double call_cost(struct sim *m, const struct sim_proc *pr, enum sim_hook h,
			enum sim_call c)
{
	return c == SIM_GET_TID ? get_tid(m, pr) : driver_call(m, pr) + action_s(m, pr, h, c);
}

/* The calls of process i in hook h, summed and accounted per kind: which
 * -1 every call, 0 the queries only, else only the action of that kind (a
 * sim_call from SIM_LOCK on); tid_only: the get-restore-tid calls only. */
static double calls(struct sim *m, enum sim_hook h, size_t i, bool tid_only, int which)
{
	const struct hook_ops *ho = ops_of(m->s, h);
	const struct sim_proc *pr = &m->w->procs[i];
	double t = 0;

	/* A process without CUDA only answers get-restore-tid (it fails). */
	for (size_t o = 0; o < ho->n && (pr->gpu || o == 0); o++) {
		enum sim_call c = ho->ops[o];
		bool action = c != SIM_GET_TID && c != SIM_GET_STATE;
		double cost;

		if ((tid_only && c != SIM_GET_TID) || (which >= 0 && action != (which > 0)) ||
		    (which > 1 && c != (enum sim_call)which))
			continue;
		m->call = call_key(i, h, c);
		cost = call_cost(m, pr, h, c);
		if (m->acct)
			m->acct->hooks[h][c] += cost;
		t += cost;
	}
	return t;
}

/* Lay units (seconds each) on k slots in order, each on the least loaded;
 * the wall time. */
static double on_slots(const double *unit, size_t n, unsigned k)
{
	double slot[64] = { 0 }, end = 0;

	k = k < 1 ? 1 : k > 64 ? 64 : k;
	for (size_t i = 0; i < n; i++) {
		unsigned best = 0;

		for (unsigned j = 1; j < k; j++)
			if (slot[j] < slot[best])
				best = j;
		slot[best] += unit[i];
		end = slot[best] > end ? slot[best] : end;
	}
	return end;
}

/* batch:K (criu PR #3105): the plugin is called per pid as today and makes
 * its queries then; at the end of the hook it has every pid and runs the
 * actions, one kind after another: locks and unlocks all at once (processes
 * bound by NCCL must all be locked before any waits), the others K at a
 * time, the launch job's processes one after another as one unit. */
static double phase_batch(struct sim *m, enum sim_hook h, bool tid_only)
{
	const struct hook_ops *ho = ops_of(m->s, h);
	double t = 0, *unit = calloc(m->w->n + 1, sizeof(*unit));

	for (size_t i = 0; i < m->w->n; i++)
		t += calls(m, h, i, tid_only, 0);
	for (size_t o = 0; unit && !tid_only && o < ho->n; o++) {
		enum sim_call c = ho->ops[o];
		bool all = c == SIM_LOCK || c == SIM_UNLOCK;
		double job = 0, wave = 0;
		size_t n = 1;

		if (c == SIM_GET_TID || c == SIM_GET_STATE)
			continue;
		for (size_t i = 0; i < m->w->n; i++) {
			double u = m->w->procs[i].gpu ? calls(m, h, i, false, (int)c) : 0;

			if (all)
				wave = u > wave ? u : wave;
			else if (m->w->procs[i].job)
				job += u;
			else if (m->w->procs[i].gpu)
				unit[n++] = u;
		}
		unit[0] = job; /* the longest unit first */
		t += all ? wave : on_slots(unit, n, m->s->batch);
	}
	free(unit);
	return t;
}

/* How many processes a hook serves at once. rtid's plugin as built
 * (src/plugin, doc/plugin.md) locks one task after another in PAUSE_DEVICES
 * (each lock under CRIU's --timeout, in CRIU's order) and runs the
 * checkpoints, and the restores with their unlocks, K at a time. */
static unsigned slots(const struct sim_strategy *s, enum sim_hook h)
{
	if (s->backend == SIM_BACKEND_PLUGIN && h == SIM_PAUSE)
		return 1;
	return s->k ? s->k : 1;
}

/* One hook over all processes on K slots (batch:K: phase_batch); returns
 * its wall time. tid_only: just the get-tid calls. */
static double phase(struct sim *m, enum sim_hook h, bool tid_only)
{
	double *unit, end;

	m->canary_done = false;
	if (m->s->batch)
		return phase_batch(m, h, tid_only);
	unit = calloc(m->w->n ? m->w->n : 1, sizeof(*unit));
	for (size_t i = 0; unit && i < m->w->n; i++)
		unit[i] = calls(m, h, i, tid_only, -1);
	end = unit ? on_slots(unit, m->w->n, slots(m->s, h)) : 0;
	free(unit);
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

	if (m->s->tid == SIM_TID_SCAN)
		ok = (1 - p->p_drift * (1 - pow(1 - p->p_wrong_given_drift, g))) *
		     pow(1 - p->p_nvml_lookalike, c) * pow(1 - p->p_independent, g);
	else if (m->s->tid == SIM_TID_CANARY)
		ok = pow(1 - p->p_nvml_lookalike, c) * pow(1 - p->p_independent, g > 1 ? g - 1 : 0);
	else
		ok = 1;
	return (1 - ok) * 1e6;
}

void sim_run(const struct sim_params *p, const struct sim_workload *w,
	     const struct sim_strategy *s, uint64_t seed, struct sim_result *out)
{
	struct sim_result r = { 0 };
	struct sim m = { .p = p, .w = w, .s = s, .seed = seed, .acct = &r };
	double pause, ckpt;

	m.rng = seed ? seed : 0x9e3779b97f4a7c15ULL; /* xorshift must not start at 0 */
	m.call = UINT64_MAX - 1;
	if (s->backend == SIM_BACKEND_SERVE || s->backend == SIM_BACKEND_PLUGIN) /* before the dump */
		r.serve_attach_s = attach(&m) + p->spawn_overhead_s;
	pause = phase(&m, SIM_PAUSE, false);
	ckpt = phase(&m, SIM_CHECKPOINT, false);
	r.dump_plugin_s = pause + ckpt;
	r.dump_s = p->criu_base_dump_s + host_s(&m) + r.dump_plugin_s;
	m.attached = false; /* restore is another CRIU run: another worker */
	r.restore_plugin_s = phase(&m, SIM_RESUME, false);
	r.restore_s = p->criu_base_restore_s + host_s(&m) + r.restore_plugin_s;
	/* The restore-tid phase alone, as a resolver batch would run it. */
	{
		unsigned long spawns = m.spawns, attaches = m.attaches;

		m.attached = false;
		m.acct = NULL;
		r.restore_tid_s = phase(&m, SIM_RESUME, true);
		m.spawns = spawns;
		m.attaches = attaches;
	}
	r.spawns = m.spawns;
	r.attaches = m.attaches;
	r.dump_timed_out = r.dump_s > p->dump_timeout_s;
	r.restore_timed_out = r.restore_s > p->restore_timeout_s;
	r.wrong_tid_per_million = risk(&m);
	*out = r;
}
