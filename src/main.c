/* The rtid command: subcommands, and the cuda-checkpoint shim when invoked
 * under that name. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "conf/conf.h"
#include "shim/shim.h"
#include "config.h"

static const char main_help[] =
	"Usage: rtid COMMAND [OPTIONS] ...\n"
	"Find the CUDA driver's restore thread of GPU processes, for CRIU.\n\n"
	"Commands:\n"
	"  resolve PID...        the restore thread of each pid (see rtid resolve --help)\n"
	"  validate PID...|--all cross-check pids, write a report, update the attestation\n"
	"  attest show|merge|lift print, merge or lift attestations and reports\n"
	"  serve                 driver attaches for a node, answers over a unix socket\n"
	"  doctor                check this node's setup for CRIU, the shim and rtid serve\n"
	"  help [COMMAND]        this text, or a command's own help\n"
	"  --version             rtid's version\n\n"
	"Installed as 'cuda-checkpoint' (a link earlier on PATH), rtid answers\n"
	"--get-restore-tid --pid P per RTID_MODE and passes every other call to the real\n"
	"tool (RTID_REAL_TOOL, else the next cuda-checkpoint on PATH). Only a verified\n"
	"tid or the driver's none is its own answer; anything else runs the real tool.\n"
	"Shim settings: RTID_MODE, RTID_BACKEND, RTID_TIMEOUT, RTID_PATTERN,\n"
	"RTID_UNATTESTED, RTID_SHIM_LOG and the variables below (see rtid(1)). When rtid\n"
	"serve's socket exists (RTID_SOCKET, default " RTID_DEFAULT_SOCKET ") the shim asks\n"
	"the daemon first, waiting at most RTID_SERVICE_TIMEOUT seconds (default 2).\n\n"
	"Modes (--mode / RTID_MODE):\n"
	"  driver      ask the driver (cuda-checkpoint or the driver API); the default\n"
	"  scan        use /proc/PID/task/*/comm when exactly one thread matches, its name\n"
	"              is stable, and the driver version has a clean attestation;\n"
	"              otherwise ask the driver and report why (fallback)\n"
	"  crosscheck  ask both, return the driver's answer, report agree/agree-none/mismatch\n"
	"  canary      cross-check the first pid that can tell; on agreement scan the rest\n\n"
	"Common options:\n";

static void usage(FILE *f)
{
	fprintf(f, "%s%s", main_help, cli_common_help);
}

static void conf_note(void *ctx, const char *what)
{
	(void)ctx;
	fprintf(stderr, "rtid: %s\n", what);
}

/* argv[0] is the command's name. Every command but doctor (which reads and
 * judges the file itself) takes the settings file as the shim does: what the
 * environment lacks (doc/shim.md), so that resolve, serve and serve status
 * find the real tool and the socket the shim finds. */
static int dispatch(int argc, char **argv)
{
	bool help = argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
	char conf_buf[4096];
	static char name[64];
	const char *cmd = argv[0];

	if (!help && strcmp(cmd, "doctor"))
		rtid__conf_load(rtid__conf_program_path(conf_buf, sizeof(conf_buf)), NULL, conf_note,
				NULL);
	/* Every command's own messages (getopt's included) begin "rtid CMD: ". */
	snprintf(name, sizeof(name), "rtid %s", cmd);
	argv[0] = name;
	if (strcmp(cmd, "resolve") == 0)
		return cmd_resolve(argc, argv);
	if (strcmp(cmd, "validate") == 0)
		return cmd_validate(argc, argv);
	if (strcmp(cmd, "attest") == 0)
		return cmd_attest(argc, argv);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc, argv);
	if (strcmp(cmd, "doctor") == 0)
		return cmd_doctor(argc, argv);
	fprintf(stderr, "rtid: unknown command '%s' (see rtid --help)\n", cmd);
	return 2;
}

static int run(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	if (strcmp(name ? name + 1 : argv[0], "cuda-checkpoint") == 0)
		return cmd_shim(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("rtid %s\n", RTID_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 && argc > 2) {
		/* rtid help X is rtid X --help, so that the two never differ. */
		char *sub[] = { argv[2], "--help", NULL };

		if (strcmp(argv[2], "help") != 0 && strcmp(argv[2], "--version") != 0 &&
		    strcmp(argv[2], "-h") != 0 && strcmp(argv[2], "--help") != 0)
			return dispatch(2, sub);
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	return dispatch(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	int rc;

	cli_hygiene_reset_signals();
	cli_hygiene_init();
	rc = run(argc, argv);
	cli_kill_strays(); /* what the tools' descendants left */
	return rc;
}
