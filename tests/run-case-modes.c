/* Running one case's pids through the library and through rtid, reading the
 * mocks' call log, and comparing with the case's expectations. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "helpers.h"
#include "run-case.h"

extern char **environ;

#define CASE_TIMEOUT 10.0 /* seconds, when a case sets none: a hang must end */

static void name_or_dash(char *dst, size_t len, const char *name)
{
	snprintf(dst, len, "%s", name ? name : "-");
}

void rc_prepare(const struct casefile *c, struct runner *rn, const char *dir, const char *mnt,
		const char *casefile)
{
	char version[32];

	rn->mnt = mnt;
	if (!realpath(casefile, rn->casefile))
		snprintf(rn->casefile, sizeof(rn->casefile), "%s", casefile);
	snprintf(rn->log, sizeof(rn->log), "%s/mock.log", dir);
	snprintf(rn->attest, sizeof(rn->attest), "%s/attestation.json", dir);
	setenv("RTID_CASE", rn->casefile, 1);
	setenv("RTID_MOCK_LOG", rn->log, 1);
	rtid_attest_new(&rn->att);
	/* The attestation is for the version the resolver is told of, if any. */
	if (c->given_version && c->attest != CF_ATTEST_NONE)
		snprintf(version, sizeof(version), "%s", c->given_version);
	if (c->attest != CF_ATTEST_NONE &&
	    (c->given_version || (c->version_file &&
				  rtid__parse_driver_version(c->version_file, strlen(c->version_file),
							    version, sizeof(version)) == 0)))
		rtid_attest_add(rn->att, version, c->attest == CF_ATTEST_CLEAN ? 10 : 50, 0,
				c->attest == CF_ATTEST_REVOKED, false);
	if (rtid_attest_save(rn->att, rn->attest) < 0) {
		fprintf(stderr, "run-case: cannot write %s\n", rn->attest);
		exit(1);
	}
	if (c->attest == CF_ATTEST_UNSAFE) { /* others may write it: read as the resolver does */
		chmod(rn->attest, 0664);
		rtid_attest_free(rn->att);
		rn->att = NULL;
		rtid_attest_load_trusted(rn->attest, &rn->att, NULL, NULL, 0);
	}
}

void rc_release(struct runner *rn)
{
	rtid_attest_free(rn->att);
}

static const char *libcuda_of(const struct casefile *c)
{
	return env_path(c->old_libcuda ? "MOCK_LIBCUDA_OLD" : "MOCK_LIBCUDA");
}

void rc_run_lib(const struct casefile *c, struct runner *rn, enum rtid_mode mode, struct got *g)
{
	struct rtid_config cfg = {
		RTID_CONFIG_INIT,
		.mode = mode, .proc_root = rn->mnt, .tool = env_path("MOCK_TOOL"),
		.attestation = rn->att, .pattern = c->pattern, .jobs = c->jobs,
		.timeout_s = c->timeout_s > 0 ? c->timeout_s : CASE_TIMEOUT,
		.deadline_s = c->deadline_s, .backend = rn->backend, .libcuda = libcuda_of(c),
		.driver_version = c->given_version,
	};
	struct rtid_result *r = calloc(c->npids, sizeof(*r));
	struct rtid_ctx *ctx = NULL;

	if (!r || rtid_ctx_new(&cfg, &ctx) < 0 || rtid_resolve_many(ctx, c->pids, c->npids, r) < 0) {
		fprintf(stderr, "run-case: the library refused the case's configuration\n");
		exit(1);
	}
	for (size_t i = 0; i < c->npids; i++) {
		g[i] = (struct got){ .pid = r[i].pid, .tid = r[i].tid, .present = true };
		name_or_dash(g[i].source, sizeof(g[i].source), rtid_source_name(r[i].source));
		name_or_dash(g[i].fallback, sizeof(g[i].fallback), rtid_fallback_name(r[i].fallback));
		name_or_dash(g[i].crosscheck, sizeof(g[i].crosscheck),
			     rtid_xcheck_name(r[i].crosscheck));
		name_or_dash(g[i].error, sizeof(g[i].error), rtid_error_name(r[i].error));
	}
	rtid_ctx_free(ctx);
	free(r);
}

static void str_field(json_t *o, const char *k, char *dst, size_t len)
{
	name_or_dash(dst, len, json_string_value(json_object_get(o, k)));
}

