/* rtid-sim: predict dump and restore time per strategy for workload shapes.
 *
 *   rtid-sim                                     table of every workload x strategy, and a plot
 *   rtid-sim --workload W --strategy S [--seed N] [--json]
 *   rtid-sim --params                            every parameter and its source
 *   rtid-sim --check --workload W --strategy S   model against the real resolver */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engine.h"
#include "evidence.h"
#include "figures.h"
#include "plot.h"
#include "basic/parse.h"
#include "rtid.h"

static const char *const strategies[] = { "upstream", "scan", "parallel:8", "api", "canary",
					   "serve", "toggle", "coalesced", "batch:8", "plugin",
					   "serve+parallel:8", "toggle+parallel:8", "serve+batch:8",
					   "serve+runs:8", "serve+runs:8+queue" };
#define NSTRAT (sizeof(strategies) / sizeof(strategies[0]))

static const char usage[] =
	"Usage: rtid-sim [--workload NAME|FILE] [--strategy S] [--seed N] [--json]\n"
	"       rtid-sim --workload W       every strategy for one workload\n"
	"       rtid-sim [--plot FILE]      table of every workload x strategy, and the plot\n"
	"       rtid-sim --params           the parameters in force and their sources\n"
	"Any of them: --set NAME=VALUE (repeatable), e.g. --set host_gbps=1, and\n"
	"--evidence DIR: the attach and driver-API costs measured by the GPU kit's\n"
	"reports in DIR (make sim passes evidence/).\n"
	"       rtid-sim --check --workload W --strategy S [--scale X]\n"
	"Strategies: upstream, scan, parallel:K, api, canary, serve, plugin, toggle,\n"
	"coalesced, batch:K, runs:R, queue, and parts joined by '+' (serve+parallel:8,\n"
	"toggle+parallel:8, serve+runs:8+queue); sim/README.md gives each one's model.\n"
	"Workloads: vllm-small, vllm-8b, embedding, tp2, nim-24, sglang-103, or a file.\n";

