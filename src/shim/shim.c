/* The drop-in cuda-checkpoint: rtid installed under that name, earlier on
 * PATH than the real tool. Its rule: never worse than the real tool alone.
 * "--get-restore-tid --pid P" is answered by rtid (RTID_MODE, default driver)
 * only with a definite answer of the driver: a verified tid (the tid and a
 * newline on stdout, nothing else) or the driver's "none" (exit 1 or 3, as
 * the tool). Anything else (a bad setting, a worker that cannot start, a
 * tool that failed or printed garbage, a timeout) is a failure of rtid's own:
 * the real tool is exec'd with the original argv and its answer stands, as
 * CRIU reads any non-zero exit as "no CUDA here". Every other invocation is
 * exec'd unchanged to the real tool, but one that names a thread where a
 * process is expected, which is refused first, as the tool refuses a pid it
 * cannot take (refuse_thread). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest/attest.h"
#include "basic/basic.h"
#include "basic/cov.h"
#include "cli/cli.h"
#include "conf/conf.h"
#include "proc/proc.h"
#include "rules/rules.h"
#include "shim/shim.h"
#include "config.h"

#define STR_(x) #x
#define STR(x) STR_(x)
/* rtid's ELF note (RTID__NOTE_NAME, RTID__NOTE_TYPE, its text the version),
 * here because every rtid program links the shim: another version and the
 * static build carry it too, so that a shim knows any rtid on PATH by what it
 * is and never runs one as the real tool (rtid__rtid_note reads it). In a
 * note section of its own: the linker gives it a note segment, which strip
 * keeps. */
__asm__(".pushsection .note.rtid, \"a\", @note\n"
	"\t.balign 4\n"
	"\t.long 2f - 1f\n"
	"\t.long 4f - 3f\n"
	"\t.long " STR(RTID__NOTE_TYPE) "\n"
	"1:\t.asciz \"" RTID__NOTE_NAME "\"\n"
	"2:\t.balign 4\n"
	"3:\t.asciz \"" RTID_VERSION "\"\n"
	"4:\t.balign 4\n"
	"\t.popsection\n");

#define SHIM "cuda-checkpoint (rtid shim)"
#define EXIT_UNKNOWN 231 /* CUDA_ERROR_UNKNOWN (999) truncated to 8 bits */
#define EXIT_INVALID_PID 1 /* CUDA_ERROR_INVALID_VALUE: the tool on a pid it cannot take */
#define GUARD "RTID_SHIM_ACTIVE"
/* No timeout of rtid's own unless RTID_TIMEOUT: the real tool has none. */
#define NO_TIMEOUT 1e7

/* The real tool: RTID_REAL_TOOL, else the next cuda-checkpoint on PATH that
 * is no rtid: neither this one (nor a copy of it) nor another build (another
 * version, the static build), known by rtid's note. NULL and why (for stderr
 * and the log) when there is none. */
static char *real_tool(char *why, size_t len)
{
	const char *env = getenv("RTID_REAL_TOOL");
	char *path = NULL, ver[64];

	if (rtid__tool_find(env && *env ? env : "cuda-checkpoint", &path) < 0) {
		if (env && *env)
			snprintf(why, len, "RTID_REAL_TOOL=%s: no such executable", env);
		else
			snprintf(why, len, "no real cuda-checkpoint found: set RTID_REAL_TOOL, or put "
				 "the real tool on PATH after the shim");
		return NULL;
	}
	if (rtid__is_self(path))
		snprintf(why, len, "RTID_REAL_TOOL (%s) is the shim itself", path);
	else if (rtid__rtid_note(path, ver, sizeof(ver)) == 1)
		snprintf(why, len, "RTID_REAL_TOOL (%s) is another rtid (%s), not the real tool",
			 path, ver);
	else
		return path;
	free(path);
	return NULL;
}

/* The call's arguments, whole, for the log (cut with "..." past ARGS_MAX). */
#define ARGS_MAX 1024

