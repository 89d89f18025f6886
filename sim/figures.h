/* What the table and the plot show: means over seeds, and the plots' data. */
#ifndef RTID_SIM_FIGURES_H
#define RTID_SIM_FIGURES_H

#include <stddef.h>

#include "engine.h"

/* The mean of runs runs of w under s, seeds seed..seed+runs-1 (the counts,
 * which do not depend on the seed, from the last). */
void sim_mean_run(const struct sim_params *p, const struct sim_workload *w,
		  const struct sim_strategy *s, unsigned long seed, unsigned runs,
		  struct sim_result *out);

/* Plot restore, dump and risk against the number of GPU processes of a
 * synthetic workload (gpu_gib of GPU memory each), one line per strategy,
 * into path (.svg or .png). 0, or a negative errno with why. */
int sim_figure_sweep(const struct sim_params *p, const char *const *strategies, size_t ns,
		     double gpu_gib, unsigned long seed, unsigned runs, const char *path,
		     char *why, size_t len);

/* Plot one workload: a bar per strategy in each panel, into path. */
int sim_figure_workload(const struct sim_params *p, const struct sim_workload *w,
			const char *const *strategies, size_t ns, unsigned long seed,
			unsigned runs, const char *path, char *why, size_t len);

#endif