/* One JSON line of rtid's output into the slot of its pid. */
static void take_line(const struct casefile *c, const char *line, struct got *g)
{
	json_t *o = json_loads(line, 0, NULL);
	int pid = o ? (int)json_integer_value(json_object_get(o, "pid")) : 0;

	for (size_t i = 0; i < c->npids; i++) {
		if (c->pids[i] != pid || g[i].present)
			continue;
		g[i].present = true;
		g[i].pid = pid;
		g[i].tid = (int)json_integer_value(json_object_get(o, "tid"));
		str_field(o, "source", g[i].source, sizeof(g[i].source));
		str_field(o, "fallback", g[i].fallback, sizeof(g[i].fallback));
		str_field(o, "crosscheck", g[i].crosscheck, sizeof(g[i].crosscheck));
		str_field(o, "error", g[i].error, sizeof(g[i].error));
		break;
	}
	json_decref(o);
}

static int cli_argv(const struct casefile *c, const struct runner *rn, enum rtid_mode mode,
		    char **argv, char (*num)[24])
{
	int n = 0;

	argv[n++] = (char *)env_path("RTID_BIN");
	argv[n++] = "resolve";
	argv[n++] = "--json";
	argv[n++] = "--mode";
	argv[n++] = (char *)rtid_mode_name(mode);
	argv[n++] = "--proc";
	argv[n++] = (char *)rn->mnt;
	argv[n++] = "--tool";
	argv[n++] = (char *)env_path("MOCK_TOOL");
	argv[n++] = "--attestation";
	argv[n++] = (char *)rn->attest;
	argv[n++] = "--timeout";
	snprintf(num[0], 24, "%g", c->timeout_s > 0 ? c->timeout_s : CASE_TIMEOUT);
	argv[n++] = num[0];
	if (c->given_version) {
		argv[n++] = "--driver-version";
		argv[n++] = c->given_version;
	}
	if (c->deadline_s > 0) {
		argv[n++] = "--deadline";
		snprintf(num[1], 24, "%g", c->deadline_s);
		argv[n++] = num[1];
	}
	if (c->jobs) {
		argv[n++] = "--jobs";
		snprintf(num[2], 24, "%u", c->jobs);
		argv[n++] = num[2];
	}
	if (c->pattern) {
		argv[n++] = "--pattern";
		argv[n++] = c->pattern;
	}
	if (rn->backend == RTID_BACKEND_API) {
		argv[n++] = "--backend";
		argv[n++] = "api";
		argv[n++] = "--libcuda";
		argv[n++] = (char *)libcuda_of(c);
	}
	return n;
}

void rc_run_cli(const struct casefile *c, struct runner *rn, enum rtid_mode mode, struct got *g)
{
	char num[3][24], out[600], *line = NULL, (*pids)[24] = calloc(c->npids, 24);
	char **argv = calloc(c->npids + 32, sizeof(*argv));
	posix_spawn_file_actions_t fa;
	size_t cap = 0;
	int n, st;
	pid_t pid;
	FILE *f;

	n = cli_argv(c, rn, mode, argv, num);
	for (size_t i = 0; i < c->npids; i++) {
		snprintf(pids[i], 24, "%d", c->pids[i]);
		argv[n++] = pids[i];
	}
	snprintf(out, sizeof(out), "%s.out", rn->log);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0) {
		fprintf(stderr, "run-case: cannot run %s\n", argv[0]);
		exit(1);
	}
	posix_spawn_file_actions_destroy(&fa);
	rn->cli_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	f = fopen(out, "r");
	while (f && getline(&line, &cap, f) > 0)
		take_line(c, line, g);
	if (f)
		fclose(f);
	free(line);
	free(argv);
	free(pids);
}

void rc_count_calls(const struct casefile *c, struct runner *rn, struct got *g)
{
	FILE *f = fopen(rn->log, "r");
	char *line = NULL;
	size_t cap = 0;

	rn->unexpected = 0;
	rn->attaches = 0;
	rn->left_running = 0;
	while (f && getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		const char *ev = json_string_value(json_object_get(o, "event"));
		int pid = (int)json_integer_value(json_object_get(o, "pid"));

		if (ev && strcmp(ev, "unexpected") == 0)
			rn->unexpected++;
		if (ev && strcmp(ev, "cuInit") == 0)
			rn->attaches++;
		/* Nothing the resolver started may outlive the run. */
		if (kill((pid_t)json_integer_value(json_object_get(o, "self")), 0) == 0)
			rn->left_running++;
		for (size_t i = 0; ev && strcmp(ev, "start") == 0 && i < c->npids; i++)
			g[i].calls += c->pids[i] == pid;
		json_decref(o);
	}
	if (f)
		fclose(f);
	free(line);
}
