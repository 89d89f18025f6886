/* Measured figures from real drivers: the GPU kit's reports kept under
 * evidence/ (doc/hardware-validation.md) replace the attach time and the
 * driver-API query cost that otherwise come from public figures. */
#include "evidence.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 256

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One report's figures, when it passed on a real driver and has them all. */
static int read_report(const char *path, double *tool, double *api_batch, int *procs)
{
	json_t *r = json_load_file(path, 0, NULL), *t, *b, *ps;
	const char *verdict, *mock;
	int ok = -1;

	if (!r)
		return -1;
	verdict = json_string_value(json_object_get(r, "verdict"));
	mock = json_string_value(json_object_get(json_object_get(r, "machine"), "mock"));
	t = json_object_get(r, "tool_per_spawn_s");
	b = json_object_get(r, "api_batch_s");
	ps = json_object_get(r, "processes");
	/* A run against the mocks is no evidence of a driver. */
	if (verdict && !strcmp(verdict, "pass") && (!mock || !*mock) && json_is_number(t) &&
	    json_is_number(b) && json_array_size(ps) > 0) {
		*tool = json_number_value(t);
		*api_batch = json_number_value(b);
		*procs = (int)json_array_size(ps);
		ok = 0;
	}
	json_decref(r);
	return ok;
}

int sim_evidence_load(const char *dir, struct sim_params *p, char *source, size_t len)
{
	double tool[MAX_RUNS], query[MAX_RUNS];
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < MAX_RUNS) {
		char path[4096];
		double t, batch;
		int procs;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/report.json", dir, de->d_name);
		if (read_report(path, &t, &batch, &procs) < 0)
			continue;
		tool[n] = t;
		query[n++] = batch > t ? (batch - t) / procs : 0;
	}
	closedir(d);
	if (n == 0)
		return -ENODATA;
	{
		struct sim_params q = *p;
		double spawn = q.spawn_overhead_s;

		q.attach_s = median_of(tool, n) > spawn ? median_of(tool, n) - spawn : 0;
		q.api_query_s = median_of(query, n);
		*p = q;
	}
	snprintf(source, len, "measured on real drivers: the median of %zu passing GPU kit "
		 "report%s in %s", n, n == 1 ? "" : "s", dir);
	return (int)n;
}
