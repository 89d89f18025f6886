/* The simulator's plot: restore time against the number of GPU processes, one
 * line per strategy, as a self-contained SVG (same input, same bytes). Each
 * strategy has its own colour, dash pattern and marker, so that two strategies
 * with the same times (scan and canary) both stay visible. */
#include "plot.h"

#include <math.h>
#include <stdio.h>

/* Colours apart for the common colour blindnesses (Okabe-Ito, then grey
 * shades), dashes and markers apart again where colours are confused. */
static const struct style {
	const char *colour, *dash;
	char shape; /* o circle, s square, t triangle, d diamond, x cross, + plus */
	int open;   /* drawn hollow */
} styles[SIM_PLOT_STYLES] = {
	{ "#000000", "", 'o', 0 },      { "#e69f00", "8 4", 's', 0 },
	{ "#56b4e9", "2 3", 't', 0 },   { "#009e73", "", 'd', 0 },
	{ "#d55e00", "10 3 2 3", 'o', 1 }, { "#0072b2", "4 2", 's', 1 },
	{ "#cc79a7", "5 5", 'x', 0 },      { "#7f7f7f", "6 3", 't', 1 },
	{ "#8c510a", "1 2", '+', 0 },
};

double sim_plot_step(double max, int n)
{
	double raw = max / n, mag, f;

	if (!(raw > 0))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return mag * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10);
}

struct frame {
	double x0, x1, y0, y1, xmax, ymax; /* the panel in pixels, the axes' ends */
};

static double px(const struct frame *f, double x)
{
	return f->x0 + (f->x1 - f->x0) * x / f->xmax;
}

static double py(const struct frame *f, double y)
{
	return f->y1 - (f->y1 - f->y0) * y / f->ymax;
}

static void marker(FILE *o, const struct style *st, double x, double y)
{
	const char *c = st->colour, *fill = st->open ? "white" : c;

	if (st->shape == 'o')
		fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\"/>\n", x,
			y, fill, c);
	else if (st->shape == 's')
		fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\" "
			   "stroke=\"%s\"/>\n", x - 4, y - 4, fill, c);
	else if (st->shape == 't')
		fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\" stroke=\"%s\"/>\n",
			x, y - 5, x + 5, y + 4, x - 5, y + 4, fill, c);
	else if (st->shape == 'd')
		fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\" "
			   "stroke=\"%s\"/>\n", x, y - 5, x + 5, y, x, y + 5, x - 5, y, fill, c);
	else if (st->shape == 'x')
		fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
			   "stroke-width=\"2\"/>\n", x - 4, y - 4, x + 4, y + 4, x - 4, y + 4, x + 4,
			y - 4, c);
	else
		fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
			   "stroke-width=\"2\"/>\n", x - 5, y, x + 5, y, x, y - 5, x, y + 5, c);
}

static void series(FILE *o, const struct frame *f, const double *xs, const double *ys,
		   size_t nx, const struct style *st)
{
	fprintf(o, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\"", st->colour);
	if (st->dash[0])
		fprintf(o, " stroke-dasharray=\"%s\"", st->dash);
	fprintf(o, " points=\"");
	for (size_t j = 0; j < nx; j++)
		fprintf(o, "%.1f,%.1f ", px(f, xs[j]), py(f, ys[j]));
	fprintf(o, "\"/>\n");
	for (size_t j = 0; j < nx; j++)
		marker(o, st, px(f, xs[j]), py(f, ys[j]));
}

/* Axes, grid and round ticks of one panel, its caption above it. */
static void axes(FILE *o, const struct frame *f, double xstep, double ystep, const char *caption)
{
	for (double y = 0; y <= f->ymax + ystep / 2; y += ystep) {
		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n",
			f->x0, py(f, y), f->x1, py(f, y));
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", f->x0 - 6,
			py(f, y) + 4, y);
	}
	for (double x = 0; x <= f->xmax + xstep / 2; x += xstep)
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n", px(f, x),
			f->y1 + 16, x);
	fprintf(o, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"black\"/>\n", f->x0,
		f->y0, f->y1, f->x1);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n",
		(f->x0 + f->x1) / 2, f->y0 - 8, caption);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">GPU processes</text>\n",
		(f->x0 + f->x1) / 2, f->y1 + 34);
}

static void limit(FILE *o, const struct frame *f, double s)
{
	if (s <= 0)
		return;
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b00000\" "
		   "stroke-width=\"1.5\" stroke-dasharray=\"12 4\"/>\n", f->x0, py(f, s), f->x1,
		py(f, s));
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#b00000\">timeout %.0f s</text>\n",
		f->x0 + 6, py(f, s) - 5, s);
}

