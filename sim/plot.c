/* The simulator's plot, drawn by gnuplot (packaged everywhere, scriptable
 * from C through a pipe, SVG and PNG from one script). The script and its
 * data (gnuplot's inline data blocks) go to gnuplot's stdin, so no temporary
 * file is made. Each strategy has its own colour, dash pattern and marker,
 * so that two with the same times both stay visible, and the legend says
 * which coincide. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Colours apart for the common colour blindnesses (Okabe-Ito, then Tol's),
 * and dashes and markers apart again where colours are confused. */
static const struct style {
	const char *colour, *dash;
	int point; /* gnuplot's point types: 1 +, 2 x, 4-5 squares, 6-7 circles, ... */
} styles[SIM_PLOT_STYLES] = {
	{ "#000000", "1", 7 },          { "#e69f00", "(8,4)", 5 },      { "#56b4e9", "(2,3)", 9 },
	{ "#009e73", "1", 13 },         { "#d55e00", "(10,3,2,3)", 6 }, { "#0072b2", "(4,2)", 4 },
	{ "#cc79a7", "(5,5)", 2 },      { "#7f7f7f", "(6,3)", 8 },      { "#8c510a", "(1,2)", 1 },
	{ "#332288", "(12,4)", 3 },     { "#117733", "(3,3,8,3)", 10 }, { "#882255", "(6,2,2,2)", 11 },
	{ "#44aa99", "(2,6)", 12 },     { "#999933", "(9,3)", 14 },     { "#aa4499", "(4,4,1,4)", 15 },
	{ "#e31a1c", "(7,2,7,6)", 3 },
};

const char *sim_plot_format(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return NULL;
	if (!strcasecmp(dot, ".svg"))
		return "svg";
	if (!strcasecmp(dot, ".png"))
		return "png";
	return NULL;
}

static int same(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= 0.01 * m;
}

void sim_plot_coincide(const struct sim_plot *p, int *with)
{
	for (size_t i = 0; i < p->ns; i++) {
		with[i] = -1;
		for (size_t j = 0; j < i && with[i] < 0; j++) {
			size_t x = 0;

			while (x < p->nx && same(p->s[i].restore[x], p->s[j].restore[x]) &&
			       same(p->s[i].dump[x], p->s[j].dump[x]) &&
			       same(p->s[i].wrong[x], p->s[j].wrong[x]))
				x++;
			if (x == p->nx)
				with[i] = (int)j;
		}
	}
}

/* The risk axis's floor: a decade under the smallest risk drawn (a log axis
 * has no 0; the panel names the strategies at 0), 1 when none is. */
static double risk_floor(const struct sim_plot *p)
{
	double lo = 0;

	for (size_t i = 0; i < p->ns; i++)
		for (size_t x = 0; x < p->nx; x++)
			if (p->s[i].wrong[x] > 0 && (lo == 0 || p->s[i].wrong[x] < lo))
				lo = p->s[i].wrong[x];
	return lo > 0 ? pow(10, floor(log10(lo))) : 1;
}

/* A gnuplot single-quoted string: only ' needs doubling. */
static void quoted(FILE *o, const char *s)
{
	fputc('\'', o);
	for (; *s; s++)
		fputs(*s == '\'' ? "''" : (char[]){ *s, 0 }, o);
	fputc('\'', o);
}

/* $D: one row per x: x, then restore, dump and risk per series (a risk of 0
 * as NaN: a log axis has no 0, and the panel says which are 0). */
static void data(FILE *o, const struct sim_plot *p)
{
	fputs("$D << EOD\n", o);
	for (size_t x = 0; x < p->nx; x++) {
		fprintf(o, "%g", p->xs[x]);
		for (size_t i = 0; i < p->ns; i++) {
			fprintf(o, "\t%.6g\t%.6g\t", p->s[i].restore[x], p->s[i].dump[x]);
			if (p->s[i].wrong[x] > 0)
				fprintf(o, "%.6g", p->s[i].wrong[x]);
			else
				fputs("NaN", o);
		}
		fputc('\n', o);
	}
	fputs("EOD\n", o);
}

static bool any_risk(const struct sim_plot *p, size_t i)
{
	for (size_t x = 0; x < p->nx; x++)
		if (p->s[i].wrong[x] > 0)
			return true;
	return false;
}