static const char *args_of(char **argv, char buf[ARGS_MAX])
{
	size_t n = 0;

	/* With an argument, the first pass writes buf; without, it is unused. */
	for (int i = 1; argv[i] && n < ARGS_MAX; i++)
		n += (size_t)snprintf(buf + n, ARGS_MAX - n, "%s%s", i > 1 ? " " : "", argv[i]);
	if (n >= ARGS_MAX)
		strcpy(buf + ARGS_MAX - 4, "...");
	return argv[1] ? buf : "(no arguments)";
}

static int pass_through(char **argv)
{
	char why[1200], args[ARGS_MAX], *path = real_tool(why, sizeof(why));
	int e;

	if (!path) {
		fprintf(stderr, SHIM ": %s\n", why);
		shim_note("%s: %s: exit %d", args_of(argv, args), why, EXIT_UNKNOWN);
		return EXIT_UNKNOWN;
	}
	shim_note("%s: to the real tool %s", args_of(argv, args), path);
	setenv(GUARD, "1", 1);
	cli_hygiene_before_exec();
	RTID__COV_DUMP();
	execv(path, argv);
	e = errno;
	RTID__COV_RESUME();
	fprintf(stderr, SHIM ": cannot run %s: %s\n", path, strerror(e));
	shim_note("cannot run %s: %s: exit %d", path, strerror(e), EXIT_UNKNOWN);
	free(path);
	return EXIT_UNKNOWN;
}

/* The pid of a --get-restore-tid query in either of the plugin's spellings,
 * or 0 for any other call (rtid__parse_pid takes no pid 0). */
static int query_pid(int argc, char **argv)
{
	int pid;

	if (argc != 4)
		return 0;
	if (!strcmp(argv[1], "--get-restore-tid") && !strcmp(argv[2], "--pid") &&
	    rtid__parse_pid(argv[3], &pid) == 0)
		return pid;
	if (!strcmp(argv[1], "--pid") && !strcmp(argv[3], "--get-restore-tid") &&
	    rtid__parse_pid(argv[2], &pid) == 0)
		return pid;
	return 0;
}

/* What the call asks of its --pid, in the request rule's words, and the
 * tool's verb for it: a state call (which takes a thread) also when it asks
 * nothing of a process (-h, a lone --pid), which the tool answers without
 * acting. The strictest kind wins: --get-state beside an action is an
 * action. */
static void call_kind(int argc, char **argv, enum rtid__req_kind *kind, const char **verb)
{
	*kind = RTID__REQ_STATE;
	*verb = "get state of";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--get-restore-tid") && *kind != RTID__REQ_ACTION) {
			*kind = RTID__REQ_QUERY, *verb = "get restore thread ID for";
		} else if (!strcmp(a, "--toggle")) {
			*kind = RTID__REQ_ACTION, *verb = "toggle";
		} else if (!strcmp(a, "--action") && i + 1 < argc) {
			*kind = RTID__REQ_ACTION, *verb = argv[++i];
		} else if (!strcmp(a, "--timeout") || !strcmp(a, "--device-map") ||
			   !strcmp(a, "--pid")) {
			i++; /* a value, never an option; past the last, the loop ends */
		}
	}
}

/* A thread where a process is expected is refused before anyone is asked,
 * the real tool included: cuda-checkpoint takes a tid as a pid, and acting on
 * a thread can harm the process. The request rule decides (rules/), as in the
 * library and in rtid serve, over the facts of proc/ as the caller sees them
 * (the tool's own ptrace check stands for the owner); --get-state takes a
 * thread, as CRIU asks it with the restore tid. Every --pid the call holds
 * is judged. Returns true after printing the refusal as the tool answers an
 * invalid pid (*rc its exit status). */
