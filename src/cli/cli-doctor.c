/* rtid doctor: what a node needs for CRIU to reach the driver through the
 * shim and rtid serve, each checked, and for each failure what to do. The
 * engines (Podman, CRI-O, containerd, all under systemd) give CRIU systemd's
 * PATH; CRIU loads its CUDA plugin from its libdir and finds cuda-checkpoint
 * on that PATH. --root DIR checks a tree rather than / (tests, images). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "proc/proc.h"
#include "proto/service-client.h"

/* systemd's default PATH, which Podman, CRI-O (monitor_env), containerd
 * and sudo's secure_path give too. */
#define ENGINE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_CHECKS 12

/* The next directory of the colon list at *p into out; false at its end. */
static bool next_dir(const char **p, char *out, size_t len)
{
	size_t n = strcspn(*p, ":");

	if (!**p)
		return false;
	snprintf(out, len, "%.*s", (int)n, *p);
	*p += n + ((*p)[n] == ':');
	return true;
}

struct check {
	const char *name;
	bool ok;
	char detail[400], fix[300];
};

struct doctor {
	const char *root;
	struct check c[MAX_CHECKS];
	int n;
	char socket[1024], real_tool[1024];
	unsigned bad_lines, lines;
	char bad[120];
};

static const char doctor_help[] =
	"Usage: rtid doctor [--json] [--root DIR]\n"
	"Check this node's setup for CRIU with the shim and rtid serve, and say what\n"
	"is wrong and how to fix it: the shim first on the PATH the engines give CRIU,\n"
	"the real tool after it, the shim's settings file, rtid serve (reachable, its\n"
	"socket root's, attached, serving actions), CRIU and its CUDA plugin, the NVIDIA\n"
	"driver and its GPUs.\n\n"
	"  --json      one JSON object: {\"ok\": ..., \"checks\": [{name, ok, detail, fix}]}\n"
	"  --root DIR  check the tree at DIR instead of / (the socket and settings file\n"
	"              named by RTID_SOCKET and RTID_SHIM_CONF are taken as they are)\n"
	"Exit status: 0 when every check passes, 1 otherwise, 2 usage error.\n";

