/* rtid doctor: what a node needs for CRIU to reach the driver through the
 * shim and rtid serve, each checked, and for each failure what to do. CRIU
 * loads its CUDA plugin from its libdir and finds cuda-checkpoint on the
 * engines' PATH, whose -h it runs at its start (run here the same way:
 * cli_doctor_help); the shim's side is checked in cli-doctor-shim.c.
 * --root DIR checks a tree rather than / (tests, images). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "proc/proc.h"

static const char doctor_help[] =
	"Usage: rtid doctor [--json] [--root DIR]\n"
	"Check this node's setup for CRIU with the shim and rtid serve, and say what\n"
	"is wrong and how to fix it: the shim first on the PATH the engines give CRIU,\n"
	"cuda-checkpoint -h as CRIU's CUDA plugin runs it (exit 0, --action in its\n"
	"first 2047 bytes), the real tool after it (the same, as the shim runs it; no\n"
	"other rtid), the shim's settings file and each value in it, rtid serve\n"
	"(reachable, its socket root's, attached, serving actions; asked with its\n"
	"status request), CRIU (4.0 or later) and its CUDA plugin, the NVIDIA driver\n"
	"and its GPUs, and whether the scan is attested for that driver (a fault only\n"
	"when the shim's mode scans).\n\n"
	"  --json      one JSON object: {\"ok\": ..., \"checks\": [{name, ok, detail, fix}]}\n"
	"  --root DIR  check the tree at DIR instead of / (the socket and settings file\n"
	"              named by RTID_SOCKET and RTID_SHIM_CONF are taken as they are;\n"
	"              DIR's criu is run here for its version: give only trees you trust)\n"
	"Exit status: 0 when every check passes, 1 otherwise, 2 usage error.\n";

/* --- cuda-checkpoint -h, as CRIU's CUDA plugin runs it --- */
#define HELP_WINDOW 2047 /* what the plugin reads of -h: its 2048-byte buffer, less the NUL */
#define HELP_WAIT_S 10.0

extern char **environ;

/* The environment for the tool: ours with PATH the engines' PATH (under the
 * root), RTID_SHIM_ACTIVE set as the shim sets it for the real tool or unset
 * as CRIU leaves it, and no LD_LIBRARY_PATH or LD_PRELOAD: an engine gives
 * CRIU neither, and a libcuda.so.1 found only through the caller's own must
 * not pass. NULL when out of memory. */
