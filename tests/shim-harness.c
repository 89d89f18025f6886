/* The shim called as CRIU's plugin calls the tool. See shim-harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "plugin-call.h"
#include "shim-harness.h"

char log_path[512], path_env[2048];
static char proc_dir[512];

/* CRIU's way: execvp from PATH, both streams in one pipe, 128 bytes. */
struct criu_call criu(char *const argv[])
{
	struct criu_call c = { 0 };
	char path[sizeof(path_env) + 8];
	const char *env[] = { path, NULL };

	snprintf(path, sizeof(path), "PATH=%s", path_env);
	c.status = plugin_call("cuda-checkpoint", argv, env, c.out, sizeof(c.out));
	assert_true(c.status >= 0);
	c.tid = atoi(c.out); /* the plugin's parsing, on purpose */
	return c;
}

int shim_setup(void **state)
{
	char shim[600], real[600];

	(void)state;
	test_dir_setup(state);
	snprintf(shim, sizeof(shim), "%s/shim/cuda-checkpoint", test_dir);
	snprintf(real, sizeof(real), "%s/real/cuda-checkpoint", test_dir);
	write_file(test_dir, "shim/.keep", "");
	write_file(test_dir, "real/.keep", "");
	if (symlink(env_path("RTID_BIN"), shim) < 0 || symlink(env_path("FAKE_TOOL"), real) < 0)
		return -1;
	snprintf(path_env, sizeof(path_env), "%s/shim:%s/real:/usr/bin:/bin", test_dir, test_dir);
	snprintf(log_path, sizeof(log_path), "%s/log", test_dir);
	setenv("FAKE_LOG", log_path, 1);
	/* A proc tree with one restore thread, an attestation for its driver. */
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", test_dir);
	write_file(test_dir, "proc/4242/task/4242/comm", "python3\n");
	write_file(test_dir, "proc/4242/task/4244/comm", "cuda00001400006\n");
	write_file(test_dir, "proc/driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu\n");
	write_file(test_dir, "att.json", "{\"format\": 1, \"drivers\": {\"580.159.03\": "
				    "{\"agree\": 12, \"mismatch\": 0}}}");
	return 0;
}

int shim_reset(void **state)
{
	static const char *const vars[] = { "FAKE_STDOUT", "FAKE_STDERR", "FAKE_EXIT", "RTID_MODE",
					    "FAKE_SIGNAL",
					    "RTID_PROC", "RTID_ATTESTATION", "RTID_REAL_TOOL",
					    "FAKE_SLOW_ONCE", "FAKE_SLOW_S", "RTID_PATTERN",
					    "RTID_UNATTESTED" };

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	unlink(log_path);
	/* pid 4242 is a process of the test tree, not of the real /proc. */
	setenv("RTID_PROC", proc_dir, 1);
	return 0;
}