static struct check *add(struct doctor *d, const char *name, bool ok, const char *fix,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct check *add(struct doctor *d, const char *name, bool ok, const char *fix,
			 const char *fmt, ...)
{
	struct check *c = &d->c[d->n++]; /* MAX_CHECKS holds every check below */
	va_list ap;

	c->name = name;
	c->ok = ok;
	snprintf(c->fix, sizeof(c->fix), "%s", ok ? "" : fix); /* a failure has a fix */
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

static void under(const struct doctor *d, const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s%s", d->root, path);
}

/* --- the settings file --- */
static void conf_line(void *ctx, unsigned line, const char *name, const char *value)
{
	struct doctor *d = ctx;

	d->lines++;
	if (!name) {
		size_t n = strlen(d->bad);

		if (d->bad_lines++ < 8)
			snprintf(d->bad + n, sizeof(d->bad) - n, "%s%u", n ? ", " : "", line);
		return;
	}
	if (!strcmp(name, "RTID_SOCKET") && !getenv("RTID_SOCKET"))
		snprintf(d->socket, sizeof(d->socket), "%s", value);
	if (!strcmp(name, "RTID_REAL_TOOL") && !getenv("RTID_REAL_TOOL"))
		snprintf(d->real_tool, sizeof(d->real_tool), "%s", value);
}

static void check_conf(struct doctor *d)
{
	char buf[1024];
	const char *path = cli_conf_path(buf, sizeof(buf)), *why = NULL;
	int r;

	if (!path) {
		add(d, "shim-settings", true, NULL, "none (RTID_SHIM_CONF is empty)");
		return;
	}
	r = cli_conf_read(path, conf_line, d, &why);
	if (r == -ENOENT)
		add(d, "shim-settings", true, NULL, "%s: none; the shim uses its defaults and the "
		    "environment (engines pass CRIU none of yours)", path);
	else if (r < 0)
		add(d, "shim-settings", false, "make it root's and not writable by group or others "
		    "(chown root: FILE; chmod 0644 FILE)", "%s: %s: the shim ignores it", path, why);
	else if (d->bad_lines)
		add(d, "shim-settings", false, "each line NAME=VALUE, NAME one of the variables of "
		    "rtid(1) the shim reads", "%s: line %s: not a setting (skipped)", path, d->bad);
	else
		add(d, "shim-settings", true, NULL, "%s: %u setting%s", path, d->lines,
		    d->lines == 1 ? "" : "s");
}

/* --- the shim and the real tool on the engines' PATH --- */
static void check_path(struct doctor *d)
{
	const char *list = ENGINE_PATH;
	char dir[256], cand[2048], first[2048] = "", real[2048] = "";

	while (next_dir(&list, dir, sizeof(dir))) {
		char file[1024];

		snprintf(file, sizeof(file), "%s/cuda-checkpoint", dir);
		under(d, file, cand, sizeof(cand));
		if (rtid__executable(cand) < 0)
			continue;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", cand);
		else if (!real[0] && !rtid__is_self(cand))
			snprintf(real, sizeof(real), "%s", cand);
	}
	if (!first[0]) {
		add(d, "shim-on-path", false, "ln -s /usr/local/bin/rtid /usr/local/sbin/cuda-checkpoint",
		    "no cuda-checkpoint on the PATH systemd, Podman, CRI-O and containerd give CRIU "
		    "(" ENGINE_PATH ")");
	} else if (!rtid__is_self(first)) {
		add(d, "shim-on-path", false, "link rtid as cuda-checkpoint in a directory before it "
		    "on that PATH, e.g. /usr/local/sbin", "the first cuda-checkpoint on the engines' "
		    "PATH is %s, not rtid: CRIU runs the real tool", first);
		snprintf(real, sizeof(real), "%s", first);
	} else {
		add(d, "shim-on-path", true, NULL, "%s is rtid, first on the engines' PATH", first);
	}
	if (d->real_tool[0] || getenv("RTID_REAL_TOOL")) {
		const char *t = getenv("RTID_REAL_TOOL") ? getenv("RTID_REAL_TOOL") : d->real_tool;

		add(d, "real-tool", rtid__executable(t) == 0 && !rtid__is_self(t),
		    "point RTID_REAL_TOOL in the settings file at NVIDIA's cuda-checkpoint",
		    "RTID_REAL_TOOL=%s%s", t, rtid__executable(t) < 0 ? ": not an executable"
					   : rtid__is_self(t) ? ": that is rtid itself" : "");
	} else {
		add(d, "real-tool", real[0] != 0, "install NVIDIA's cuda-checkpoint after the shim on "
		    "that PATH (e.g. /usr/bin), or name it in RTID_REAL_TOOL in the settings file",
		    "%s%s", real[0] ? real : "no real cuda-checkpoint after the shim",
		    real[0] ? ": the shim's fallback" : "");
	}
}

/* --- rtid serve --- */
static void check_daemon(struct doctor *d)
{
	const char *path = getenv("RTID_SOCKET") ? rtid__svc_path(NULL)
			   : d->socket[0] ? d->socket : RTID__SVC_SOCKET_DEFAULT;
	struct rtid__svc_req q = { .op = RTID__OP_GET_STATE, .pid = 1 };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	struct stat st;
	int r;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		add(d, "rtid-serve", false, "systemctl enable --now rtid.socket (doc/serve.md)",
		    "no socket at %s: every call pays a driver attach", path);
		return;
	}
	if (st.st_uid != 0) {
		add(d, "rtid-serve", false, "run rtid serve as root (rtid.service)",
		    "%s is owned by uid %u: the shim trusts root's daemon only", path,
		    (unsigned)st.st_uid);
		return;
	}
	if ((r = rtid__svc_open(path, &c)) < 0) {
		add(d, "rtid-serve", false, "systemctl restart rtid.service; journalctl -u rtid",
		    "%s: cannot connect: %s", path, strerror(-r));
		return;
	}
	r = rtid__svc_call(&c, &q, rtid__now() + 10, &a);
	rtid__svc_close(&c);
	if (r < 0)
		add(d, "rtid-serve", false, "systemctl restart rtid.service; journalctl -u rtid",
		    "%s: no answer: %s", path, strerror(-r));
	else if (a.kind == RTID__SVC_ERROR && (!strcmp(a.name, "worker-failed") ||
					       !strcmp(a.name, "timeout")))
		add(d, "rtid-serve", false, "journalctl -u rtid: why the driver attach fails",
		    "%s: not attached to the driver: %s", path, a.text);
	else
		add(d, "rtid-serve", c.actions, "add --actions to rtid serve (systemctl edit "
		    "rtid.service), so that CRIU's lock, checkpoint, restore and unlock skip the attach",
		    "%s: attached, serving %s", path, c.actions ? "queries and actions" : "queries only");
}

/* --- CRIU --- */
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

static void check_criu(struct doctor *d)
{
	static const char *const confs[] = { "/etc/criu/runc.conf", "/etc/criu/crun.conf",
					     "/etc/criu/default.conf" };
	static const char *const dirs[] = { "/usr/lib/criu", "/usr/local/lib/criu",
					    "/usr/lib64/criu" };
	const char *list = ENGINE_PATH;
	char dir[256], file[2048], criu[2048] = "", lib[1024] = "", named[2048] = "";

	while (!criu[0] && next_dir(&list, dir, sizeof(dir))) {
		char p[1024];

		snprintf(p, sizeof(p), "%s/criu", dir);
		under(d, p, file, sizeof(file));
		if (rtid__executable(file) == 0)
			snprintf(criu, sizeof(criu), "%s", file);
	}
	add(d, "criu", criu[0] != 0, "install CRIU 4.0 or later with its CUDA plugin "
	    "(plugins/cuda)", "%s", criu[0] ? criu : "no criu on the engines' PATH");
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]) && !named[0]; i++) {
		under(d, confs[i], file, sizeof(file));
		if (conf_libdir(file, lib, sizeof(lib)))
			snprintf(named, sizeof(named), "%s", confs[i]);
	}
	if (named[0]) {
		char want[2048];

		snprintf(file, sizeof(file), "%s/cuda_plugin.so", lib);
		under(d, file, want, sizeof(want));
		add(d, "criu-cuda-plugin", access(want, R_OK) == 0, "put cuda_plugin.so in that libdir",
		    "%s names libdir %s: cuda_plugin.so %s", named, lib,
		    access(want, R_OK) == 0 ? "is there" : "is missing");
		return;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[1024];

		snprintf(p, sizeof(p), "%s/cuda_plugin.so", dirs[i]);
		under(d, p, file, sizeof(file));
		if (access(file, R_OK) == 0) {
			add(d, "criu-cuda-plugin", true, NULL, "%s", file);
			return;
		}
	}
	add(d, "criu-cuda-plugin", false, "install CRIU's cuda_plugin.so in /usr/lib/criu, or name "
	    "its directory with 'libdir DIR' in /etc/criu/runc.conf", "no cuda_plugin.so in "
	    "/usr/lib/criu, /usr/local/lib/criu or a libdir of /etc/criu/*.conf");
}