static char **help_env(const struct cli_doctor *d, bool behind_shim, char *path, size_t len)
{
	const char *list = CLI_ENGINE_PATH;
	char dir[256], **env;
	size_t n = 0, k = 0;
	int at = snprintf(path, len, "PATH=");

	while (cli_doctor_next_dir(&list, dir, sizeof(dir)) && at > 0 && (size_t)at < len)
		at += snprintf(path + at, len - (size_t)at, "%s%s%s", at > 5 ? ":" : "", d->root, dir);
	while (environ[n])
		n++;
	if (!(env = calloc(n + 3, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PATH=", 5) && strncmp(environ[i], "RTID_SHIM_ACTIVE=", 17) &&
		    strncmp(environ[i], "LD_LIBRARY_PATH=", 16) && strncmp(environ[i], "LD_PRELOAD=", 11))
			env[k++] = environ[i];
	env[k++] = path;
	if (behind_shim)
		env[k++] = (char *)"RTID_SHIM_ACTIVE=1";
	return env;
}

/* Read what the child writes until both pipes end or the deadline: the first
 * HELP_WINDOW bytes of both streams in the order they came (the plugin reads
 * one pipe for both), and the start of stderr. False at the deadline. */
static bool help_read(int fd[2], double until, char *seen, size_t *n_seen, char *err, size_t cap)
{
	size_t n_err = 0;

	while (fd[0] >= 0 || fd[1] >= 0) {
		struct pollfd p[2] = { { fd[0], POLLIN, 0 }, { fd[1], POLLIN, 0 } };
		double left = until - rtid__now();
		char buf[4096];

		if (left <= 0)
			return false;
		if (poll(p, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return false;
		for (int i = 0; i < 2; i++) {
			ssize_t r = p[i].revents ? read(fd[i], buf, sizeof(buf)) : -1;
			size_t take;

			if (!p[i].revents || (r < 0 && errno == EINTR))
				continue;
			if (r <= 0) {
				close(fd[i]);
				fd[i] = -1;
				continue;
			}
			take = (size_t)r < HELP_WINDOW - *n_seen ? (size_t)r : HELP_WINDOW - *n_seen;
			memcpy(seen + *n_seen, buf, take);
			*n_seen += take;
			take = i == 0 ? 0 : (size_t)r < cap - 1 - n_err ? (size_t)r : cap - 1 - n_err;
			memcpy(err + n_err, buf, take);
			n_err += take;
		}
	}
	err[n_err] = '\0';
	return true;
}

bool cli_doctor_help(const struct cli_doctor *d, const char *tool, bool behind_shim, char *why,
		     size_t len)
{
	char *argv[] = { (char *)"cuda-checkpoint", (char *)"-h", NULL }, path[2048];
	char seen[HELP_WINDOW + 1], err[512], **env = help_env(d, behind_shim, path, sizeof(path));
	int out[2] = { -1, -1 }, er[2] = { -1, -1 }, fd[2], status = 0, nul;
	size_t n_seen = 0;
	bool done;
	pid_t pid;

	if (!env || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(why, len, "cannot run it here: %s", strerror(env ? errno : ENOMEM));
		for (int i = 0; i < 4; i++)
			if ((i < 2 ? out[i] : er[i - 2]) >= 0)
				close(i < 2 ? out[i] : er[i - 2]);
		free(env);
		return false;
	}
	if (pid == 0) {
		/* Its own group, stdin empty, as the plugin's child but for the pipe. */
		setpgid(0, 0);
		nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(out[1], 1) < 0 || dup2(er[1], 2) < 0)
			_exit(126);
		execve(tool, argv, env);
		dprintf(2, "cannot run %s: %s\n", tool, strerror(errno));
		_exit(127);
	}
	free(env);
	close(out[1]);
	close(er[1]);
	fd[0] = out[0];
	fd[1] = er[0];
	done = help_read(fd, rtid__now() + HELP_WAIT_S, seen, &n_seen, err, sizeof(err));
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (!done)
		kill(-pid, SIGKILL), kill(pid, SIGKILL);
	rtid__wait(pid, &status);
	seen[n_seen] = '\0';
	err[strcspn(err, "\n")] = '\0';
	if (!done)
		snprintf(why, len, "no answer in %.0f s", HELP_WAIT_S);
	else if (WIFSIGNALED(status))
		snprintf(why, len, "killed by signal %d%s%s", WTERMSIG(status), *err ? ": " : "", err);
	else if (WEXITSTATUS(status) != 0)
		snprintf(why, len, "exit %d: %s", WEXITSTATUS(status), *err ? err : "nothing on stderr");
	else if (!memmem(seen, n_seen, "--action", 8))
		snprintf(why, len, "exit 0, but no --action in the first %d bytes of its output%s%s",
			 HELP_WINDOW, *err ? ": " : "", err);
	else
		return true;
	return false;
}

/* --- CRIU --- */
/* CRIU's version from `criu --version` ("Version: 4.2"): major and minor,
 * or -1 when it cannot be run or says no version. */
static int criu_version(const char *criu, unsigned long *major, unsigned long *minor)
{
	char *const argv[] = { (char *)criu, (char *)"--version", NULL };
	struct rtid__child c, *v = &c;
	const char *p;
	char *end;

	if (rtid__child_start(&c, criu, argv, 10) < 0)
		return -1;
	rtid__children_wait(&v, 1, 0, false);
	c.out[c.out_len < sizeof(c.out) ? c.out_len : sizeof(c.out) - 1] = '\0';
	if (!c.reaped || !WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0 ||
	    !(p = strstr(c.out, "Version: ")) || (p[9] < '0' || p[9] > '9'))
		return -1;
	*major = strtoul(p + 9, &end, 10); /* digits checked before */
	*minor = *end == '.' && end[1] >= '0' && end[1] <= '9' ? strtoul(end + 1, NULL, 10) : 0;
	return 0;
}

/* The CUDA plugin came with CRIU 4.0. */
static void check_criu_version(struct cli_doctor *d, const char *criu)
{
	unsigned long major, minor;

	if (criu_version(criu, &major, &minor) < 0)
		cli_doctor_add(d, "criu-version", false, "reinstall CRIU (4.0 or later)", "%s --version "
			       "failed or named no version", criu);
	else
		cli_doctor_add(d, "criu-version", major >= 4, "install CRIU 4.0 or later: its CUDA "
			       "plugin came with 4.0 (Debian 12 ships 3.17)", "CRIU %lu.%lu%s", major,
			       minor, major >= 4 ? "" : ": older than the CUDA plugin");
}

/* The libdir named by a CRIU configuration file ("libdir DIR"), if any. */
static bool conf_libdir(const char *file, char *out, size_t len)
{
	char buf[8192];
	ssize_t n = rtid__read_at(AT_FDCWD, file, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *l = buf, *nl; l && *l; l = nl) {
		if ((nl = strchr(l, '\n')))
			*nl++ = '\0';
		while (*l == ' ' || *l == '\t')
			l++;
		if (!strncmp(l, "libdir ", 7) || !strncmp(l, "lib-dir ", 8)) {
			snprintf(out, len, "%s", strchr(l, ' ') + 1);
			return true;
		}
	}
	return false;
}

static void check_criu(struct cli_doctor *d)
{
	static const char *const confs[] = { "/etc/criu/runc.conf", "/etc/criu/crun.conf",
					     "/etc/criu/default.conf" };
	static const char *const dirs[] = { "/usr/lib/criu", "/usr/local/lib/criu",
					    "/usr/lib64/criu" };
	const char *list = CLI_ENGINE_PATH;
	char dir[256], file[2048], criu[2048] = "", lib[1024] = "", named[2048] = "";

	while (!criu[0] && cli_doctor_next_dir(&list, dir, sizeof(dir))) {
		char p[1024];

		snprintf(p, sizeof(p), "%s/criu", dir);
		cli_doctor_under(d, p, file, sizeof(file));
		if (rtid__executable(file) == 0)
			snprintf(criu, sizeof(criu), "%s", file);
	}
	cli_doctor_add(d, "criu", criu[0] != 0, "install CRIU 4.0 or later with its CUDA plugin "
	    "(plugins/cuda)", "%s", criu[0] ? criu : "no criu on the engines' PATH");
	if (criu[0])
		check_criu_version(d, criu);
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]) && !named[0]; i++) {
		cli_doctor_under(d, confs[i], file, sizeof(file));
		if (conf_libdir(file, lib, sizeof(lib)))
			snprintf(named, sizeof(named), "%s", confs[i]);
	}
	if (named[0]) {
		char want[2048];

		snprintf(file, sizeof(file), "%s/cuda_plugin.so", lib);
		cli_doctor_under(d, file, want, sizeof(want));
		cli_doctor_add(d, "criu-cuda-plugin", access(want, R_OK) == 0, "put cuda_plugin.so in that libdir",
		    "%s names libdir %s: cuda_plugin.so %s", named, lib,
		    access(want, R_OK) == 0 ? "is there" : "is missing");
		return;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[1024];

		snprintf(p, sizeof(p), "%s/cuda_plugin.so", dirs[i]);
		cli_doctor_under(d, p, file, sizeof(file));
		if (access(file, R_OK) == 0) {
			cli_doctor_add(d, "criu-cuda-plugin", true, NULL, "%s", file);
			return;
		}
	}
	cli_doctor_add(d, "criu-cuda-plugin", false, "install CRIU's cuda_plugin.so in /usr/lib/criu, or name "
	    "its directory with 'libdir DIR' in /etc/criu/runc.conf", "no cuda_plugin.so in "
	    "/usr/lib/criu, /usr/local/lib/criu or a libdir of /etc/criu/*.conf");
}

