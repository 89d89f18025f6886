/* rtid doctor's checks of CRIU: on the engines' PATH, its version (the CUDA
 * plugin came with 4.0), and its CUDA plugin where CRIU loads it (a libdir
 * its configuration names, else its default directories), alone there. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"

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

static char buf[1 << 20]; /* a plugin file's first MiB */

/* Whose CUDA plugin a cuda_plugin.so is: rtid's carries its log prefix
 * (src/plugin/), CRIU's own does not. Both register as cuda_plugin. */
static const char *whose_plugin(const char *file)
{
	static const char mark[] = "rtid_cuda_plugin: %s";
	ssize_t n = rtid__read_at(AT_FDCWD, file, buf, sizeof(buf), 0);

	if (n <= 0)
		return "";
	return memmem(buf, (size_t)n, mark, sizeof(mark) - 1) ? " (rtid's CUDA plugin)"
								: " (CRIU's own CUDA plugin)";
}

/* Whether the file name in a plugin directory is a CUDA plugin: named so,
 * or registering under the name cuda_plugin (both plugins do), or rtid's. */
static bool is_cuda_plugin(const char *name, const char *file)
{
	static const char reg[] = "cuda_plugin", mark[] = "rtid_cuda_plugin: %s";
	ssize_t n;

	if (!strcmp(name, "cuda_plugin.so"))
		return true;
	n = rtid__read_at(AT_FDCWD, file, buf, sizeof(buf), 0);
	return n > 0 && (memmem(buf, (size_t)n, reg, sizeof(reg)) || /* with its NUL */
			 memmem(buf, (size_t)n, mark, sizeof(mark) - 1));
}

/* The CUDA plugins among the *.so of dir (a path under the root): how many,
 * named in list. CRIU loads every *.so there and asks its plugins in
 * directory order, the first that answers serving the call: with two, which
 * one serves a dump depends on file names. */
static int cuda_plugins(const char *dir, char *list, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t used = 0;
	int n = 0;

	list[0] = '\0';
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char file[2048 + 256 + 2];
		const char *whose;

		if (l < 3 || strcmp(e->d_name + l - 3, ".so"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
		if (!is_cuda_plugin(e->d_name, file))
			continue;
		whose = whose_plugin(file);
		n++;
		if (used < len)
			used += (size_t)snprintf(list + used, len - used, "%s%s%s", used ? ", " : "",
						 e->d_name, whose);
	}
	if (d)
		closedir(d);
	return n;
}

/* The check of the plugin file found (want, under the root) in its dir. */
static void check_plugin(struct cli_doctor *d, const char *want, const char *said)
{
	char dir[2048], list[600];
	int n;

	snprintf(dir, sizeof(dir), "%s", want);
	*strrchr(dir, '/') = '\0'; /* want is DIR/cuda_plugin.so */
	if ((n = cuda_plugins(dir, list, sizeof(list))) > 1) {
		cli_doctor_add(d, "criu-cuda-plugin", false, "keep one CUDA plugin in that directory: "
		    "remove the other, or give rtid's a libdir of its own (doc/plugin.md)", "%s holds "
		    "%d CUDA plugins (%s): CRIU asks them in directory order and the first that "
		    "answers serves each call, so which one dumps depends on file names", dir, n, list);
		return;
	}
	cli_doctor_add(d, "criu-cuda-plugin", true, NULL, "%s%s", said, whose_plugin(want));
}

void cli_doctor_criu(struct cli_doctor *d)
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
		char want[2048], said[3200];

		snprintf(file, sizeof(file), "%s/cuda_plugin.so", lib);
		cli_doctor_under(d, file, want, sizeof(want));
		snprintf(said, sizeof(said), "%s names libdir %s: cuda_plugin.so is there", named, lib);
		if (access(want, R_OK) == 0)
			check_plugin(d, want, said);
		else
			cli_doctor_add(d, "criu-cuda-plugin", false, "put cuda_plugin.so in that libdir",
			    "%s names libdir %s: cuda_plugin.so is missing", named, lib);
		return;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[1024];

		snprintf(p, sizeof(p), "%s/cuda_plugin.so", dirs[i]);
		cli_doctor_under(d, p, file, sizeof(file));
		if (access(file, R_OK) == 0) {
			check_plugin(d, file, file);
			return;
		}
	}
	cli_doctor_add(d, "criu-cuda-plugin", false, "name rtid's plugin directory (LIBDIR/rtid/criu, "
	    "e.g. /usr/lib/x86_64-linux-gnu/rtid/criu) with 'libdir DIR' in /etc/criu/runc.conf, or "
	    "install CRIU's cuda_plugin.so in /usr/lib/criu (doc/install.md, step 4)",
	    "no cuda_plugin.so in "
	    "/usr/lib/criu, /usr/local/lib/criu or a libdir of /etc/criu/*.conf");
}

