/* Pieces of rtid-bench. */
#ifndef RTID_BENCH_H
#define RTID_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "helpers.h" /* median(), env_path(): shared with the tests */
/* Part 1: 103 pids, every strategy, one table. */
void bench_batches(void);
/* Part 4: attestation loading against its size. */
void bench_attest(void);
/* Part 5: rtid serve behind the shim, CRIU's way of calling, against the tool. */
void bench_serve(void);
/* Part 6: R CRIU runs side by side on one node: shim + rtid serve, the tool
 * alone, and the ideal. */
void bench_node(void);
/* Part 7: the real CRIU, three ways (rtid's plugin, CRIU's with the shim, CRIU's
 * with the tool), for 4 and 16 processes with slow actions, each beside the
 * simulator's model. 0; 1 when check and the model misses a row by more than
 * 25 %; 2 when a run failed; 77 when it cannot run here (1 when check and
 * RTID_REQUIRE_CRIU=1). */
int bench_plugin(bool check);
/* Part 8: a CUDA plugin's cost per task without CUDA, the real CRIU, N = 1,
 * 17, 103: no plugin, rtid's plugin with rtid serve, CRIU's plugin with the
 * shim. 0; 2 when a run failed; 77 when it cannot run here. */
int bench_hooks(bool check);
/* Run body(check) in a child in a mount namespace of its own with a tmpfs
 * GPU under /proc/driver (rtid's plugin is enabled only where
 * /proc/driver/nvidia/gpus/ exists): its status; 77 (1 when check and
 * RTID_REQUIRE_CRIU=1) when the namespace cannot be made, said under title. */
int bench_gpu_ns(const char *title, bool check, int (*body)(bool check));

/* serve-env.c: the stage of parts 5 and 6. */
struct serve_env {
	char dir[64], casefile[128], shim[128], sock[128];
	pid_t daemon;
};
/* A directory holding the case (case_text), its proc tree, the shim; the
 * environment set for the shim and the mocks. Exits on failure. */
void se_setup(struct serve_env *e, const char *case_text);
/* rtid serve --actions on it, ready. */
void se_daemon(struct serve_env *e);
/* One call as CRIU's plugin makes it: the exit status, atoi in *tid. */
int se_call(const char *prog, char *const *argv, int *tid);
/* Stop the daemon, remove the directory. */
void se_teardown(struct serve_env *e);

#endif
