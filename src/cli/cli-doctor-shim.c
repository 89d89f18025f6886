/* rtid doctor's checks of the shim's side (its settings file and their
 * values, judged as the shim judges them; the shim, its -h and the real tool
 * on the PATH the engines give CRIU, and any other rtid between them; -h run
 * as CRIU's CUDA plugin runs it) and the record of every check. The engines
 * (Podman, CRI-O, containerd, all under systemd) give CRIU systemd's PATH. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "conf/conf.h"
#include "config.h"

struct cli_check *cli_doctor_add(struct cli_doctor *d, const char *name, bool ok, const char *fix,
			 const char *fmt, ...)
{
	struct cli_check *c = &d->c[d->n++]; /* CLI_DOCTOR_MAX holds every check below */
	va_list ap;

	c->name = name;
	c->ok = ok;
	snprintf(c->fix, sizeof(c->fix), "%s", ok ? "" : fix); /* a failure has a fix */
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

const char *cli_doctor_env(const struct cli_doctor *d, const char *name)
{
	return d->root[0] ? NULL : getenv(name);
}

void cli_doctor_under(const struct cli_doctor *d, const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s%s", d->root, path);
}

/* --- the settings file --- */
static void conf_line(void *ctx, unsigned line, const char *name, const char *value)
{
	struct cli_doctor *d = ctx;

	d->lines++;
	const char *accepted;

	if (!name) { /* said with what stands before its '=': the mistyped name */
		size_t n = strlen(d->bad);

		if (d->bad_lines++ < 8)
			snprintf(d->bad + n, sizeof(d->bad) - n, "%sline %u '%.40s'", n ? ", " : "",
				 line, value);
		return;
	}
	/* Judged as the shim judges it (cli_conf_unusable), the first one said. */
	if ((accepted = cli_conf_unusable(name, value)) && !d->bad_values++)
		snprintf(d->bad_value, sizeof(d->bad_value), "line %u: %s=%.60s is no value the shim "
			 "can use (%s)", line, name, value, accepted);
	if (!strcmp(name, "RTID_SOCKET") && !cli_doctor_env(d, "RTID_SOCKET"))
		snprintf(d->socket, sizeof(d->socket), "%s", value);
	if (!strcmp(name, "RTID_SERVE_UID") && !cli_doctor_env(d, "RTID_SERVE_UID"))
		snprintf(d->serve_uid, sizeof(d->serve_uid), "%s", value);
	if (!strcmp(name, "RTID_SHIM_LOG") && !cli_doctor_env(d, "RTID_SHIM_LOG"))
		snprintf(d->shim_log, sizeof(d->shim_log), "%s", value);
	if (!strcmp(name, "RTID_ATTESTATION") && !cli_doctor_env(d, "RTID_ATTESTATION"))
		snprintf(d->attestation, sizeof(d->attestation), "%s", value);
	if (!strcmp(name, "RTID_MODE") && !cli_doctor_env(d, "RTID_MODE"))
		snprintf(d->mode, sizeof(d->mode), "%s", value);
	if (!strcmp(name, "RTID_REAL_TOOL") && !cli_doctor_env(d, "RTID_REAL_TOOL")) {
		snprintf(d->real_tool, sizeof(d->real_tool), "%s", value);
		d->tool_named = true;
	}
	/* The old name, where the file names the tool by no new one (rtid__conf_load). */
	if (!strcmp(name, "RTID_CUDA_CHECKPOINT") && !cli_doctor_env(d, "RTID_REAL_TOOL") &&
	    !d->tool_named)
		snprintf(d->real_tool, sizeof(d->real_tool), "%s", value);
}

/* Whether root (the shim, as CRIU runs it) may not write path: asked only
 * as root; a user cannot tell, and says nothing against it. */
static bool root_may_not(const char *path)
{
	return geteuid() == 0 && access(path, W_OK) < 0;
}

/* RTID_SHIM_LOG (the environment's here, the file's under a root): the shim
 * opens it to append, never through a link, and creates it in its
 * directory; a path it cannot write loses every note, silently. */
static void check_log(struct cli_doctor *d)
{
	const char *env = cli_doctor_env(d, "RTID_SHIM_LOG"), *name = env ? env : d->shim_log;
	char path[1100], dir[1100], *slash;
	struct stat st;
	const char *why = NULL;

	if (!*name)
		return;
	cli_doctor_under(d, name, path, sizeof(path));
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (lstat(path, &st) == 0)
		why = !S_ISREG(st.st_mode) ? "not a regular file (a link or another kind: never "
		      "written)" : root_may_not(path) ? strerror(errno) : NULL;
	else if (errno != ENOENT)
		why = strerror(errno);
	else if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		why = "its directory does not exist";
	else if (root_may_not(dir))
		why = strerror(errno);
	cli_doctor_add(d, "shim-log", !why, "create its directory, or name a file root can write "
	    "(RTID_SHIM_LOG in the settings file)", "RTID_SHIM_LOG=%s%s%s", name,
	    why ? ": cannot be written: " : ": the shim's notes go there", why ? why : "");
}

