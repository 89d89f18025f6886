/* Failure enumeration: for each resolver operation, fail its 1st, 2nd, 3rd ...
 * fallible libc call (through libfiu: the POSIX preload library and rtid's own
 * failure points) until the operation completes without reaching the next
 * one. Every run must end with the right answer or a clear error, never a
 * wrong tid, and leave no fd and no child behind.
 *
 * Run with LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so (meson does). Two
 * passes: errors as such (EIO, ENOMEM, EINTR), and errors that mean "it
 * vanished" (ENOENT, ESRCH), which the scan treats specially. */
#include <errno.h>
#include <fiu-control.h>
#include <fiu.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fiu-nth.h"
#include "helpers.h"
#include "rtid.h"

static const char *const points[] = {
	/* Not close or closedir: libfiu fails them without closing, which Linux
	 * never does, so every such "failure" would look like an fd leak. */
	"posix/io/oc/open", "posix/io/rw/read", "posix/io/dir/opendir", "posix/io/dir/fdopendir",
	"posix/io/dir/readdir", "posix/io/net/poll",
	"posix/io/net/recv", "posix/io/net/send", "posix/proc/waitpid", "posix/proc/kill",
	"posix/stdio/oc/fopen", "posix/stdio/rw/fread", "libc/mm/*", "libc/str/*", "rtid/*",
};

static int pass; /* 0: plain errors; 1: "vanished" errors */
static char *root;

static int errno_for(const char *name)
{
	if (!strncmp(name, "libc/", 5))
		return ENOMEM;
	if (strstr(name, "pidfd_open"))
		return ENOSYS; /* an old kernel: the fallback without pidfds */
	if (strstr(name, "waitpid") || strstr(name, "poll"))
		return EINTR;
	if (pass == 1 && (strstr(name, "open") || strstr(name, "fstatat")))
		return ENOENT;
	if (pass == 1 && strstr(name, "read"))
		return ESRCH;
	return EIO;
}

static void arm(unsigned long n)
{
	fiu_nth_arm(points, sizeof(points) / sizeof(points[0]), n, errno_for);
}

static void disarm(void)
{
	fiu_nth_disarm(points, sizeof(points) / sizeof(points[0]));
}

struct op {
	const char *name;
	enum rtid_mode mode;
	enum rtid_backend backend;
	int pids[4];
	int want[4]; /* the right tid, 0 for none */
	size_t n;
};

static const struct op ops[] = {
	{ "scan", RTID_MODE_SCAN, RTID_BACKEND_TOOL, { 100 }, { 102 }, 1 },
	{ "scan-two-candidates", RTID_MODE_SCAN, RTID_BACKEND_TOOL, { 200 }, { 202 }, 1 },
	{ "tool", RTID_MODE_DRIVER, RTID_BACKEND_TOOL, { 100 }, { 102 }, 1 },
	{ "batch", RTID_MODE_DRIVER, RTID_BACKEND_TOOL, { 100, 200, 300, 999 }, { 102, 202, 0, 0 }, 4 },
	{ "crosscheck", RTID_MODE_CROSSCHECK, RTID_BACKEND_TOOL, { 100, 200, 300 }, { 102, 202, 0 }, 3 },
	{ "canary", RTID_MODE_CANARY, RTID_BACKEND_TOOL, { 100, 200, 300 }, { 102, 202, 0 }, 3 },
	{ "api", RTID_MODE_DRIVER, RTID_BACKEND_API, { 100, 200, 300 }, { 102, 202, 0 }, 3 },
};

static struct rtid_attestation *att;