static int load_workload(const char *w, struct sim_workload *out)
{
	char err[512];

	if (sim_workload_builtin(w, out) == 0)
		return 0;
	if (!strchr(w, '/') && !strchr(w, '.') && access(w, F_OK) < 0) {
		fprintf(stderr, "rtid-sim: no workload '%s': built in are vllm-small, vllm-8b, "
			"embedding, tp2, nim-24, sglang-103; or give a file\n", w);
		return -1;
	}
	if (sim_workload_load(w, out, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "rtid-sim: %s\n", err);
	return -1;
}

static void print_hooks(const struct sim_result *r)
{
	printf("\"hooks\":{");
	for (int h = 0; h < SIM_NHOOKS; h++) {
		printf("%s\"%s\":{", h ? "," : "", sim_hook_names[h]);
		for (int c = 0; c < SIM_NCALLS; c++)
			printf("\"%s\":%.3f,", sim_call_names[c], r->hooks[h][c]);
		printf("\"total\":%.3f}", sim_hook_total(r, (enum sim_hook)h));
	}
	printf("},");
}

static void print_json(const struct sim_workload *w, const struct sim_strategy *s,
		       unsigned long seed, const struct sim_result *r)
{
	printf("{\"workload\":\"%s\",\"strategy\":\"%s\",\"seed\":%lu,\"gpu_processes\":%zu,"
	       "\"processes\":%zu,\"visible_gpus\":%u,\"dump_s\":%.3f,\"restore_s\":%.3f,"
	       "\"restore_tid_s\":%.3f,\"dump_plugin_s\":%.3f,\"restore_plugin_s\":%.3f,",
	       w->name, s->name, seed, sim_workload_gpus(w), w->n, w->visible_gpus, r->dump_s,
	       r->restore_s, r->restore_tid_s, r->dump_plugin_s, r->restore_plugin_s);
	print_hooks(r);
	printf("\"serve_attach_s\":%.3f,\"spawns\":%lu,\"attaches\":%lu,\"dump_timed_out\":%s,"
	       "\"restore_timed_out\":%s,\"wrong_tid_per_million\":%.3f}\n",
	       r->serve_attach_s, r->spawns, r->attaches, r->dump_timed_out ? "true" : "false",
	       r->restore_timed_out ? "true" : "false", r->wrong_tid_per_million);
}

/* The first two columns' widths: their longest entry in this table, so that
 * every row lines up with the header (serve+runs:8+queue is the longest). */
static int wl_w = 8, st_w = 8;

static void widen(const char *workload, const char *strategy)
{
	if (workload && (int)strlen(workload) > wl_w)
		wl_w = (int)strlen(workload);
	if (strategy && (int)strlen(strategy) > st_w)
		st_w = (int)strlen(strategy);
}

/* Every table as wide as the whole one, so that tables compare line by line. */
static void print_header(void)
{
	for (size_t i = 0; sim_workload_names[i]; i++)
		widen(sim_workload_names[i], NULL);
	for (size_t j = 0; j < NSTRAT; j++)
		widen(NULL, strategies[j]);
	printf("| %-*s | %-*s | GPUs | restore s       | plugin | tid s    "
	       "| dump s          | plugin | spawns | attaches | wrong/1M  |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
	       wl_w, "workload", st_w, "strategy");
}

/* The row with the most wrong threads per million, explained under the table. */
static struct {
	double wrong;
	char workload[64], strategy[64];
	enum sim_tid tid;
	size_t gpus, cpus;
} worst;

static void print_row(const struct sim_workload *w, const struct sim_strategy *s,
		      const struct sim_result *r)
{
	printf("| %-*s | %-*s | %4zu | %7.1f%s | %5.0f%% | %8.1f | %7.1f%s | %5.0f%% | %6lu "
	       "| %8lu | %9.2f |\n", wl_w, w->name, st_w, s->name, sim_workload_gpus(w),
	       r->restore_s, r->restore_timed_out ? " >limit " : "        ",
	       100.0 * r->restore_plugin_s / r->restore_s, r->restore_tid_s, r->dump_s,
	       r->dump_timed_out ? " >limit " : "        ", 100.0 * r->dump_plugin_s / r->dump_s,
	       r->spawns, r->attaches, r->wrong_tid_per_million);
	if (r->wrong_tid_per_million > worst.wrong) {
		worst.wrong = r->wrong_tid_per_million;
		snprintf(worst.workload, sizeof(worst.workload), "%s", w->name);
		snprintf(worst.strategy, sizeof(worst.strategy), "%s", s->name);
		worst.tid = s->tid;
		worst.gpus = sim_workload_gpus(w);
		worst.cpus = w->n - worst.gpus;
	}
}

/* The parameters in force: the defaults, changed by --set. */
static struct sim_params params_now;
static const struct sim_params *cur = &params_now;
/* Where attach_s and api_query_s come from when --evidence found reports. */
static char evidence_source[512];

/* The table's figures: means over RUNS seeds from seed on, so that a row is
 * what the strategy costs on average, not one draw of the attach. */
enum { RUNS = 100 };

static void mean_run(const struct sim_workload *w, const struct sim_strategy *s,
		     unsigned long seed, struct sim_result *out)
{
	sim_mean_run(cur, w, s, seed, RUNS, out);
}

enum { GPU_GIB = 2 }; /* the synthetic workload's GPU memory per process */

/* Plot into path when asked: the sweep, or one workload (w not NULL). */
static int plot(const char *path, const struct sim_workload *w, unsigned long seed)
{
	char why[512];
	int e;

	if (!path)
		return 0;
	e = w ? sim_figure_workload(cur, w, strategies, NSTRAT, seed, RUNS, path, why, sizeof(why))
	      : sim_figure_sweep(cur, strategies, NSTRAT, GPU_GIB, seed, RUNS, path, why,
				 sizeof(why));
	if (e < 0) {
		fprintf(stderr, "rtid-sim: --plot %s\n", why);
		return -1;
	}
	printf("Plot: %s\n", path);
	return 0;
}

static void rows(const struct sim_workload *w, unsigned long seed)
{
	for (size_t j = 0; j < NSTRAT; j++) {
		struct sim_strategy s;
		struct sim_result r;

		sim_strategy_parse(strategies[j], &s);
		mean_run(w, &s, seed, &r);
		print_row(w, &s, &r);
	}
}

/* What each column means and what the risk assumes, under every table. */
static void legend(void)
{
	fputs("Columns:\n"
	      "  workload:  the workload (rtid-sim --workload NAME, or a file's 'name')\n"
	      "  strategy:  how the CUDA plugin's calls are made (sim/README.md, 'The model')\n"
	      "  GPUs:      processes holding GPU memory (CPU-only ones are not counted)\n"
	      "  restore s: wall time of the CRIU restore, in seconds\n"
	      "  plugin:    the share of the column before it spent in the CUDA plugin's hooks\n"
	      "  tid s:     the restore's restore-tid lookups alone, as one resolver batch, in s\n"
	      "  dump s:    wall time of the CRIU dump, in seconds\n"
	      "  spawns:    processes started in dump and restore (cuda-checkpoint; the shim "
	      "under serve)\n"
	      "  attaches:  driver attaches paid in dump and restore (serve's daemon attaches "
	      "once,\n"
	      "             before the operation, and is counted in neither)\n"
	      "  wrong/1M:  restores in a million that resume a wrong thread\n"
	      "Risk assumes: upstream, parallel:K, api, serve and toggle ask the driver and never "
	      "trust a\n"
	      "thread name: 0. scan trusts the name with no attestation: a driver release that "
	      "changes\n"
	      "the naming (p_drift) leaves one wrong match (p_wrong_given_drift), plus lookalike "
	      "threads\n"
	      "in CPU-only processes (p_nvml_lookalike) and single wrong matches (p_independent). "
	      "rtid\n"
	      "scans only on a driver version attested by a cross-check, which this row does not "
	      "model:\n"
	      "it is the bound for a scan without that gate. canary cross-checks once per hook, "
	      "which\n"
	      "catches drift, not lookalikes or single wrong matches.\n"
	      "wrong/1M is per restore of the whole workload (a wrong thread in any of its\n"
	      "processes), so it grows with the processes: 1e6 x (1 - (1 - D)(1 - L)(1 - I)),\n"
	      "D = p_drift x (1 - (1 - p_wrong_given_drift)^G) (scan only), L = 1 - (1 - "
	      "p_nvml_lookalike)^C,\n"
	      "I = 1 - (1 - p_independent)^G (canary: G - 1), for G GPU and C CPU-only "
	      "processes.\n", stdout);
	if (worst.wrong > 0) {
		double g = (double)worst.gpus, c = (double)worst.cpus;
		double d = worst.tid == SIM_TID_SCAN ?
			cur->p_drift * (1 - pow(1 - cur->p_wrong_given_drift, g)) : 0;
		double l = 1 - pow(1 - cur->p_nvml_lookalike, c);
		double i = 1 - pow(1 - cur->p_independent,
				   worst.tid == SIM_TID_CANARY && g > 1 ? g - 1 : g);

		printf("The largest here, %s under %s (G=%zu, C=%zu):\n"
		       "  %.2f = 1e6 x (1 - (1 - %.6f)(1 - %.6f)(1 - %.6f)):\n"
		       "  naming drift alone %.0f, lookalikes alone %.0f; about one restore in %.0f of\n"
		       "  a workload this size would resume a wrong thread.\n",
		       worst.workload, worst.strategy, worst.gpus, worst.cpus, worst.wrong, d, l, i,
		       d * 1e6, l * 1e6, 1e6 / worst.wrong);
	}
	fputs("Parameters and sources: rtid-sim --params.\n", stdout);
}

static void footer(unsigned long first, unsigned long last)
{
	if (first == last)
		printf("\nOne run, seed %lu.", first);
	else
		printf("\nMeans over seeds %lu..%lu.", first, last);
	printf(" '>limit': past the restore timeout (%.0f s, restore_timeout_s) in the restore\n"
	       "column, past the dump timeout (%.0f s, dump_timeout_s) in the dump column.\n",
	       cur->restore_timeout_s, cur->dump_timeout_s);
	/* The figure every row turns on, said where the rows are read. */
	if (evidence_source[0])
		printf("Driver attach: %.4g s, %s; without --evidence the "
		       "public %.4g s.\n", cur->attach_s, evidence_source, sim_defaults.attach_s);
	else
		printf("Driver attach: %.4g s (median; %s); --evidence DIR takes the GPU kit's "
		       "measure (make sim passes evidence/).\n", cur->attach_s,
		       cur->attach_s == sim_defaults.attach_s ? "public, attach_s" : "--set");
	legend();
}

/* Every strategy for one workload (a built-in or a file). */
static int one_workload(const struct sim_workload *w, unsigned long seed, const char *plot_path)
{
	widen(w->name, NULL);
	print_header();
	rows(w, seed);
	footer(seed, seed + RUNS - 1);
	return plot(plot_path, w, seed) < 0 ? 1 : 0;
}

static int table(unsigned long seed, const char *plot_path)
{
	print_header();
	for (size_t i = 0; sim_workload_names[i]; i++) {
		struct sim_workload w;

		if (sim_workload_builtin(sim_workload_names[i], &w) < 0)
			return 1;
		rows(&w, seed);
		sim_workload_free(&w);
	}
	footer(seed, seed + RUNS - 1);
	return plot(plot_path, NULL, seed) < 0 ? 1 : 0;
}

/* The parameters in force, each with its source; one changed by --set says
 * so beside its default. */
static void params(void)
{
	printf("| parameter | value | unit | basis | source |\n|---|---:|---|---|---|\n");
	for (size_t i = 0; i < sim_param_count; i++) {
		const struct sim_param_doc *d = &sim_param_docs[i];
		double now = *(const double *)((const char *)cur + d->offset),
		       def = *(const double *)((const char *)&sim_defaults + d->offset);

		bool measured = evidence_source[0] && (!strcmp(d->name, "attach_s") ||
						       !strcmp(d->name, "api_query_s"));

		printf("| %s | %g", d->name, now);
		if (now != def)
			printf(" (%s; default %g)", measured ? "evidence" : "--set", def);
		printf(" | %s | %s | %s |\n", d->unit, measured ? "evidence" : d->basis,
		       measured ? evidence_source : d->source);
	}
}

/* The command line. */
struct cli {
	const char *wname, *sname, *plot_path, *scale;
	bool json, check, show_params;
	unsigned long seed;
};

/* Read the options into *o. -1 to go on, else the status to exit with. */
static int parse_cli(int argc, char **argv, struct cli *o)
{
	enum { O_WORKLOAD = 0x100, O_STRATEGY, O_SEED, O_JSON, O_PLOT, O_PARAMS, O_CHECK, O_SCALE,
	       O_SET, O_EVIDENCE };
	static const struct option opts[] = {
		{ "workload", 1, NULL, O_WORKLOAD }, { "strategy", 1, NULL, O_STRATEGY },
		{ "seed", 1, NULL, O_SEED }, { "json", 0, NULL, O_JSON }, { "plot", 1, NULL, O_PLOT },
		{ "params", 0, NULL, O_PARAMS }, { "check", 0, NULL, O_CHECK },
		{ "scale", 1, NULL, O_SCALE }, { "set", 1, NULL, O_SET },
		{ "evidence", 1, NULL, O_EVIDENCE }, { "help", 0, NULL, 'h' }, { 0 } };
	char why[256];
	int c, n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_WORKLOAD: o->wname = optarg; break;
		case O_STRATEGY: o->sname = optarg; break;
		case O_SEED:
			if (rtid__parse_pid(optarg, &n) < 0) {
				fprintf(stderr, "rtid-sim: invalid --seed '%s'\n", optarg);
				return 2;
			}
			o->seed = (unsigned long)n;
			break;
		case O_JSON: o->json = true; break;
		case O_PLOT: o->plot_path = optarg; break;
		case O_PARAMS: o->show_params = true; break;
		case O_EVIDENCE:
			n = sim_evidence_load(optarg, &params_now, evidence_source,
					      sizeof(evidence_source));
			if (n == -ENODATA) {
				fprintf(stderr, "rtid-sim: no passing report of a real driver in %s: "
					"the public figures stand\n", optarg);
			} else if (n < 0) {
				fprintf(stderr, "rtid-sim: --evidence %s: %s\n", optarg, strerror(-n));
				return 2;
			}
			break;
		case O_SET:
			if (sim_param_set(&params_now, optarg, why, sizeof(why)) < 0) {
				fprintf(stderr, "rtid-sim: --set %s\n", why);
				return 2;
			}
			break;
		case O_CHECK: o->check = true; break;
		case O_SCALE: o->scale = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "rtid-sim: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	return -1;
}

/* One workload: every strategy, or one (its row, its JSON, or its check). */
static int run_workload(const struct cli *o)
{
	struct sim_workload w;
	struct sim_strategy s;
	struct sim_result r;
	char why[256];
	int n;

	if (o->sname && sim_strategy_parse_why(o->sname, &s, why, sizeof(why)) < 0) {
		fprintf(stderr, "rtid-sim: strategy '%s': %s\n", o->sname, why);
		return 2;
	}
	if (o->json && !o->sname) {
		fputs("rtid-sim: --json gives one run: it needs --strategy\n", stderr);
		return 2;
	}
	if (o->check && !o->sname) {
		fputs("rtid-sim: --check needs --strategy\n", stderr);
		return 2;
	}
	if (load_workload(o->wname, &w) < 0)
		return 2;
	if (!o->sname) {
		n = one_workload(&w, o->seed, o->plot_path);
	} else if (o->check) {
		n = sim_check(cur, &w, &s, o->scale);
	} else {
		sim_run(cur, &w, &s, o->seed, &r);
		if (o->json)
			print_json(&w, &s, o->seed, &r);
		else {
			widen(w.name, s.name);
			print_header();
			print_row(&w, &s, &r);
			footer(o->seed, o->seed);
		}
		n = 0;
	}
	sim_workload_free(&w);
	return n;
}

int main(int argc, char **argv)
{
	struct cli o = { .scale = "0.05", .seed = 1 };
	int r;

	params_now = sim_defaults;
	r = parse_cli(argc, argv, &o);
	if (r >= 0)
		return r;
	if (o.show_params) {
		params();
		return 0;
	}
	if (!o.wname && o.sname) {
		fputs("rtid-sim: --strategy needs --workload (without both: every workload)\n",
		      stderr);
		return 2;
	}
	if (!o.wname)
		return table(o.seed, o.plot_path);
	return run_workload(&o);
}