void cli_doctor_conf(struct cli_doctor *d)
{
	char buf[1024];
	const char *path, *why = NULL;
	int r;

	/* Under a root, its own file at the place compiled in: neither this
	 * shell's RTID_SHIM_CONF nor this program's PREFIX is the tree's. */
	if (d->root[0]) {
		snprintf(buf, sizeof(buf), "%s/%s", d->root, RTID_NODE_SHIM_CONF);
		path = buf;
	} else {
		path = rtid__conf_program_path(buf, sizeof(buf));
		rtid__conf_alias(); /* RTID_CUDA_CHECKPOINT, the old name, as the commands take it */
	}
	snprintf(d->conf, sizeof(d->conf), "%s", path ? path : "");
	if (!path) {
		cli_doctor_add(d, "shim-settings", true, NULL, "none (RTID_SHIM_CONF is empty)");
		check_log(d); /* the environment may still name one */
		return;
	}
	r = rtid__conf_read(path, conf_line, d, &why);
	if (r == -ENOENT)
		cli_doctor_add(d, "shim-settings", true, NULL, "%s: none; the shim uses its defaults and the "
		    "environment (engines pass CRIU none of yours)", path);
	else if (r < 0)
		cli_doctor_add(d, "shim-settings", false, "make it root's and not writable by group or others "
		    "(chown root: FILE; chmod 0644 FILE)", "%s: %s: the shim ignores it", path, why);
	else if (d->bad_lines)
		cli_doctor_add(d, "shim-settings", false, "each line NAME=VALUE, NAME one of the variables of "
		    "rtid(1) the shim reads", "%s: not a setting (skipped): %s%s", path, d->bad,
		    d->bad_lines > 8 ? ", and more" : "");
	else if (d->bad_values)
		cli_doctor_add(d, "shim-settings", false, "give each setting a value of those accepted "
		    "(rtid(1), doc/shim.md), or remove the line for its default", "%s: %s%s: the shim "
		    "hands every call to the real tool, asking neither rtid serve nor rtid", path,
		    d->bad_value, d->bad_values > 1 ? ", and more" : "");
	else
		cli_doctor_add(d, "shim-settings", true, NULL, "%s: %u setting%s", path, d->lines,
		    d->lines == 1 ? "" : "s");
	check_log(d);
}

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
	char **env;
	size_t n = 0, k = 0;

	snprintf(path, len, "PATH=");
	cli_doctor_engine_path(d->root, path + 5, len - 5);
	while (environ[n])
		n++;
	if (!(env = calloc(n + 7, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PATH=", 5) && strncmp(environ[i], "RTID_SHIM_ACTIVE=", 17) &&
		    strncmp(environ[i], "LD_LIBRARY_PATH=", 16) && strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    (!d->root[0] || strncmp(environ[i], "RTID_", 5)))
			env[k++] = environ[i];
	env[k++] = path;
	/* Under a root: the tree's file and socket (the environment wins over
	 * the file, whose paths are the tree's), none of this shell's. */
	if (d->root[0]) {
		env[k++] = (char *)"RTID_SHIM_LOG="; /* the file's names a path of the tree's */
		env[k++] = (char *)d->env_conf;
		env[k++] = (char *)d->env_sock;
		if (d->env_tool[0])
			env[k++] = (char *)d->env_tool;
	}
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
	else if (!strstr(seen, "--action")) /* the plugin's strstr: a NUL ends its look */
		snprintf(why, len, "exit 0, but no --action in the first %d bytes of its output%s%s",
			 HELP_WINDOW, *err ? ": " : "", err);
	else
		return true;
	return false;
}

/* --- the shim and the real tool on the engines' PATH --- */
#define PLUGIN_OFF "CRIU's CUDA plugin turns itself off while -h fails, and dumps without GPU state"

/* What -h's failure asks of the node: the driver's library, or a look by hand. */
static const char *help_fix(const char *why)
{
	return strstr(why, "libcuda") ? "install the NVIDIA driver's libcuda.so.1 where the loader "
	       "finds it (ldconfig -p | grep libcuda; driver 550 or later); " PLUGIN_OFF
	       : "run it with -h by hand to see why, or point RTID_REAL_TOOL at NVIDIA's "
	       "cuda-checkpoint; " PLUGIN_OFF;
}

/* The real tool the shim would run: named (RTID_REAL_TOOL), or found after
 * the shim; never an rtid (the shim refuses or passes over every one), and
 * -h answering as CRIU's plugin needs, run as the shim runs it. */
static void check_real_tool(struct cli_doctor *d, const char *named, const char *found,
			    const char *over)
{
	const char *t = named ? named : found;
	char ver[64], why[300];

	if (!t[0]) {
		cli_doctor_add(d, "real-tool", false, "install NVIDIA's cuda-checkpoint after the shim on "
		    "that PATH (e.g. /usr/bin), or name it in RTID_REAL_TOOL in the settings file",
		    "no real cuda-checkpoint after the shim%s", over);
	} else if (rtid__executable(t) < 0 || rtid__is_self(t) ||
		   rtid__rtid_note(t, ver, sizeof(ver)) == 1) {
		/* Only a named one: the PATH search passed over every rtid. */
		cli_doctor_add(d, "real-tool", false, "point RTID_REAL_TOOL in the settings file at NVIDIA's "
		    "cuda-checkpoint", "RTID_REAL_TOOL=%s: %s%s", t, rtid__executable(t) < 0
		    ? "not an executable" : rtid__is_self(t) ? "that is rtid itself"
		    : "that is another rtid, not the real tool: version ", rtid__executable(t) < 0 ||
		    rtid__is_self(t) ? "" : ver);
	} else if (!cli_doctor_help(d, t, true, why, sizeof(why))) {
		cli_doctor_add(d, "real-tool", false, help_fix(why), "%s%s -h, run as the shim runs it: "
		    "%s%s", named ? "RTID_REAL_TOOL=" : "", t, why, over);
	} else {
		cli_doctor_add(d, "real-tool", true, NULL, "%s%s: the shim's fallback; its -h answers "
		    "as CRIU's plugin needs%s", named ? "RTID_REAL_TOOL=" : "", t, over);
	}
}

void cli_doctor_path(struct cli_doctor *d)
{
	const char *list = CLI_ENGINE_PATH, *named = cli_doctor_env(d, "RTID_REAL_TOOL");
	char dir[256], cand[2048], first[2048] = "", real[2048] = "", over[400] = "", ver[64];
	char why[300];
	unsigned n_over = 0;

	while (cli_doctor_next_dir(&list, dir, sizeof(dir))) {
		char file[1024];

		snprintf(file, sizeof(file), "%s/cuda-checkpoint", dir);
		cli_doctor_under(d, file, cand, sizeof(cand));
		if (rtid__executable(cand) < 0)
			continue;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", cand);
		else if (!real[0] && rtid__is_rtid(cand) && !n_over++)
			snprintf(over, sizeof(over), "; passed over: %.300s (rtid %s%s)", cand,
				 rtid__rtid_note(cand, ver, sizeof(ver)) == 1 ? ver : "",
				 rtid__is_self(cand) ? ", this one" : "");
		else if (!real[0] && !rtid__is_rtid(cand))
			snprintf(real, sizeof(real), "%s", cand);
	}
	if (n_over > 1)
		snprintf(over + strlen(over), sizeof(over) - strlen(over), " and %u more", n_over - 1);
	if (!first[0]) {
		cli_doctor_add(d, "shim-on-path", false, "ln -sf /usr/bin/rtid /usr/local/sbin/cuda-checkpoint (doc/install.md)",
		    "no cuda-checkpoint on the PATH systemd, Podman, CRI-O and containerd give CRIU "
		    "(" CLI_ENGINE_PATH ")");
	} else if (!rtid__is_rtid(first)) {
		cli_doctor_add(d, "shim-on-path", false, "link rtid as cuda-checkpoint in a directory before it "
		    "on that PATH, e.g. /usr/local/sbin", "the first cuda-checkpoint on the engines' "
		    "PATH is %s, not rtid: CRIU runs the real tool", first);
		snprintf(real, sizeof(real), "%s", first);
	} else if (rtid__is_self(first)) {
		cli_doctor_add(d, "shim-on-path", true, NULL, "%s is rtid, first on the engines' PATH", first);
	} else {
		rtid__rtid_note(first, ver, sizeof(ver)); /* rtid, and not this one: its note */
		cli_doctor_add(d, "shim-on-path", true, NULL, "%s is rtid (another build, version %s), "
		    "first on the engines' PATH", first, ver);
	}
	/* What CRIU's plugin does at its start: -h of the first on its PATH. */
	if (first[0]) {
		bool ok = cli_doctor_help(d, first, false, why, sizeof(why));

		cli_doctor_add(d, "tool-help", ok, help_fix(why), "%s -h, as CRIU's CUDA plugin runs it: "
		    "%s", first, ok ? "exit 0, --action in its help" : why);
	}
	check_real_tool(d, named && *named ? named : d->real_tool[0] ? d->tool : NULL, real, over);
}
