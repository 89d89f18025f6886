/* The real side of the simulator's check (check-run.c), for check.c. */
#ifndef RTID_SIM_CHECK_RUN_H
#define RTID_SIM_CHECK_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

/* What this machine adds to the driver's scaled delays: a scan of this proc
 * tree, a process start, a call into the attached worker. */
struct costs {
	double scan_s, spawn_s, call_s;
	bool scanned; /* the batch scanned: scan_s is its own */
};

/* A helper next to this program in the build tree (rel), unless the
 * environment names it (env: the test suite does); buf holds the path. */
const char *check_helper(const char *env, const char *rel, char *buf, size_t len);
/* The workload as a case file for fakeproc and the mocks: 0 or -1. */
int check_write_case(const char *path, const struct sim_params *p, const struct sim_workload *w);
/* The fastest of a few bare starts of tool (its -h) here, in seconds; 0
 * when it cannot be started. */
double check_bare_start(const char *tool);
/* Read every thread name of pid under mnt once, untimed, so that a fresh
 * mount's slow first lookups fall into no timed batch. */
void check_warm(const char *mnt, int pid);
/* The batch at scale k (text, as the mocks read it; the daemon started
 * first for serve, its start timed with the batch): the seconds it took, or
 * -1 (not the model's calls), -2 (a wrong answer), -3 (no daemon); *c
 * becomes the batch's own costs. baseline: the run without delays. */
double check_run_batch(const struct sim_params *p, const struct sim_strategy *s, const char *mnt,
		       const char *sock, const char *cf, const struct sim_workload *w,
		       const char *text, double k, struct costs *c, bool baseline);

#endif