/* How series i is drawn: its colour, dash pattern and marker, or its fill. */
static void style(FILE *o, const struct sim_plot *p, size_t i)
{
	const struct style *st = &styles[i % SIM_PLOT_STYLES];

	if (p->nx == 1)
		fprintf(o, " with boxes fs pattern %zu border lc rgb '%s' lc rgb '%s'", i % 8,
			st->colour, st->colour);
	else
		fprintf(o, " with linespoints lw 2 ps 1.1 lc rgb '%s' dt %s pt %d", st->colour,
			st->dash, st->point);
}

/* One panel: column col (0 restore, 1 dump, 2 risk) of every series. */
static void panel(FILE *o, const struct sim_plot *p, int col)
{
	bool first = true;

	fputs("plot ", o);
	for (size_t i = 0; i < p->ns; i++) {
		if (col == 2 && !any_risk(p, i))
			continue;
		fputs(first ? "" : ", \\\n     ", o);
		first = false;
		if (p->nx == 1)
			fprintf(o, "$D using (%zu):(column(%zu))", i, 2 + 3 * i + (size_t)col);
		else
			fprintf(o, "$D using 1:(column(%zu))", 2 + 3 * i + (size_t)col);
		style(o, p, i);
		fputs(" notitle", o);
	}
	if (first) /* nothing to draw on this axis: an empty frame */
		fputs("NaN notitle", o);
	fputc('\n', o);
}

/* The legend, as a plot of its own across the bottom (a panel's key would
 * be as narrow as the panel): every series, and which coincide. */
static void legend(FILE *o, const struct sim_plot *p, const int *with, double height)
{
	fprintf(o, "set origin 0,0\nset size 1,%g\nunset border\nunset tics\nunset xlabel\n"
		"unset ylabel\nunset title\nunset label\nunset arrow\nunset grid\n"
		"unset logscale\nset xrange [0:1]\nset yrange [0:1]\n"
		"set key center center horizontal maxrows 3 samplen 5 spacing 1.3 width 2 box\n"
		"plot ", height);
	for (size_t i = 0; i < p->ns; i++) {
		fputs(i ? ", \\\n     NaN" : "NaN", o);
		style(o, p, i);
		fputs(" title ", o);
		if (with[i] >= 0) {
			char t[160];

			snprintf(t, sizeof(t), "%s (= %s)", p->s[i].name, p->s[with[i]].name);
			quoted(o, t);
		} else {
			quoted(o, p->s[i].name);
		}
	}
	fputc('\n', o);
}

/* The names of the series with no risk, wrapped, as the risk panel's x
 * label (under the axis, where no line runs). */
static void zero_label(FILE *o, const struct sim_plot *p)
{
	char text[1024];
	size_t n, line;

	n = (size_t)snprintf(text, sizeof(text), "%s0, not drawn on a log axis:",
			     p->nx == 1 ? "" : "GPU processes\\n");
	line = n;
	for (size_t i = 0; i < p->ns; i++) {
		if (any_risk(p, i))
			continue;
		if (line > 50 && n + 3 < sizeof(text)) {
			memcpy(text + n, "\\n", 3);
			n += 2;
			line = 0;
		}
		n += (size_t)snprintf(text + n, sizeof(text) - n, " %s", p->s[i].name);
		line += strlen(p->s[i].name) + 1;
		if (n >= sizeof(text))
			break;
	}
	fprintf(o, "set xlabel \"%s\" font ',10'\n", text);
}

static void limit(FILE *o, double s)
{
	if (s <= 0)
		return;
	fprintf(o, "set arrow 1 from graph 0, first %g to graph 1, first %g nohead lc rgb "
		"'#cc0000' dt 2 lw 1.5 front\n", s, s);
	fprintf(o, "set label 1 'timeout %g s' at graph 0.02, first %g tc rgb '#cc0000' front\n",
		s, s * 1.12);
}

