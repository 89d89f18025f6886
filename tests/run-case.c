/* The case runner: mount the fake /proc for one case file, resolve its pids in
 * every mode the case expects, through the library and through the rtid
 * command, and compare with the expectations. Always unmounts.
 *
 *   run-case CASEFILE      (FAKEPROC, MOCK_TOOL, RTID_BIN from the environment)
 *
 * Exit: 0 all expectations held; 1 some failed; 77 FUSE unusable here (1 when
 * RTID_REQUIRE_FUSE=1). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "casefile.h"
#include "fakeproc-run.h"
#include "helpers.h"
#include "run-case.h"

extern char **environ;

static volatile pid_t fakeproc_pid = -1;
static char mnt[256];

/* Async-signal-safe: stop the daemon (which unmounts), then make sure. */
static void unmount_now(void)
{
	fakeproc_stop(fakeproc_pid, mnt);
	fakeproc_pid = -1;
}

static void on_signal(int sig)
{
	unmount_now();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void control(const char *cmd)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rtid-control", mnt);
	f = fopen(path, "w");
	if (!f || fputs(cmd, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "run-case: cannot write %s\n", path);
		exit(1);
	}
}

static int run_all(const struct casefile *c, struct runner *rn)
{
	int fails = 0;

	for (int mode = 0; mode < 4; mode++) {
		unsigned bit = 1u << mode;
		bool wanted = false;

		for (size_t i = 0; i < c->nexpects; i++)
			wanted |= (c->expects[i].modes & bit) != 0;
		if (!wanted)
			continue;
		for (int b = 0; b < 2; b++)
		for (int via = 0; via < 2; via++) {
			struct got *g;

			if (!(c->backends & (1u << b)))
				continue;
			rn->backend = (enum rtid_backend)b;
			g = calloc(c->npids, sizeof(*g));

			control("reset\n");
			truncate(rn->log, 0);
			if (via == 0)
				rc_run_lib(c, rn, (enum rtid_mode)mode, g);
			else
				rc_run_cli(c, rn, (enum rtid_mode)mode, g);
			rc_count_calls(c, rn, g);
			fails += rc_check(c, (enum rtid_mode)mode,
					  via ? (b ? "cli, api" : "cli") : (b ? "lib, api" : "lib"), g, rn);
			free(g);
		}
	}
	return fails;
}

int main(int argc, char **argv)
{
	struct casefile *c = NULL;
	struct runner rn = { 0 };
	const char *why;
	char err[512], *dir;
	int fails;

	if (argc != 2) {
		fprintf(stderr, "usage: run-case CASEFILE\n");
		return 2;
	}
	if (cf_load(argv[1], &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "run-case: %s\n", err);
		return 1;
	}
	if ((why = fuse_unusable())) {
		cf_free(c);
		return skip_or_fail(argv[1], why);
	}
	if (!getenv("RTID_TIME_SCALE"))
		setenv("RTID_TIME_SCALE", "0.01", 1);
	dir = tmp_dir();
	snprintf(mnt, sizeof(mnt), "%s/proc", dir);
	mkdir(mnt, 0755);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	fakeproc_pid = fakeproc_start(env_path("FAKEPROC"), argv[1], mnt, NULL);
	if (fakeproc_pid < 0) {
		fprintf(stderr, "run-case: %s: fakeproc did not mount on %s\n", argv[1], mnt);
		rm_tree(dir);
		free(dir);
		cf_free(c);
		return 1;
	}
	rc_prepare(c, &rn, dir, mnt, argv[1]);
	fails = run_all(c, &rn);
	unmount_now();
	rc_release(&rn);
	rm_tree(dir);
	free(dir);
	printf("%s: %s (%s)\n", c->path, fails ? "FAILED" : "ok", c->title);
	cf_free(c);
	return fails ? 1 : 0;
}
