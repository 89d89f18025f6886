/* The simulator's plot, drawn by gnuplot: restore time, dump time and the
 * risk side per strategy, on log axes, as SVG or PNG by the file's name. */
#ifndef RTID_SIM_PLOT_H
#define RTID_SIM_PLOT_H

#include <stddef.h>

#define SIM_PLOT_MAX_X 16
#define SIM_PLOT_STYLES 16

struct sim_series {
	const char *name;
	double restore[SIM_PLOT_MAX_X], dump[SIM_PLOT_MAX_X]; /* seconds */
	double wrong[SIM_PLOT_MAX_X]; /* wrong-thread resumes per million restores */
};

struct sim_plot {
	const char *title;    /* first line: what is plotted */
	const char *subtitle; /* second line: the workload and the seeds */
	const double *xs;     /* nx values, ascending (GPU processes); nx == 1: one
			       * workload, drawn as one bar per strategy */
	size_t nx;
	const struct sim_series *s;
	size_t ns; /* at most SIM_PLOT_STYLES */
	double restore_limit_s, dump_limit_s; /* drawn and labelled; 0: none */
};

/* The gnuplot terminal the file's extension asks for ("svg" for .svg, "png"
 * for .png, either case), or NULL for any other name. */
const char *sim_plot_format(const char *path);

/* For each series, the index of an earlier series whose restore and dump
 * times are within 1 % of its own at every x (they draw the same line), or
 * -1; with[] has p->ns entries. */
void sim_plot_coincide(const struct sim_plot *p, int *with);

/* Draw p into path with gnuplot ($RTID_GNUPLOT, else gnuplot on PATH): three
 * panels (restore, dump, wrong-thread risk), log axes, a colour, dash
 * pattern and marker per series, the legend naming the series that
 * coincide, the timeouts drawn and labelled. The script and its data go to
 * gnuplot's stdin: no file but path is written. Returns 0, or -EINVAL (the
 * extension), -ENOENT (no gnuplot) or -EIO (gnuplot failed), with why. */
int sim_plot_write(const char *path, const struct sim_plot *p, char *why, size_t len);

#endif
