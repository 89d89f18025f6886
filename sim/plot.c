/* The simulator's plot: restore time against the number of GPU processes, one
 * line per strategy, as a self-contained SVG (same seed, same bytes). */
#include "plot.h"

#include <stdio.h>

static const char *const colours[] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
				       "#8c564b", "#e377c2", "#7f7f7f", "#17becf" };
#define NCOLOURS (sizeof(colours) / sizeof(colours[0]))

/* One polyline of ys over xs in the plot area [x0, x1] x [y0, y1]. */
static void line(FILE *f, double x0, double x1, double y0, double y1, const double *xs,
		 const double *ys, size_t nx, double xmax, double ymax, const char *colour,
		 const char *extra)
{
	fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\"%s points=\"", colour,
		extra);
	for (size_t j = 0; j < nx; j++)
		fprintf(f, "%.1f,%.1f ", x0 + (x1 - x0) * xs[j] / xmax,
			y1 - (y1 - y0) * ys[j] / ymax);
	fprintf(f, "\"/>\n");
}

int sim_plot_svg(const char *path, const double *xs, size_t nx, const struct sim_series *s,
		 size_t ns)
{
	const double W = 720, H = 440, L = 70, R = 170, T = 30, B = 50;
	double xmax = xs[nx - 1], ymax = 1;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (size_t i = 0; i < ns; i++)
		for (size_t j = 0; j < nx; j++)
			ymax = s[i].y[j] > ymax ? s[i].y[j] : ymax;
	ymax *= 1.05;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%.0f\" y=\"18\">rtid-sim: restore time vs GPU processes (means over seeds)</text>\n", L);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L,
		H - B, W - R, H - B);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T,
		L, H - B);
	for (int t = 0; t <= 5; t++) {
		double y = H - B - (H - T - B) * t / 5.0, x = L + (W - L - R) * t / 5.0;

		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.0f s</text>\n", L - 6,
			y + 4, ymax * t / 5.0);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.0f</text>\n", x,
			H - B + 16, xmax * t / 5.0);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">GPU processes</text>\n",
		(W - R + L) / 2, H - 12);
	for (size_t i = 0; i < ns; i++) {
		line(f, L, W - R, T, H - B, xs, s[i].y, nx, xmax, ymax, colours[i % NCOLOURS], "");
		line(f, L, W - R, T, H - B, xs, s[i].part, nx, xmax, ymax, colours[i % NCOLOURS],
		     " stroke-dasharray=\"4 3\"");
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n", W - R + 10,
			T + 18.0 * (double)i + 10, colours[i % NCOLOURS], s[i].name);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">dashed: in the plugin</text>\n", W - R + 10,
		T + 18.0 * (double)ns + 18);
	fprintf(f, "</svg>\n");
	return fclose(f) == 0 ? 0 : -1;
}
