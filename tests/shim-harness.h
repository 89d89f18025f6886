/* Calling the shim exactly as CRIU's CUDA plugin calls the tool, for the
 * shim's tests: execvp("cuda-checkpoint") from PATH (the shim, then the
 * stand-in real tool), stdout and stderr into one pipe, a 128-byte buffer,
 * atoi, the exit status. */
#ifndef RTID_SHIM_HARNESS_H
#define RTID_SHIM_HARNESS_H

extern char log_path[512], path_env[2048];

struct criu_call {
	int status; /* exit status, or 128 + signal */
	int tid;    /* atoi of what was read, as the plugin does */
	char out[129];
};

struct criu_call criu(char *const argv[]);

/* Group setup: shim/ and real/ under test_dir, a proc tree, an attestation. */
int shim_setup(void **state);
/* Before each test: the environment the tests set, and the tool's log, cleared. */
int shim_reset(void **state);

#endif
