/* Options and environment shared by the rtid subcommands; then (below) no
 * process left behind by them or the shim. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/cov.h"
#include "cli/cli.h"
#include "conf/conf.h"
#include "proc/proc.h"
#include "config.h"

const char cli_common_help[] =
	"  --mode MODE           driver (default), scan, crosscheck or canary   [RTID_MODE]\n"
	"  --backend B           tool (default: spawn cuda-checkpoint) or api (one worker\n"
	"                        process, rtid-cuda-worker, loads libcuda once for the\n"
	"                        batch; found beside rtid, in ../libexec, or at\n"
	"                        RTID_WORKER)\n"
	"                        or service (ask rtid serve at RTID_SOCKET, default\n"
	"                        " RTID_DEFAULT_SOCKET ", which holds one attach per node)\n"
	"  --tool PATH           cuda-checkpoint to run (default: from PATH)\n"
	"                                                             [RTID_REAL_TOOL]\n"
	"  --libcuda PATH        driver library for --backend api (default libcuda.so.1)\n"
	"                                                             [RTID_LIBCUDA]\n"
	"  --proc DIR            proc tree to scan (default /proc)    [RTID_PROC]\n"
	"  --pattern ERE         restore-thread name (default " RTID_PATTERN_DEFAULT ")\n"
	"  --driver-version V    driver version (default: from DIR/driver/nvidia/version)\n"
	"                                                             [RTID_DRIVER_VERSION]\n"
	"  --attestation FILE    per-driver cross-check record (default\n"
	"                        " RTID_DEFAULT_ATTESTATION ")       [RTID_ATTESTATION]\n"
	"  --unattested          let scan mode scan without a clean attestation (warns)\n"
	"  --timeout SECONDS     per driver query (default 60)\n"
	"  --deadline SECONDS    for the whole batch (default none)\n"
	"  --jobs N              driver queries at once, 1..64 (default 8)\n"
	"  --json                one JSON object per pid and line\n";

int cli_parse_count(const char *s, unsigned max, unsigned *out)
{
	int v;

	if (rtid__parse_pid(s, &v) < 0 || (unsigned)v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int bad(const char *prog, const char *what, const char *val)
{
	fprintf(stderr, "%s: invalid %s: '%s' (see --help)\n", prog, what, val ? val : "");
	return -1;
}

int cli_opts_init(struct cli_opts *o, const char *prog)
{
	const char *mode = getenv("RTID_MODE");

	memset(o, 0, sizeof(*o));
	o->cfg = (struct rtid_config){ RTID_CONFIG_INIT };
	/* One name with the shim's settings file; the old one where it is unset. */
	o->cfg.tool = getenv("RTID_REAL_TOOL");
	if (!o->cfg.tool || !*o->cfg.tool)
		o->cfg.tool = getenv("RTID_CUDA_CHECKPOINT");
	if (o->cfg.tool && !*o->cfg.tool)
		o->cfg.tool = NULL;
	o->cfg.libcuda = getenv("RTID_LIBCUDA");
	o->cfg.proc_root = getenv("RTID_PROC");
	o->cfg.driver_version = getenv("RTID_DRIVER_VERSION");
	if (o->cfg.driver_version && !*o->cfg.driver_version)
		o->cfg.driver_version = NULL;
	if (o->cfg.driver_version && !rtid__version_valid(o->cfg.driver_version)) {
		o->bad_env_version = o->cfg.driver_version;
		o->cfg.driver_version = NULL; /* unknown: read from proc, never a wrong one */
	}
	o->attestation_path = getenv("RTID_ATTESTATION");
	if (mode && *mode && rtid_mode_parse(mode, &o->cfg.mode) < 0)
		return bad(prog, "RTID_MODE", mode);
	return 0;
}

static int opt_backend(struct cli_opts *o, const char *arg, const char *prog)
{
	if (strcmp(arg, "tool") == 0)
		o->cfg.backend = RTID_BACKEND_TOOL;
	else if (strcmp(arg, "api") == 0)
		o->cfg.backend = RTID_BACKEND_API;
	else if (strcmp(arg, "service") == 0)
		o->cfg.backend = RTID_BACKEND_SERVICE;
	else
		return bad(prog, "--backend", arg);
	return 1;
}

