#ifndef RTID_SIM_PLOT_H
#define RTID_SIM_PLOT_H

#include <stddef.h>

struct sim_series {
	const char *name;
	double y[16];
	double part[16]; /* the share of y spent in the plugin (the right panel) */
};

struct sim_plot {
	const char *title;    /* first line: what is plotted */
	const char *subtitle; /* second line: the workload and the seeds */
	const double *xs;     /* nx values, ascending, the last the largest */
	size_t nx;
	const struct sim_series *s;
	size_t ns;            /* at most SIM_PLOT_STYLES for distinct styles */
	double limit_s;       /* a horizontal line labelled as the timeout; 0: none */
};

#define SIM_PLOT_STYLES 9

/* Write p as a self-contained SVG: two panels (the whole y, and the part),
 * one colour, dash pattern and marker per series, round ticks, the limit
 * drawn and labelled, a legend. The same p gives the same bytes. 0 or -1. */
int sim_plot_svg(const char *path, const struct sim_plot *p);

/* A round step for about n ticks up to max (1, 2 or 5 times a power of ten). */
double sim_plot_step(double max, int n);

#endif
