/* Built-in workload shapes and the workload file reader.
 *
 * File format: one directive per line, '#' comments.
 *   name NAME
 *   framework NAME
 *   gpu COUNT MEM_GB HOST_GB       COUNT processes holding GPU memory (GiB)
 *   cpu COUNT HOST_GB              COUNT processes without CUDA
 *   visible-gpus N                 GPUs visible to cuda-checkpoint (default 1)
 *   launch-job COUNT               the first COUNT GPU processes are one job started
 *                                  by --launch-job: their actions run one after another */
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtid.h"
#include "tokens.h"

struct shape {
	const char *name, *framework;
	unsigned visible, job;
	struct { int count; bool gpu; double gpu_gib, host_gib; } groups[3];
};

/* Shapes from the write-up and public sightings; memory sizes are assumptions,
 * and so are the visible GPUs: one per tensor-parallel rank (TP=2: 2; the 8
 * large SGLang ranks: 8), 1 where the sighting gives no hint, and the launch
 * job: SGLang's 8 tensor-parallel ranks, started together. */
static const struct shape shapes[] = {
	{ "vllm-small", "vllm", 1, 0, { { 1, true, 8, 3 }, { 2, false, 0, 0.5 } } },
	{ "vllm-8b", "vllm", 2, 0, { { 2, true, 20, 4 }, { 1, false, 0, 1 } } },
	{ "embedding", "sentence-transformers", 1, 0, { { 1, true, 4, 2 }, { 1, false, 0, 0.5 } } },
	{ "tp2", "pytorch", 2, 0, { { 2, true, 30, 6 }, { 1, false, 0, 1 } } },
	{ "nim-24", "nim", 1, 0, { { 24, true, 3, 1.5 }, { 4, false, 0, 0.5 } } },
	{ "sglang-103", "sglang", 8, 8,
	  { { 8, true, 40, 4 }, { 95, true, 1, 1 }, { 12, false, 0, 0.5 } } },
};

const char *const sim_workload_names[] = { "vllm-small", "vllm-8b", "embedding", "tp2", "nim-24",
					   "sglang-103", NULL };

static int add(struct sim_workload *w, int count, bool gpu, double gpu_gib, double host_gib)
{
	struct sim_proc *p = realloc(w->procs, (w->n + (size_t)count) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	w->procs = p;
	for (int i = 0; i < count; i++)
		w->procs[w->n++] = (struct sim_proc){ gpu, gpu_gib, host_gib, false };
	return 0;
}

/* The first count GPU processes are the launch job's. */
static void mark_job(struct sim_workload *w, unsigned count)
{
	for (size_t i = 0; i < w->n && count; i++)
		if (w->procs[i].gpu) {
			w->procs[i].job = true;
			count--;
		}
}

int sim_workload_builtin(const char *name, struct sim_workload *out)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *s = &shapes[i];
		struct sim_workload w = { .visible_gpus = s->visible, .job = s->job };

		if (strcmp(s->name, name))
			continue;
		snprintf(w.name, sizeof(w.name), "%s", s->name);
		snprintf(w.framework, sizeof(w.framework), "%s", s->framework);
		for (int g = 0; g < 3 && s->groups[g].count; g++)
			if (add(&w, s->groups[g].count, s->groups[g].gpu, s->groups[g].gpu_gib,
				s->groups[g].host_gib) < 0) {
				sim_workload_free(&w);
				return -ENOMEM;
			}
		mark_job(&w, s->job);
		*out = w;
		return 0;
	}
	return -ENOENT;
}

int sim_workload_synthetic(size_t n, double gpu_gib, struct sim_workload *out)
{
	struct sim_workload w = { .visible_gpus = 1 };

	snprintf(w.name, sizeof(w.name), "synthetic-%zu", n);
	snprintf(w.framework, sizeof(w.framework), "synthetic");
	if (add(&w, (int)n, true, gpu_gib, 1.0) < 0)
		return -ENOMEM;
	*out = w;
	return 0;
}

/* A count field: a whole number from 1 to max, or why not in why. */
static int count_of(const char *dir, const char *what, const char *s, int max, int *out,
		    char *why, size_t len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno == ERANGE)
		return snprintf(why, len, "%s: %s '%s' is not a number", dir, what, s), -EINVAL;
	if (v < 0)
		return snprintf(why, len, "%s: %s '%s' is negative", dir, what, s), -EINVAL;
	if (v < 1)
		return snprintf(why, len, "%s: %s must be at least 1, got %ld", dir, what, v), -EINVAL;
	if (v > max)
		return snprintf(why, len, "%s: %s must be at most %d, got %ld", dir, what, max, v),
		       -EINVAL;
	*out = (int)v;
	return 0;
}