int cli_opt_common(struct cli_opts *o, int c, const char *arg, const char *prog)
{
	struct rtid_config *cfg = &o->cfg;

	switch (c) {
	case OPT_MODE:
		return rtid_mode_parse(arg, &cfg->mode) < 0 ? bad(prog, "--mode", arg) : 1;
	case OPT_BACKEND:
		return opt_backend(o, arg, prog);
	case OPT_TOOL: cfg->tool = arg; return 1;
	case OPT_LIBCUDA: cfg->libcuda = arg; return 1;
	case OPT_PROC: cfg->proc_root = arg; return 1;
	case OPT_PATTERN: cfg->pattern = arg; return 1;
	case OPT_DRIVER_VERSION:
		o->bad_env_version = NULL;
		return rtid__version_valid(arg) ? (cfg->driver_version = arg, 1)
					       : bad(prog, "--driver-version", arg);
	case OPT_ATTESTATION: o->attestation_path = arg; return 1;
	case OPT_UNATTESTED: cfg->allow_unattested = true; return 1;
	case OPT_TIMEOUT:
		return rtid__parse_seconds(arg, &cfg->timeout_s) < 0 ? bad(prog, "--timeout", arg) : 1;
	case OPT_DEADLINE:
		return rtid__parse_seconds(arg, &cfg->deadline_s) < 0 ? bad(prog, "--deadline", arg) : 1;
	case OPT_JOBS:
		return cli_parse_count(arg, 64, &cfg->jobs) < 0 ? bad(prog, "--jobs", arg) : 1;
	case OPT_JSON: o->json = true; return 1;
	}
	return 0;
}

int cli_check_env(const struct cli_opts *o, const char *prog)
{
	if (!o->bad_env_version)
		return 0;
	fprintf(stderr, "%s: invalid RTID_DRIVER_VERSION: '%s' (a driver version is N.N[.N])\n",
		prog, o->bad_env_version);
	return -1;
}

int cli_load_attestation(struct cli_opts *o, const char *prog)
{
	const char *path = o->attestation_path ? o->attestation_path : RTID_DEFAULT_ATTESTATION;
	char err[512];
	bool trusted = true;
	int r = rtid_attest_load_trusted(path, &o->attestation, &trusted, err, sizeof(err));

	if (r == 0 && !trusted) /* its revocations still count; nothing in it is attested */
		fprintf(stderr, "%s: warning: attestation %s not trusted, the scan is unattested: "
			"%s\n", prog, path, err);
	if (r < 0) {
		if (r == -EINVAL)
			fprintf(stderr, "%s: attestation %s\n", prog, err);
		else
			fprintf(stderr, "%s: attestation %s: %s\n", prog, path, strerror(-r));
		return -1;
	}
	o->cfg.attestation = o->attestation;
	return 0;
}

/* --- No process left behind by the rtid command or the shim. rtid is a child
 * subreaper, so that a tool's descendants that escaped its process group
 * (setsid) become rtid's children when the tool exits; SIGTERM, SIGINT and
 * SIGHUP kill the library's children and every remaining child, then end rtid
 * by the same signal (the conventional 128+N status). Everything here that a
 * handler runs is async-signal-safe. */
static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction saved[3];
static char children_path[64]; /* set once, before any handler can run */

/* Read this process's children from /proc (the kernel's own list: "PID "
 * for each) into v. Returns how many, 0 when there are none or the list
 * cannot be read. Only pids followed by their space are taken, so that one
 * cut off by a full buffer is never misread as another. */
static size_t list_children(pid_t *v, size_t max)
{
	char buf[4096], *p, *sp;
	ssize_t len = rtid__read_at(AT_FDCWD, children_path, buf, sizeof(buf) - 1, 0);
	size_t n = 0;
	int pid;

	if (len < 0)
		return 0;
	buf[len] = '\0';
	for (p = buf; n < max && (sp = strchr(p, ' ')); p = sp + 1) {
		*sp = '\0';
		if (rtid__parse_pid(p, &pid) == 0)
			v[n++] = (pid_t)pid;
	}
	return n;
}

