/* The simulator's parameters from the GPU kit's reports (evidence/). */
#ifndef RTID_SIM_EVIDENCE_H
#define RTID_SIM_EVIDENCE_H

#include <stddef.h>

#include "params.h"

/* Read DIR/<run>/report.json of every passing run on a real driver (runs
 * against the mocks are skipped) and set p's attach_s (the median time per
 * tool spawn, less the spawn itself) and api_query_s (the median of the api
 * batch beyond one attach, per process); source then says where they came
 * from. Returns the number of reports used, -ENODATA when none was usable
 * (p untouched), or another negative errno for DIR itself. */
int sim_evidence_load(const char *dir, struct sim_params *p, char *source, size_t len);

#endif
