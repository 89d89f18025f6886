/* The figures behind the table and the plots: means over seeds (one attach
 * draw spans 0.4 to 7 s, so one run says little), and the series a plot
 * draws, for a sweep of workload sizes or for one workload. */
#include "figures.h"

#include <errno.h>
#include <stdio.h>

#include "plot.h"

void sim_mean_run(const struct sim_params *p, const struct sim_workload *w,
		  const struct sim_strategy *s, unsigned long seed, unsigned runs,
		  struct sim_result *out)
{
	struct sim_result m = { 0 }, r = { 0 };

	for (unsigned long i = 0; i < runs; i++) {
		sim_run(p, w, s, seed + i, &r);
		m.dump_s += r.dump_s / runs;
		m.restore_s += r.restore_s / runs;
		m.restore_tid_s += r.restore_tid_s / runs;
		m.dump_plugin_s += r.dump_plugin_s / runs;
		m.restore_plugin_s += r.restore_plugin_s / runs;
	}
	m.spawns = r.spawns; /* the same in every run */
	m.attaches = r.attaches;
	m.wrong_tid_per_million = r.wrong_tid_per_million;
	m.dump_timed_out = m.dump_s > p->dump_timeout_s;
	m.restore_timed_out = m.restore_s > p->restore_timeout_s;
	*out = m;
}

static int parse_all(const char *const *strategies, size_t ns, struct sim_strategy *st,
		     char *why, size_t len)
{
	if (ns == 0 || ns > SIM_PLOT_STYLES)
		return snprintf(why, len, "a plot takes 1 to %d strategies", SIM_PLOT_STYLES),
		       -EINVAL;
	for (size_t i = 0; i < ns; i++) {
		char w[160];

		if (sim_strategy_parse_why(strategies[i], &st[i], w, sizeof(w)) < 0)
			return snprintf(why, len, "strategy '%s': %s", strategies[i], w), -EINVAL;
	}
	return 0;
}

int sim_figure_sweep(const struct sim_params *p, const char *const *strategies, size_t ns,
		     double gpu_gib, unsigned long seed, unsigned runs, const char *path,
		     char *why, size_t len)
{
	static const double xs[] = { 1, 2, 4, 8, 16, 32, 64, 103 };
	struct sim_series series[SIM_PLOT_STYLES] = { { 0 } };
	struct sim_strategy st[SIM_PLOT_STYLES];
	char sub[240];
	int e = parse_all(strategies, ns, st, why, len);

	for (size_t i = 0; e == 0 && i < ns; i++) {
		series[i].name = strategies[i];
		for (size_t j = 0; j < sizeof(xs) / sizeof(xs[0]); j++) {
			struct sim_workload w;
			struct sim_result r;

			if (sim_workload_synthetic((size_t)xs[j], gpu_gib, &w) < 0)
				return snprintf(why, len, "out of memory"), -ENOMEM;
			sim_mean_run(p, &w, &st[i], seed, runs, &r);
			series[i].restore[j] = r.restore_s;
			series[i].dump[j] = r.dump_s;
			series[i].wrong[j] = r.wrong_tid_per_million;
			sim_workload_free(&w);
		}
	}
	if (e < 0)
		return e;
	snprintf(sub, sizeof(sub), "workload: synthetic, N GPU processes of %g GiB GPU and 1 GiB "
		 "host memory each, 1 GPU visible; means over seeds %lu..%lu", gpu_gib, seed,
		 seed + runs - 1);
	struct sim_plot pl = { "rtid-sim: CRIU restore and dump time by the number of GPU "
			       "processes, per strategy", sub, xs, sizeof(xs) / sizeof(xs[0]),
			       series, ns, p->restore_timeout_s, p->dump_timeout_s };
	return sim_plot_write(path, &pl, why, len);
}

int sim_figure_workload(const struct sim_params *p, const struct sim_workload *w,
			const char *const *strategies, size_t ns, unsigned long seed,
			unsigned runs, const char *path, char *why, size_t len)
{
	struct sim_series series[SIM_PLOT_STYLES] = { { 0 } };
	struct sim_strategy st[SIM_PLOT_STYLES];
	double x = (double)sim_workload_gpus(w);
	char title[200], sub[240];
	int e = parse_all(strategies, ns, st, why, len);

	if (e < 0)
		return e;
	for (size_t i = 0; i < ns; i++) {
		struct sim_result r;

		sim_mean_run(p, w, &st[i], seed, runs, &r);
		series[i].name = strategies[i];
		series[i].restore[0] = r.restore_s;
		series[i].dump[0] = r.dump_s;
		series[i].wrong[0] = r.wrong_tid_per_million;
	}
	snprintf(title, sizeof(title), "rtid-sim: CRIU restore and dump time of %s, per strategy",
		 w->name);
	snprintf(sub, sizeof(sub), "workload: %s, %zu GPU processes of %zu, %u GPU%s visible; "
		 "means over seeds %lu..%lu", w->name, sim_workload_gpus(w), w->n, w->visible_gpus,
		 w->visible_gpus == 1 ? "" : "s", seed, seed + runs - 1);
	struct sim_plot pl = { title, sub, &x, 1, series, ns, p->restore_timeout_s,
			       p->dump_timeout_s };
	return sim_plot_write(path, &pl, why, len);
}