/* --- the driver --- */
/* Whether the scan is attested for the running driver: needed only when the
 * shim's mode scans (scan, canary); driver mode never scans. */
static void check_attested(struct cli_doctor *d, const char *version)
{
	const char *env = getenv("RTID_ATTESTATION"), *mode = getenv("RTID_MODE");
	struct rtid_attestation *a = NULL;
	const struct rtid_attest_entry *e;
	char path[1100], err[600] = "";
	bool trusted = false, clean, scans;
	enum rtid_mode m = RTID_MODE_DRIVER;

	if (env && *env)
		snprintf(path, sizeof(path), "%s", env);
	else
		cli_doctor_under(d, RTID_ATTESTATION_DEFAULT, path, sizeof(path));
	mode = mode && *mode ? mode : d->mode;
	scans = *mode && rtid_mode_parse(mode, &m) == 0 && m != RTID_MODE_DRIVER;
	if (rtid_attest_load_trusted(path, &a, &trusted, err, sizeof(err)) < 0) {
		cli_doctor_add(d, "scan-attested", !scans, "fix or remove the file (rtid attest show)",
			       "%s: %s", path, err);
		return;
	}
	clean = rtid_attest_clean(a, version);
	e = rtid_attest_find(a, version);
	cli_doctor_add(d, "scan-attested", clean || !scans, "run 'rtid validate --all --report "
		       "r.json' on this node's GPU processes (doc/fleet.md), or set RTID_MODE=driver",
		       "driver %s: %s (%lu of %d agreements%s%s)%s", version,
		       clean ? "attested" : trusted ? "not attested" : "not trusted", e ? e->agree : 0,
		       RTID_ATTEST_MIN_AGREE, e && e->revoked ? "; revoked: " : "",
		       e && e->revoked ? e->why : "", !scans ? "; the shim's driver mode does not scan"
		       : clean ? "; the shim may scan" : "; the shim's mode scans: every call falls "
		       "back to the driver");
	rtid_attest_free(a);
}

