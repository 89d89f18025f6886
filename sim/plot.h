#ifndef RTID_SIM_PLOT_H
#define RTID_SIM_PLOT_H

#include <stddef.h>

struct sim_series {
	const char *name;
	double y[16];
	double part[16]; /* the share of y drawn dashed (the plugin's time) */
};

/* Write an SVG line chart, y solid and part dashed per series; 0 or -1.
 * nx <= 16, xs ascending. */
int sim_plot_svg(const char *path, const double *xs, size_t nx, const struct sim_series *s,
		 size_t ns);

#endif
