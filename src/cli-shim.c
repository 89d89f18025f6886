/* The drop-in cuda-checkpoint: rtid installed under that name, earlier on
 * PATH than the real tool. "--get-restore-tid --pid P" is answered by rtid
 * (RTID_MODE, default driver) exactly as the real tool answers: the tid and a
 * newline on stdout and nothing else, or its exit codes. Every other
 * invocation is exec'd unchanged to the real tool. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define SHIM "cuda-checkpoint (rtid shim)"
#define EXIT_UNKNOWN 231 /* CUDA_ERROR_UNKNOWN (999) truncated to 8 bits */
#define GUARD "RTID_SHIM_ACTIVE"

static bool is_self(const char *path)
{
	struct stat a, b;

	return stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The real tool: RTID_REAL_TOOL, else the next cuda-checkpoint on PATH. */
static char *real_tool(void)
{
	const char *env = getenv("RTID_REAL_TOOL");
	char *path = NULL;

	if (rtid_tool_find(env && *env ? env : "cuda-checkpoint", &path) < 0) {
		if (env && *env)
			fprintf(stderr, SHIM ": RTID_REAL_TOOL=%s: no such executable\n", env);
		else
			fprintf(stderr, SHIM ": no real cuda-checkpoint found: set RTID_REAL_TOOL, "
				"or put the real tool on PATH after the shim\n");
		return NULL;
	}
	if (is_self(path)) {
		fprintf(stderr, SHIM ": RTID_REAL_TOOL (%s) is the shim itself\n", path);
		free(path);
		return NULL;
	}
	return path;
}

static int pass_through(char **argv)
{
	char *path = real_tool();

	if (!path)
		return EXIT_UNKNOWN;
	setenv(GUARD, "1", 1);
	execv(path, argv);
	fprintf(stderr, SHIM ": cannot run %s: %s\n", path, strerror(errno));
	free(path);
	return EXIT_UNKNOWN;
}

static bool is_query(int argc, char **argv, int *pid)
{
	if (argc != 4)
		return false;
	if (!strcmp(argv[1], "--get-restore-tid") && !strcmp(argv[2], "--pid"))
		return rtid_parse_pid(argv[3], pid) == 0;
	if (!strcmp(argv[1], "--pid") && !strcmp(argv[3], "--get-restore-tid"))
		return rtid_parse_pid(argv[2], pid) == 0;
	return false;
}

/* Exit as the real tool would have for this result. */
static int reply(const struct rtid_result *r)
{
	if (!r->error && r->tid > 0) {
		printf("%d\n", r->tid);
		return 0;
	}
	if (!r->error) {
		fprintf(stderr, "Could not get restore thread ID for process ID %d: "
			"\"invalid argument\"\n", r->pid);
		return r->source == RTID_SRC_TOOL && r->code == 3 ? 3 : 1;
	}
	fprintf(stderr, SHIM ": pid %d: %s: %s\n", r->pid, rtid_error_name(r->error), r->detail);
	if (r->error == RTID_ERR_TOOL_FAILED)
		return r->code & 0xff;
	if (r->error == RTID_ERR_API_FAILED && (r->code & 0xff) > 3)
		return r->code & 0xff;
	if (r->error == RTID_ERR_TOOL_CRASHED) {
		fflush(NULL);
		signal(-r->code, SIG_DFL);
		raise(-r->code);
	}
	return EXIT_UNKNOWN;
}

static void configure(struct cli_opts *o)
{
	const char *real = getenv("RTID_REAL_TOOL");

	o->cfg.tool = real && *real ? real : NULL;
	/* Nothing may reach stderr on success: CRIU reads stdout and stderr from one
	 * pipe. A bad attestation file therefore just means "not attested". */
	if ((o->cfg.mode == RTID_MODE_SCAN || o->cfg.mode == RTID_MODE_CANARY) &&
	    rtid_attest_load(o->attestation_path ? o->attestation_path : RTID_ATTESTATION_DEFAULT,
			     &o->attestation, NULL, 0) == 0)
		o->cfg.attestation = o->attestation;
}

int cmd_shim(int argc, char **argv)
{
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;
	struct cli_opts o;
	int pid, rc = EXIT_UNKNOWN;

	if (getenv(GUARD)) {
		fprintf(stderr, SHIM ": called by itself (%s is set); refusing to recurse\n", GUARD);
		return EXIT_UNKNOWN;
	}
	if (shim_try_service(argc, argv, &rc))
		return rc; /* rtid serve gave the driver's answer */
	if (!is_query(argc, argv, &pid))
		return pass_through(argv);
	if (cli_opts_init(&o, SHIM) < 0)
		return EXIT_UNKNOWN;
	setenv(GUARD, "1", 1); /* the tool rtid spawns must not be the shim again */
	configure(&o);
	if (rtid_ctx_new(&o.cfg, &ctx) == 0 && rtid_resolve(ctx, pid, &r) == 0)
		rc = reply(&r);
	else
		fprintf(stderr, SHIM ": cannot set up the resolver\n");
	rtid_ctx_free(ctx);
	rtid_attest_free(o.attestation);
	return rc;
}