static void check_driver(struct cli_doctor *d)
{
	char proc[1024], gpus[1100], version[128];
	struct dirent *de;
	unsigned n = 0;
	DIR *dir;

	cli_doctor_under(d, "/proc", proc, sizeof(proc));
	snprintf(gpus, sizeof(gpus), "%s/driver/nvidia/gpus", proc);
	if ((dir = opendir(gpus))) {
		while ((de = readdir(dir)))
			n += de->d_name[0] != '.';
		closedir(dir);
	}
	cli_doctor_add(d, "nvidia-gpus", n > 0, "load the NVIDIA driver (nvidia.ko): CRIU's CUDA plugin "
	    "stays off without /proc/driver/nvidia/gpus", "%u GPU%s in %s", n, n == 1 ? "" : "s",
	    gpus);
	if (rtid__driver_version_read(proc, version, sizeof(version)) == 0) {
		cli_doctor_add(d, "nvidia-driver", true, NULL, "version %s", version);
		check_attested(d, version);
	} else
		cli_doctor_add(d, "nvidia-driver", false, "install the NVIDIA driver (550 or later for "
		    "cuda-checkpoint; 570 for the driver API)", "no readable %s/driver/nvidia/version",
		    proc);
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = { { "json", 0, NULL, 'j' }, { "root", 1, NULL, 'r' },
					      { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct cli_doctor *d = calloc(1, sizeof(*d));
	bool json = false;
	int c, rc;

	if (!d)
		return 1;
	d->root = "";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(doctor_help, stdout);
			free(d);
			return 0;
		}
		if (c == 'j') {
			json = true;
		} else if (c == 'r') {
			d->root = strcmp(optarg, "/") ? optarg : "";
		} else {
			free(d);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rtid doctor: unexpected argument '%s' (see --help)\n", argv[optind]);
		free(d);
		return 2;
	}
	cli_doctor_conf(d);
	cli_doctor_path(d);
	cli_doctor_daemon(d);
	check_criu(d);
	check_driver(d);
	rc = cli_doctor_report(d, json);
	free(d);
	return rc;
}