static void script(FILE *o, const char *path, const char *fmt, const struct sim_plot *p,
		   const int *with)
{
	double base = p->nx == 1 ? 0.34 : 0.22; /* the legend's height; bars' names need room */

	fprintf(o, "set terminal %s size 1500,640 font 'Helvetica,%d' background rgb 'white'\n",
		!strcmp(fmt, "svg") ? "svg" : "pngcairo", !strcmp(fmt, "svg") ? 12 : 11);
	fputs("set output ", o);
	/* gnuplot reads an output name that starts with '|' as a command */
	if (path[0] == '|') {
		char safe[4200];

		snprintf(safe, sizeof(safe), "./%s", path);
		quoted(o, safe);
	} else {
		quoted(o, path);
	}
	fputs("\nset termoption noenhanced\nset datafile separator '\\t'\n", o);
	data(o, p);
	fputs("set multiplot title ", o);
	{
		char t[512];

		snprintf(t, sizeof(t), "%s\n%s", p->title, p->subtitle);
		fputc('"', o);
		for (const char *c = t; *c; c++)
			fputs(*c == '\n' ? "\\n" : *c == '"' ? "\\\"" : (char[]){ *c, 0 }, o);
		fputs("\"\n", o);
	}
	fprintf(o, "set size 0.333,%g\n", 0.9 - base);
	fputs("set logscale y\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
	      "set ylabel 'seconds'\n", o);
	if (p->nx == 1) {
		fputs("set boxwidth 0.75\nset xtics rotate by -45 (", o);
		for (size_t i = 0; i < p->ns; i++) {
			fputs(i ? ", " : "", o);
			quoted(o, p->s[i].name);
			fprintf(o, " %zu", i);
		}
		fprintf(o, ")\nset xrange [-0.6:%zu.6]\n", p->ns - 1);
	} else {
		fputs("set logscale x\nset xtics (", o);
		for (size_t x = 0; x < p->nx; x++)
			fprintf(o, "%s'%g' %g", x ? ", " : "", p->xs[x], p->xs[x]);
		fprintf(o, ")\nset xrange [%g:%g]\nset xlabel 'GPU processes'\n", p->xs[0] * 0.9,
			p->xs[p->nx - 1] * 1.1);
	}
	fprintf(o, "set origin 0,%g\nset title 'restore (s)'\n", base);
	limit(o, p->restore_limit_s);
	panel(o, p, 0);
	fprintf(o, "unset arrow 1\nunset label 1\nset origin 0.333,%g\nset title 'dump (s)'\n",
		base);
	limit(o, p->dump_limit_s);
	panel(o, p, 1);
	fprintf(o, "unset arrow 1\nunset label 1\nset origin 0.666,%g\nset title 'risk: "
		"wrong-thread resumes per million restores'\nset ylabel 'per million'\n"
		"set yrange [%g:*]\n", base, risk_floor(p));
	zero_label(o, p);
	panel(o, p, 2);
	legend(o, p, with, base);
	fputs("unset multiplot\nset output\n", o);
}

/* gnuplot with the script on its stdin; its messages stay on our stderr. */
static int run(const char *path, const char *fmt, const struct sim_plot *p, const int *with,
	       char *why, size_t len)
{
	const char *gp = getenv("RTID_GNUPLOT") && *getenv("RTID_GNUPLOT") ? getenv("RTID_GNUPLOT")
									    : "gnuplot";
	char *argv[] = { (char *)gp, NULL };
	posix_spawn_file_actions_t fa;
	void (*old_pipe)(int);
	int fds[2], st = 0, e;
	pid_t pid;
	FILE *o;

	if (pipe(fds) < 0)
		return snprintf(why, len, "pipe: %s", strerror(errno)), -EIO;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	e = posix_spawnp(&pid, gp, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (e) {
		close(fds[1]);
		return snprintf(why, len, "cannot run %s (%s): install gnuplot (apt-get install "
				"gnuplot-nox) or name it in RTID_GNUPLOT", gp, strerror(e)), -ENOENT;
	}
	/* A gnuplot that dies early is told by its exit status, not by SIGPIPE. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	if ((o = fdopen(fds[1], "w"))) {
		script(o, path, fmt, p, with);
		fclose(o);
	} else {
		close(fds[1]);
	}
	signal(SIGPIPE, old_pipe);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!o || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return snprintf(why, len, "%s failed drawing %s (its message is above)", gp, path),
		       -EIO;
	return 0;
}

int sim_plot_write(const char *path, const struct sim_plot *p, char *why, size_t len)
{
	const char *fmt = sim_plot_format(path);
	int with[SIM_PLOT_STYLES];

	if (!fmt)
		return snprintf(why, len, "%s: unknown plot format: the name must end in .svg or "
				".png", path), -EINVAL;
	if (p->ns == 0 || p->ns > SIM_PLOT_STYLES || p->nx == 0 || p->nx > SIM_PLOT_MAX_X)
		return snprintf(why, len, "%s: nothing to plot", path), -EINVAL;
	sim_plot_coincide(p, with);
	return run(path, fmt, p, with, why, len);
}