/* Each series' name at its last point, right of the panel, moved apart
 * where lines end together (scan, canary and toggle do) so every name reads;
 * a name moved from its point gets a thin leader to it. */
static void ends(FILE *o, const struct frame *f, const struct sim_plot *p, int part)
{
	size_t order[16], n = p->ns < 16 ? p->ns : 16;
	double at[16], last = -1e9;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = 1; i < n; i++) /* by end value, highest first; stable */
		for (size_t j = i; j > 0; j--) {
			const struct sim_series *a = &p->s[order[j - 1]], *b = &p->s[order[j]];
			double ya = part ? a->part[p->nx - 1] : a->y[p->nx - 1];
			double yb = part ? b->part[p->nx - 1] : b->y[p->nx - 1];

			if (ya >= yb)
				break;
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t k = 0; k < n; k++) {
		const struct sim_series *s = &p->s[order[k]];
		double y = py(f, part ? s->part[p->nx - 1] : s->y[p->nx - 1]);

		at[k] = y < last + 13 ? last + 13 : y;
		last = at[k];
	}
	for (size_t k = n; k-- > 0;) /* and up again where they passed the axis */
		if (at[k] > (k + 1 < n ? at[k + 1] - 13 : f->y1 - 2))
			at[k] = k + 1 < n ? at[k + 1] - 13 : f->y1 - 2;
	for (size_t k = 0; k < n; k++) {
		const struct sim_series *s = &p->s[order[k]];
		double y = py(f, part ? s->part[p->nx - 1] : s->y[p->nx - 1]);

		fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"0.7\"/>\n",
			px(f, p->xs[p->nx - 1]) + 6, y, f->x1 + 4, at[k] - 4,
			styles[order[k] % SIM_PLOT_STYLES].colour);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", f->x1 + 6, at[k],
			styles[order[k] % SIM_PLOT_STYLES].colour, s->name);
	}
}

static void legend(FILE *o, const struct sim_plot *p, double x0, double y0)
{
	for (size_t i = 0; i < p->ns; i++) {
		const struct style *st = &styles[i % SIM_PLOT_STYLES];
		double x = x0 + 250.0 * (double)(i % 4), y = y0 + 20.0 * (double)(i / 4);
		double xs[2] = { 0, 1 }, ys[2] = { 0, 0 };
		struct frame f = { x, x + 40, y, y, 1, 1 };

		series(o, &f, xs, ys, 2, st);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 50, y + 4, p->s[i].name);
	}
}

int sim_plot_svg(const char *path, const struct sim_plot *p)
{
	const double W = 1160, H = 600, T = 70, B = 110, label = 130, gap = 60;
	double xmax = p->xs[p->nx - 1], ymax = p->limit_s, xstep, ystep;
	struct frame left, right;
	FILE *o = fopen(path, "w");

	if (!o)
		return -1;
	for (size_t i = 0; i < p->ns; i++)
		for (size_t j = 0; j < p->nx; j++)
			ymax = p->s[i].y[j] > ymax ? p->s[i].y[j] : ymax;
	xstep = sim_plot_step(xmax, 6);
	ystep = sim_plot_step(ymax, 6);
	left = (struct frame){ 70, (W - 70 - gap - 2 * label) / 2 + 70, T, H - B,
			       ceil(xmax / xstep) * xstep, ceil(ymax / ystep) * ystep };
	right = left;
	right.x0 = left.x1 + label + gap;
	right.x1 = W - label;
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
	fprintf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(o, "<text x=\"%.0f\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
		left.x0, p->title);
	fprintf(o, "<text x=\"%.0f\" y=\"38\">%s</text>\n", left.x0, p->subtitle);
	axes(o, &left, xstep, ystep, "restore time, s");
	axes(o, &right, xstep, ystep, "of which in the CUDA plugin's hooks, s");
	limit(o, &left, p->limit_s);
	for (size_t i = 0; i < p->ns; i++) {
		series(o, &left, p->xs, p->s[i].y, p->nx, &styles[i % SIM_PLOT_STYLES]);
		series(o, &right, p->xs, p->s[i].part, p->nx, &styles[i % SIM_PLOT_STYLES]);
	}
	ends(o, &left, p, 0);
	ends(o, &right, p, 1);
	legend(o, p, left.x0, H - B + 56);
	fprintf(o, "</svg>\n");
	return fclose(o) == 0 ? 0 : -1;
}
