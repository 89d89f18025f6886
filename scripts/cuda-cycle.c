/* cuda-cycle: lock, checkpoint, restore and unlock one CUDA process through the
 * driver API, timing each step. For scripts/gpu-validate.sh on a GPU node.
 *
 *   cuda-cycle PID [LIBCUDA]
 *
 * Prints "step ms" lines; exits non-zero at the first failing step. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*init_fn)(unsigned);
typedef int (*step_fn)(int, void *);
typedef int (*state_fn)(int, int *);

struct args64 {
	unsigned timeout_ms; /* CUcheckpointLockArgs.timeoutMs; 0 in the others */
	unsigned reserved0;
	unsigned long long reserved1[7];
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	static const char *const steps[] = { "cuCheckpointProcessLock", "cuCheckpointProcessCheckpoint",
					     "cuCheckpointProcessRestore", "cuCheckpointProcessUnlock" };
	void *lib = dlopen(argc > 2 ? argv[2] : "libcuda.so.1", RTLD_NOW);
	char *end;
	long pid = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	init_fn init;
	state_fn get_state;
	int state = -1;

	if (argc < 2 || *end || pid <= 0) {
		fprintf(stderr, "usage: cuda-cycle PID [LIBCUDA]\n");
		return 2;
	}
	if (!lib || !(init = (init_fn)dlsym(lib, "cuInit")) || init(0) != 0) {
		fprintf(stderr, "cuda-cycle: cannot load or initialise libcuda: %s\n", dlerror());
		return 1;
	}
	get_state = (state_fn)dlsym(lib, "cuCheckpointProcessGetState");
	for (int i = 0; i < 4; i++) {
		step_fn f = (step_fn)dlsym(lib, steps[i]);
		struct args64 a;
		double t0 = now_ms();
		int r;

		memset(&a, 0, sizeof(a));
		a.timeout_ms = i == 0 ? 10000 : 0;
		if (!f) {
			fprintf(stderr, "cuda-cycle: %s missing (driver older than r570)\n", steps[i]);
			return 1;
		}
		r = f((int)pid, &a);
		if (get_state)
			get_state((int)pid, &state);
		printf("%-32s %8.1f ms  CUresult %d  state %d\n", steps[i], now_ms() - t0, r, state);
		if (r != 0)
			return 1;
	}
	return 0;
}