static bool refuse_thread(int argc, char **argv, int *rc)
{
	const char *proc = getenv("RTID_PROC"), *verb;
	enum rtid__req_kind kind;

	call_kind(argc, argv, &kind, &verb);
	if (kind == RTID__REQ_STATE)
		return false;
	for (int i = 1; i + 1 < argc; i++) {
		struct rtid__req_facts f = { .kind = kind };
		int pid;

		if (strcmp(argv[i], "--pid") || rtid__parse_pid(argv[i + 1], &pid) < 0)
			continue;
		rtid__request_facts(proc && *proc ? proc : "/proc", pid, &f);
		if (rtid__request_rule(&f) != RTID__REQ_A_THREAD)
			continue;
		fprintf(stderr, "Could not %s process ID %d: \"invalid argument\"\n", verb, pid);
		shim_note("%s --pid %d: %s (of process %d): refused, the real tool not run", verb,
			  pid, rtid__request_why(RTID__REQ_A_THREAD), f.tgid);
		*rc = EXIT_INVALID_PID;
		return true;
	}
	return false;
}

/* A definite answer of the driver, printed as the real tool prints it. */
static int reply(const struct rtid_result *r)
{
	if (r->tid > 0) {
		printf("%d\n", r->tid);
		return 0;
	}
	fprintf(stderr, "Could not get restore thread ID for process ID %d: "
		"\"invalid argument\"\n", r->pid);
	return r->code == 3 ? 3 : 1; /* CUDA_ERROR_NOT_INITIALIZED, else INVALID_VALUE */
}

/* The settings rtid resolve takes, from the environment (which the settings
 * file filled), already found usable. Returns 0, or -1 after noting that
 * RTID_DRIVER_VERSION (an environment-only setting) is malformed. */
static int configure(struct cli_opts *o, const char *tool)
{
	const char *backend = getenv("RTID_BACKEND"), *timeout = getenv("RTID_TIMEOUT");
	const char *pattern = getenv("RTID_PATTERN"), *unatt = getenv("RTID_UNATTESTED");

	/* The mode, backend and timeout were found usable (cli_conf_env_unusable):
	 * cli_opts_init has nothing to say on stderr. */
	(void)cli_opts_init(o, SHIM);
	o->cfg.tool = tool;
	o->cfg.timeout_s = NO_TIMEOUT;
	/* cfg.jobs stays the default: the shim resolves one pid, one query. */
	o->cfg.backend = backend && !strcmp(backend, "api") ? RTID_BACKEND_API : RTID_BACKEND_TOOL;
	if (timeout && *timeout)
		(void)rtid__parse_seconds(timeout, &o->cfg.timeout_s);
	if (o->bad_env_version)
		return shim_note("bad RTID_DRIVER_VERSION '%s'", o->bad_env_version), -1;
	if (pattern && *pattern)
		o->cfg.pattern = pattern;
	o->cfg.allow_unattested = unatt && !strcmp(unatt, "1");
	/* Read only where the mode's rule reads it (the scan's trust and the
	 * canary's revocation; a cross-check compares whatever the trust). A bad
	 * or untrusted attestation file just means "not attested": nothing may
	 * be printed, since CRIU reads stdout and stderr from one pipe. */
	if (o->cfg.mode == RTID_MODE_SCAN || o->cfg.mode == RTID_MODE_CANARY)
		if (rtid_attest_load_trusted(o->attestation_path ? o->attestation_path
								 : RTID_DEFAULT_ATTESTATION,
					     &o->attestation, NULL, NULL, 0) == 0)
			o->cfg.attestation = o->attestation;
	return 0;
}

/* Resolve pid per the configuration. Returns 0 when *r holds a definite
 * answer of the driver; -1 (noted why) when the real tool must answer. */
static int resolve(const struct cli_opts *o, int pid, struct rtid_result *r)
{
	struct rtid_ctx *ctx = NULL;
	int e = rtid_ctx_new(&o->cfg, &ctx);

	if (e == 0)
		e = rtid_resolve(ctx, pid, r);
	rtid_ctx_free(ctx);
	if (e < 0)
		return shim_note("pid %d: cannot set up the resolver: %s", pid, strerror(-e)), -1;
	if (r->error)
		return shim_note("pid %d: %s: %s", pid, rtid_error_name(r->error), r->detail), -1;
	return 0;
}

/* What is wrong with the settings file goes to RTID_SHIM_LOG, never to
 * stderr: CRIU reads stdout and stderr from one pipe. Held until the file is
 * read whole: RTID_SHIM_LOG may be a line after the fault. */