/* --- the driver --- */
static void check_driver(struct doctor *d)
{
	char proc[1024], gpus[1100], version[128];
	struct dirent *de;
	unsigned n = 0;
	DIR *dir;

	under(d, "/proc", proc, sizeof(proc));
	snprintf(gpus, sizeof(gpus), "%s/driver/nvidia/gpus", proc);
	if ((dir = opendir(gpus))) {
		while ((de = readdir(dir)))
			n += de->d_name[0] != '.';
		closedir(dir);
	}
	add(d, "nvidia-gpus", n > 0, "load the NVIDIA driver (nvidia.ko): CRIU's CUDA plugin "
	    "stays off without /proc/driver/nvidia/gpus", "%u GPU%s in %s", n, n == 1 ? "" : "s",
	    gpus);
	if (rtid__driver_version_read(proc, version, sizeof(version)) == 0)
		add(d, "nvidia-driver", true, NULL, "version %s", version);
	else
		add(d, "nvidia-driver", false, "install the NVIDIA driver (550 or later for "
		    "cuda-checkpoint; 570 for the driver API)", "no readable %s/driver/nvidia/version",
		    proc);
}

static int report(const struct doctor *d, bool json)
{
	bool all = true;

	for (int i = 0; i < d->n; i++)
		all = all && d->c[i].ok;
	if (json) {
		json_t *o = json_pack("{s:b,s:[]}", "ok", all, "checks"), *arr;

		arr = json_object_get(o, "checks");
		for (int i = 0; i < d->n; i++)
			json_array_append_new(arr, json_pack("{s:s,s:b,s:s,s:s}", "name", d->c[i].name,
							     "ok", d->c[i].ok, "detail",
							     d->c[i].detail, "fix", d->c[i].fix));
		json_dumpf(o, stdout, JSON_INDENT(1));
		putchar('\n');
		json_decref(o);
	} else {
		for (int i = 0; i < d->n; i++) {
			printf("%-5s %s: %s\n", d->c[i].ok ? "ok" : "FAIL", d->c[i].name,
			       d->c[i].detail);
			if (!d->c[i].ok)
				printf("      fix: %s\n", d->c[i].fix);
		}
		printf("%s\n", all ? "all well" : "something is wrong: see FAIL above");
	}
	return all ? 0 : 1;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = { { "json", 0, NULL, 'j' }, { "root", 1, NULL, 'r' },
					      { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct doctor *d = calloc(1, sizeof(*d));
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
	check_conf(d);
	check_path(d);
	check_daemon(d);
	check_criu(d);
	check_driver(d);
	rc = report(d, json);
	free(d);
	return rc;
}