/* One run of op with the nth call failing. Returns the number of problems. */
static int run(const struct op *op, unsigned long n, bool *completed)
{
	char proc[512];
	struct rtid_config cfg = { RTID_CONFIG_INIT, .mode = op->mode, .backend = op->backend, .proc_root = proc,
				   .tool = getenv("FAKE_TOOL"), .libcuda = getenv("MOCK_LIBCUDA"),
				   .attestation = att, .timeout_s = 10, .jobs = 2 };
	struct rtid_result r[4];
	struct rtid_ctx *ctx = NULL;
	int fds = count_fds(), bad = 0, rc;

	snprintf(proc, sizeof(proc), "%s/proc", root);
	if (getenv("FIU_ENUM_TRACE"))
		fprintf(stderr, "%s pass %d fail #%lu\n", op->name, pass, n);
	memset(r, 0, sizeof(r));
	if (n)
		arm(n);
	rc = rtid_ctx_new(&cfg, &ctx);
	if (rc == 0)
		rc = rtid_resolve_many(ctx, op->pids, op->n, r);
	rtid_ctx_free(ctx);
	if (n)
		disarm();
	*completed = fiu_nth_calls() < n;
	for (size_t i = 0; rc == 0 && i < op->n; i++)
		if (r[i].error == RTID_OK && r[i].tid != op->want[i]) {
			printf("WRONG %s pass %d fail #%lu: pid %d got tid %d, want %d (source %s)\n",
			       op->name, pass, n, op->pids[i], r[i].tid, op->want[i],
			       rtid_source_name(r[i].source));
			bad++;
		}
	if (count_fds() != fds) {
		printf("FD LEAK %s pass %d fail #%lu: %d -> %d\n", op->name, pass, n, fds, count_fds());
		bad++;
	}
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD) {
		printf("CHILD LEFT %s pass %d fail #%lu\n", op->name, pass, n);
		while (waitpid(-1, NULL, 0) > 0)
			;
		bad++;
	}
	return bad;
}

static void lay_out(void)
{
	char path[512];

	root = tmp_dir();
	write_file(root, "proc/100/task/100/comm", "python3\n");
	write_file(root, "proc/100/task/101/comm", "cuda-EvtHandlr\n");
	write_file(root, "proc/100/task/102/comm", "cuda00001400006\n");
	write_file(root, "proc/200/task/200/comm", "python3\n");
	write_file(root, "proc/200/task/201/comm", "cuda00001400007\n");
	write_file(root, "proc/200/task/202/comm", "cuda00001400008\n");
	write_file(root, "proc/300/task/300/comm", "python3\n");
	write_file(root, "proc/driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu\n");
	write_file(root, "w.case", "title fiu\nproves fiu\nanswer 100 tid 102\nanswer 200 tid 202\n"
				   "answer 300 none\ntask 100 100 x\nexpect all * error=-\n");
	snprintf(path, sizeof(path), "%s/w.case", root);
	setenv("RTID_CASE", path, 1);
	setenv("FAKE_TID_100", "102", 1);
	setenv("FAKE_TID_200", "202", 1);
	setenv("FAKE_EXIT_300", "1", 1);
	setenv("FAKE_EXIT_999", "1", 1);
	rtid_attest_new(&att);
	rtid_attest_add(att, "580.159.03", 10, 0, 0, false);
}

/* Without pidfds (old kernels, valgrind): every operation still gives the
 * right answers, and a hanging tool still ends at its timeout. */
static int without_pidfds(void)
{
	int problems = 0;
	bool done;

	fiu_enable("rtid/pidfd_open", 1, (void *)(intptr_t)ENOSYS, 0);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		problems += run(&ops[i], 0, &done);
	setenv("FAKE_HANG", "1", 1);
	{
		char proc[512];
		struct rtid_config cfg = { RTID_CONFIG_INIT, .tool = getenv("FAKE_TOOL"), .timeout_s = 0.3,
					   .proc_root = proc };
		struct rtid_ctx *ctx = NULL;
		struct rtid_result r;

		snprintf(proc, sizeof(proc), "%s/proc", root); /* pid 100 is a process there */
		if (rtid_ctx_new(&cfg, &ctx) < 0 || rtid_resolve(ctx, 100, &r) < 0 ||
		    r.error != RTID_ERR_TIMEOUT) {
			printf("NO PIDFD: a hanging tool did not time out\n");
			problems++;
		}
		rtid_ctx_free(ctx);
	}
	unsetenv("FAKE_HANG");
	fiu_disable("rtid/pidfd_open");
	printf("%-20s: %d problems\n", "without pidfds", problems);
	return problems;
}

int main(void)
{
	unsigned long total = 0;
	int problems = 0;

	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "fiu_posix_preload")) {
		fprintf(stderr, "fiu-enum: needs LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so\n");
		return 77;
	}
	fiu_init(0);
	lay_out();
	problems += without_pidfds();
	for (pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			bool done = false;
			unsigned long n;

			for (n = 1; !done && n < 100000; n++)
				problems += run(&ops[i], n, &done);
			printf("%-20s pass %d: %lu failure points\n", ops[i].name, pass, n - 2);
			total += n - 2;
		}
	rtid_attest_free(att);
	rm_tree(root);
	free(root);
	printf("%lu failure points enumerated, %d problems\n", total, problems);
	return problems ? 1 : 0;
}
