/* rtid serve: options, then the daemon (serve.c); status is serve-status/. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "cli/cli.h"
#include "config.h"
#include "driver/driver.h"
#include "proto/service-client.h"
#include "serve/serve.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char serve_help[] =
	"Usage: rtid serve [OPTIONS]\n"
	"Hold one driver attach for this node and answer get-restore-tid and get-state\n"
	"(and, with --actions, lock, checkpoint, restore and unlock) over a unix socket.\n"
	"The cuda-checkpoint shim, 'rtid resolve --backend service' and the library ask\n"
	"it first, and fall back to the real tool when it is absent or fails.\n"
	"Under systemd (rtid.socket) it takes the socket systemd passes and reports\n"
	"readiness; otherwise it runs in the foreground and creates the socket itself.\n\n"
	"  --socket PATH          the socket (default " RTID__SVC_SOCKET_DEFAULT ")  [RTID_SOCKET]\n"
	"  --group NAME           the socket's group (mode 0660; default root only)\n"
	"  --actions              also serve lock, checkpoint, restore and unlock\n"
	"  --action-group NAME    members may ask for actions (default root only)\n"
	"  --libcuda PATH         driver library (default libcuda.so.1)  [RTID_LIBCUDA]\n"
	"  --proc DIR             proc tree for owners and the driver version (default /proc)\n"
	"  --timeout SECONDS      deadline of a query in the driver (default 10)\n"
	"  --action-timeout SECONDS  deadline of an action, lock's own timeout added\n"
	"                         (default 600)\n"
	"  --attach-timeout SECONDS  deadline of the driver attach (default 120)\n"
	"  --client-timeout SECONDS  a client's time to send each message (default 5)\n"
	"  --max-clients N        clients at once, 1.." STR(SERVE_MAX_CLIENTS)
	" (default 64; fewer when the fd\n"
	"                         limit is lower, said at start)\n"
	"  --max-per-uid N        connections of one uid other than root (default\n"
	"                         max-clients / 4)\n"
	"  --workers N            driver attaches at most, 1..64 (default 16): requests for\n"
	"                         different processes run side by side; actions take at\n"
	"                         most N - 1, so N is at least 2 with --actions\n"
	"  --ready-fd N           write \"ready\" to fd N and close it once serving\n"
	"  --quiet                no log line per request (they say: operation, pid, peer\n"
	"                         uid and pid, its pid namespace, outcome, milliseconds)\n"
	"  --version              rtid's version (the daemon's: 'rtid serve status' says\n"
	"                         the running one's)\n"
	"'rtid serve status' asks the running daemon for its counters (see --help there).\n"
	"The worker program, rtid-cuda-worker, is found beside rtid, in ../libexec, or\n"
	"at RTID_WORKER.\n";

enum { O_SOCKET = 0x200, O_GROUP, O_ACTIONS, O_AGROUP, O_LIBCUDA, O_PROC, O_TIMEOUT,
       O_ATIMEOUT, O_ITIMEOUT, O_CTIMEOUT, O_MAXC, O_READY, O_PERUID, O_WORKERS, O_QUIET,
       O_VERSION };

static const struct option longopts[] = {
	{ "socket", 1, NULL, O_SOCKET }, { "group", 1, NULL, O_GROUP },
	{ "actions", 0, NULL, O_ACTIONS }, { "action-group", 1, NULL, O_AGROUP },
	{ "libcuda", 1, NULL, O_LIBCUDA }, { "proc", 1, NULL, O_PROC },
	{ "timeout", 1, NULL, O_TIMEOUT }, { "action-timeout", 1, NULL, O_ATIMEOUT },
	{ "attach-timeout", 1, NULL, O_ITIMEOUT }, { "client-timeout", 1, NULL, O_CTIMEOUT },
	{ "max-clients", 1, NULL, O_MAXC }, { "ready-fd", 1, NULL, O_READY },
	{ "max-per-uid", 1, NULL, O_PERUID }, { "workers", 1, NULL, O_WORKERS },
	{ "quiet", 0, NULL, O_QUIET }, { "version", 0, NULL, O_VERSION },
	{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
};

static int bad(const char *what, const char *val)
{
	fprintf(stderr, "rtid serve: invalid %s: '%s' (see --help)\n", what, val);
	return -1;
}

static int group(const char *name, gid_t *out, bool *have)
{
	struct group gr, *res = NULL;
	char buf[4096];
	int id;

	if (rtid__parse_pid(name, &id) == 0 || strcmp(name, "0") == 0) {
		*out = strcmp(name, "0") == 0 ? 0 : (gid_t)id;
	} else if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 && res) {
		*out = gr.gr_gid;
	} else {
		fprintf(stderr, "rtid serve: no such group: '%s'\n", name);
		return -1;
	}
	*have = true;
	return 0;
}

static int seconds(const char *arg, double *out, const char *what)
{
	return rtid__parse_seconds(arg, out) < 0 ? bad(what, arg) : 0;
}

static int option(struct serve_cfg *cfg, int c, const char *arg)
{
	unsigned n;

	switch (c) {
	case O_SOCKET: cfg->socket_path = arg; return 0;
	case O_GROUP: return group(arg, &cfg->group, &cfg->have_group);
	case O_ACTIONS: cfg->actions = true; return 0;
	case O_QUIET: cfg->quiet = true; return 0;
	case O_AGROUP: return group(arg, &cfg->action_group, &cfg->have_action_group);
	case O_LIBCUDA: cfg->libcuda = arg; return 0;
	case O_PROC: cfg->proc_root = arg; return 0;
	case O_TIMEOUT: return seconds(arg, &cfg->timeout_s, "--timeout");
	case O_ATIMEOUT: return seconds(arg, &cfg->action_timeout_s, "--action-timeout");
	case O_ITIMEOUT: return seconds(arg, &cfg->attach_timeout_s, "--attach-timeout");
	case O_CTIMEOUT: return seconds(arg, &cfg->client_timeout_s, "--client-timeout");
	case O_MAXC:
		if (cli_parse_count(arg, SERVE_MAX_CLIENTS, &cfg->max_clients) < 0)
			return bad("--max-clients", arg);
		return 0;
	case O_PERUID:
		if (cli_parse_count(arg, 1024, &cfg->max_per_uid) < 0)
			return bad("--max-per-uid", arg);
		return 0;
	case O_WORKERS:
		if (cli_parse_count(arg, 64, &cfg->workers) < 0)
			return bad("--workers", arg);
		return 0;
	case O_READY:
		if (cli_parse_count(arg, 1 << 20, &n) < 0 && strcmp(arg, "0") != 0)
			return bad("--ready-fd", arg);
		cfg->ready_fd = strcmp(arg, "0") == 0 ? 0 : (int)n;
		return 0;
	}
	return -1;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_cfg cfg = {
		.socket_path = env_or("RTID_SOCKET", RTID__SVC_SOCKET_DEFAULT),
		.worker = env_or("RTID_WORKER", RTID_WORKER_PATH),
		.libcuda = env_or("RTID_LIBCUDA", "libcuda.so.1"),
		.proc_root = "/proc", .timeout_s = 10, .action_timeout_s = 600,
		.attach_timeout_s = 120, .client_timeout_s = 5, .max_clients = 64, .workers = 16,
		.ready_fd = -1,
	};
	char worker[4096], why[256];
	int c;

	if (argc > 1 && !strcmp(argv[1], "status")) {
		argv[1] = (char *)"rtid serve status"; /* its messages' prefix (getopt's too) */
		return cmd_serve_status(argc - 1, argv + 1);
	}
	/* The daemon reaps its own worker; orphans of others are not its to collect. */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(serve_help, stdout);
			return 0;
		}
		/* As rtid --version: what a unit's ExecStart would run, asked. */
		if (c == O_VERSION) {
			printf("rtid %s\n", RTID_VERSION);
			return 0;
		}
		if (c == '?' || option(&cfg, c, optarg) < 0)
			return 2;
	}
	if (cfg.actions && cfg.workers < 2) {
		fprintf(stderr, "rtid serve: --actions needs --workers 2 or more: one is always "
			"left for queries\n");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "rtid serve: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	/* Where the library's api backend finds its worker; if nowhere, the
	 * daemon still runs, answers worker-failed and says why. */
	if (rtid__worker_path(worker, sizeof(worker), why, sizeof(why)) == 0)
		cfg.worker = worker;
	else
		fprintf(stderr, "rtid serve: %s\n", why);
	/* The worker must not hold the ready fd open: whoever waits on it for
	 * EOF would wait as long as the worker lives. */
	if (cfg.ready_fd >= 0 && fcntl(cfg.ready_fd, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "rtid serve: --ready-fd %d: %s\n", cfg.ready_fd, strerror(errno));
		return 2;
	}
	/* Not back to main: its sweep of strays waits for every child, and a
	 * worker stuck in the kernel, which the daemon leaves behind at a stop
	 * and records (doc/serve.md), would hold the exit for ever. The daemon
	 * has reaped every other child of its own. */
	exit(serve_run(&cfg));
}
