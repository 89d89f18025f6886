#ifndef RTID_SIM_CHECK_H
#define RTID_SIM_CHECK_H

#include "engine.h"

/* Run the real resolver for the workload's restore-tid phase against fakeproc
 * and the mocks, in real time scaled by scale ("0.05"), and print the model's
 * prediction beside the measurement, up to 5 runs (load only adds time: the
 * first run within 10 % passes). Returns 0 when one agrees within 10 %, 1 when
 * none does or an answer is wrong, 77 when FUSE cannot be used here, 2 on
 * setup errors. */
int sim_check(const struct sim_params *p, const struct sim_workload *w,
	      const struct sim_strategy *s, const char *scale);

#endif