void cli_kill_strays(void)
{
	int saved_errno = errno;
	pid_t v[256];

	/* A stray's own children come to us when it dies: go round until none. */
	for (int round = 0; round < 64; round++) {
		size_t n = list_children(v, sizeof(v) / sizeof(v[0]));

		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			kill(v[i], SIGKILL);
		for (size_t i = 0; i < n; i++)
			while (waitpid(v[i], NULL, 0) < 0 && errno == EINTR)
				;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved_errno;
}

static void on_signal(int sig)
{
	rtid_kill_children();
	cli_kill_strays();
	RTID__COV_DUMP();
	/* SA_RESETHAND made the disposition the default; SA_NODEFER lets it act now. */
	raise(sig);
}

void cli_hygiene_reset_signals(void)
{
	sigset_t none;
	int fd;

	/* Fds 0-2 closed by the caller would be taken by the first sockets and
	 * pipes we open, and a child's standard streams would land on them. */
	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);

	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void cli_hygiene_init(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND | SA_NODEFER };

	sigfillset(&sa.sa_mask);
	snprintf(children_path, sizeof(children_path), "/proc/self/task/%d/children",
		 (int)getpid());
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < 3; i++) {
		sigaction(sigs[i], NULL, &saved[i]);
		/* A signal the caller ignores is ignored here too, as by the real tool. */
		if (saved[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

void cli_hygiene_before_exec(void)
{
	cli_kill_strays();
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	for (size_t i = 0; i < 3; i++)
		sigaction(sigs[i], &saved[i], NULL);
}

/* The next directory of the colon list at *p into out; false at its end. */
bool cli_doctor_next_dir(const char **p, char *out, size_t len)
{
	size_t n = strcspn(*p, ":");

	if (!**p)
		return false;
	snprintf(out, len, "%.*s", (int)n, *p);
	*p += n + ((*p)[n] == ':');
	return true;
}

void cli_doctor_engine_path(const char *root, char *out, size_t len)
{
	const char *list = CLI_ENGINE_PATH;
	char dir[256];
	size_t n = 0;

	out[0] = '\0';
	while (cli_doctor_next_dir(&list, dir, sizeof(dir)) && n < len)
		n += (size_t)snprintf(out + n, len - n, "%s%s%s", n ? ":" : "", root, dir);
}

/* --- the values of the settings (the file's or the environment's) the
 * shim can use, judged one way for the shim and rtid doctor (the file
 * itself: conf/) --- */

#define SECONDS "seconds: a number above 0, at most 1000000, without a unit (2, 0.5)"

const char *cli_conf_unusable(const char *name, const char *value)
{
	struct rtid__matcher m;
	enum rtid_mode mode;
	double sec;
	int n;

	if (!value || !*value)
		return NULL; /* empty is unset: the default */
	if (!strcmp(name, "RTID_MODE"))
		return rtid_mode_parse(value, &mode) == 0 ? NULL : "driver, scan, crosscheck or canary";
	if (!strcmp(name, "RTID_BACKEND"))
		return !strcmp(value, "tool") || !strcmp(value, "api") ? NULL : "tool or api";
	if (!strcmp(name, "RTID_TIMEOUT") || !strcmp(name, "RTID_SERVICE_TIMEOUT") ||
	    !strcmp(name, "RTID_SERVICE_ACTION_TIMEOUT"))
		return rtid__parse_seconds(value, &sec) == 0 ? NULL : SECONDS;
	if (!strcmp(name, "RTID_SERVE_UID"))
		return !strcmp(value, "0") || rtid__parse_pid(value, &n) == 0 ? NULL
		       : "a uid: a number (not a name)";
	if (!strcmp(name, "RTID_UNATTESTED"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL : "1 (scan unattested) or 0";
	if (!strcmp(name, "RTID_PLUGIN_NO_CUDA_ON_ERROR"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL
		       : "1 (dump a process of no word without GPU state) or 0";
	if (!strcmp(name, "RTID_PATTERN")) {
		if (rtid__matcher_init(&m, value) < 0)
			return "a POSIX extended regular expression";
		rtid__matcher_fini(&m);
	}
	return NULL; /* a path, or a name: any value is one the shim can try */
}

const char *cli_conf_env_unusable(const char **value, const char **accepted)
{
	const char *name;

	for (size_t i = 0; (name = rtid__conf_name(i)); i++) {
		const char *v = getenv(name), *why = cli_conf_unusable(name, v);

		if (why) {
			*value = v;
			*accepted = why;
			return name;
		}
	}
	return NULL;
}
