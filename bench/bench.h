/* Pieces of rtid-bench. */
#ifndef RTID_BENCH_H
#define RTID_BENCH_H

#include <stddef.h>

#include "helpers.h" /* median(), env_path(): shared with the tests */
/* Part 1: 103 pids, every strategy, one table. */
void bench_batches(void);
/* Part 4: attestation loading against its size. */
void bench_attest(void);
/* Part 5: rtid serve behind the shim, CRIU's way of calling, against the tool. */
void bench_serve(void);

#endif