/* A size in GiB: a finite number from 0 to 1e6, or why not in why. */
static int gib(const char *dir, const char *what, const char *s, double *out, char *why,
	       size_t len)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v))
		return snprintf(why, len, "%s: %s '%s' is not a number", dir, what, s), -EINVAL;
	if (v < 0)
		return snprintf(why, len, "%s: %s '%s' is negative", dir, what, s), -EINVAL;
	if (v > 1e6)
		return snprintf(why, len, "%s: %s '%s' is over 1000000 GiB", dir, what, s), -EINVAL;
	*out = v;
	return 0;
}

static int fields(const struct toks *t, size_t want, const char *usage, char *why, size_t len)
{
	if (t->n == want)
		return 0;
	snprintf(why, len, "%s: needs %s, got %zu field%s", t->v[0].s, usage, t->n - 1,
		 t->n == 2 ? "" : "s");
	return -EINVAL;
}

/* A directive of one count (what, 1..max) into *out; *out is unchanged on error. */
static int one_count(const struct toks *t, const char *what, int max, unsigned *out, char *why,
		     size_t len)
{
	char usage[32];
	int count;

	snprintf(usage, sizeof(usage), "%s (1..%d)", what, max);
	if (fields(t, 2, usage, why, len) < 0 ||
	    count_of(t->v[0].s, what, t->v[1].s, max, &count, why, len) < 0)
		return -EINVAL;
	*out = (unsigned)count;
	return 0;
}

static int line(struct sim_workload *w, const struct toks *t, char *why, size_t len)
{
	double g = 0, h = 0;
	int count;
	const char *k = t->v[0].s;

	if (!strcmp(k, "name") || !strcmp(k, "framework")) {
		if (fields(t, 2, "NAME", why, len) < 0)
			return -EINVAL;
		snprintf(!strcmp(k, "name") ? w->name : w->framework, sizeof(w->name), "%s", t->v[1].s);
		return 0;
	}
	if (!strcmp(k, "gpu")) {
		if (fields(t, 4, "COUNT MEM_GB HOST_GB", why, len) < 0 ||
		    count_of(k, "count", t->v[1].s, 10000, &count, why, len) < 0 ||
		    gib(k, "MEM_GB", t->v[2].s, &g, why, len) < 0 ||
		    gib(k, "HOST_GB", t->v[3].s, &h, why, len) < 0)
			return -EINVAL;
		return add(w, count, true, g, h);
	}
	if (!strcmp(k, "cpu")) {
		if (fields(t, 3, "COUNT HOST_GB", why, len) < 0 ||
		    count_of(k, "count", t->v[1].s, 10000, &count, why, len) < 0 ||
		    gib(k, "HOST_GB", t->v[2].s, &h, why, len) < 0)
			return -EINVAL;
		return add(w, count, false, 0, h);
	}
	if (!strcmp(k, "visible-gpus"))
		return one_count(t, "N", 1024, &w->visible_gpus, why, len);
	if (!strcmp(k, "launch-job"))
		return one_count(t, "COUNT", 10000, &w->job, why, len);
	snprintf(why, len, "unknown directive '%s': expected name, framework, gpu, cpu, "
		 "visible-gpus or launch-job", k);
	return -EINVAL;
}

int sim_workload_load(const char *path, struct sim_workload *out, char *err, size_t errlen)
{
	struct sim_workload w = { .visible_gpus = 1 };
	char buf[1024], why[256];
	int lineno = 0, r = 0;
	struct toks t;
	FILE *f = fopen(path, "re");

	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	snprintf(w.name, sizeof(w.name), "%s", path);
	while (r == 0 && fgets(buf, sizeof(buf), f)) {
		lineno++;
		buf[strcspn(buf, "\n")] = '\0';
		r = tok_split(buf, &t, why, sizeof(why));
		if (r == 0 && t.n > 0)
			r = line(&w, &t, why, sizeof(why));
		if (r < 0)
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
	}
	fclose(f);
	if (r == 0 && w.job > sim_workload_gpus(&w)) {
		snprintf(err, errlen, "%s: launch-job %u: more than the %zu GPU processes", path,
			 w.job, sim_workload_gpus(&w));
		r = -EINVAL;
	}
	mark_job(&w, w.job);
	if (r == 0 && w.n == 0) {
		snprintf(err, errlen, "%s: no processes ('gpu' or 'cpu' lines)", path);
		r = -EINVAL;
	}
	if (r < 0) {
		sim_workload_free(&w);
		return r;
	}
	*out = w;
	return 0;
}

void sim_workload_free(struct sim_workload *w)
{
	free(w->procs);
	w->procs = NULL;
	w->n = 0;
}

size_t sim_workload_gpus(const struct sim_workload *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->procs[i].gpu;
	return n;
}