struct conf_faults {
	char what[8][320];
	unsigned n, more;
};

static void conf_note(void *ctx, const char *what)
{
	struct conf_faults *h = ctx;

	if (h->n < 8)
		snprintf(h->what[h->n++], sizeof(h->what[0]), "%s", what);
	else
		h->more++;
}

static void conf_load(void)
{
	static struct conf_faults h; /* 2.5 KiB: not on the stack of every call */
	char buf[4096];

	h.n = h.more = 0;
	rtid__conf_load(rtid__conf_program_path(buf, sizeof(buf)), NULL, conf_note, &h);
	for (unsigned i = 0; i < h.n; i++)
		shim_note("%s", h.what[i]);
	if (h.more)
		shim_note("and %u more faults of the settings file", h.more);
}

/* What the scan had to say about an answer, for the log: the cross-check's
 * verdict (crosscheck, and canary where attested), or why the scan was not
 * used; "" in driver mode. The answer is the driver's either way: this is
 * how an operator sees whether the mode did what it was set for. */
static const char *scan_said(const struct rtid_result *r, char *buf, size_t len)
{
	if (r->crosscheck == RTID_XC_MISMATCH && r->scan_tid <= 0)
		snprintf(buf, len, "; cross-check: mismatch (the scan named none)");
	else if (r->crosscheck == RTID_XC_MISMATCH)
		snprintf(buf, len, "; cross-check: mismatch (the scan named %d)", r->scan_tid);
	else if (r->crosscheck != RTID_XC_NONE)
		snprintf(buf, len, "; cross-check: %s", rtid_xcheck_name(r->crosscheck));
	else if (r->fallback != RTID_FB_NONE)
		snprintf(buf, len, "; scan not used: %s", rtid_fallback_name(r->fallback));
	else
		buf[0] = '\0';
	return buf;
}

int cmd_shim(int argc, char **argv)
{
	struct rtid_result r;
	struct cli_opts o = { 0 };
	const char *bad, *value, *accepted;
	bool to_tool = false, answered;
	char *tool, why[1200], said[80];
	int pid, rc;

	if (getenv(GUARD)) {
		fprintf(stderr, SHIM ": called by itself (%s is set); refusing to recurse\n", GUARD);
		shim_note("called by itself (%s is set: the real tool is another shim?): refused, "
			  "exit %d", GUARD, EXIT_UNKNOWN);
		return EXIT_UNKNOWN;
	}
	/* Before anything reads a setting: the file fills what the environment lacks. */
	conf_load();
	if (refuse_thread(argc, argv, &rc))
		return rc;
	/* A setting it cannot use is a failure of rtid's own: neither rtid serve
	 * nor the resolver is asked, and the real tool answers (doc/shim.md);
	 * rtid doctor judges the file by the same function. */
	if ((bad = cli_conf_env_unusable(&value, &accepted))) {
		shim_note("bad %s '%s' (%s): neither rtid serve nor rtid asked", bad, value, accepted);
		return pass_through(argv);
	}
	if (shim_try_service(argc, argv, &rc, &to_tool))
		return rc; /* rtid serve gave the driver's answer */
	if (to_tool || (pid = query_pid(argc, argv)) == 0)
		return pass_through(argv);
	/* Sources in order: rtid's resolver, then the real tool for anything else.
	 * rtid's own queries go to the same real tool that a fallback would run. */
	tool = real_tool(why, sizeof(why)); /* none: pass_through says why */
	setenv(GUARD, "1", 1); /* the tool rtid spawns must not be the shim again */
	answered = tool && configure(&o, tool) == 0 && resolve(&o, pid, &r) == 0;
	rtid_attest_free(o.attestation);
	free(tool);
	if (!answered)
		return pass_through(argv); /* which sets the guard again for the tool */
	rc = reply(&r);
	shim_note("--get-restore-tid --pid %d: answered by rtid (%s): %s%.0d%s", pid,
		  rtid_source_name(r.source), r.tid > 0 ? "tid " : "none", r.tid > 0 ? r.tid : 0,
		  scan_said(&r, said, sizeof(said)));
	return rc;
}
