/* rtid doctor's checks of the shim's side (its settings file and their
 * values, judged as the shim judges them; the shim, its -h and the real tool
 * on the PATH the engines give CRIU, and any other rtid between them; rtid
 * serve, asked with its status request), the record of every check and the
 * report. The engines (Podman, CRI-O, containerd, all under systemd) give
 * CRIU systemd's PATH. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "proto/service-client.h"

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

	if (!name) {
		size_t n = strlen(d->bad);

		if (d->bad_lines++ < 8)
			snprintf(d->bad + n, sizeof(d->bad) - n, "%s%u", n ? ", " : "", line);
		return;
	}
	/* Judged as the shim judges it (cli_conf_unusable), the first one said. */
	if ((accepted = cli_conf_unusable(name, value)) && !d->bad_values++)
		snprintf(d->bad_value, sizeof(d->bad_value), "line %u: %s=%.60s is no value the shim "
			 "can use (%s)", line, name, value, accepted);
	if (!strcmp(name, "RTID_SOCKET") && !getenv("RTID_SOCKET"))
		snprintf(d->socket, sizeof(d->socket), "%s", value);
	if (!strcmp(name, "RTID_MODE") && !getenv("RTID_MODE"))
		snprintf(d->mode, sizeof(d->mode), "%s", value);
	if (!strcmp(name, "RTID_REAL_TOOL") && !getenv("RTID_REAL_TOOL"))
		snprintf(d->real_tool, sizeof(d->real_tool), "%s", value);
}

void cli_doctor_conf(struct cli_doctor *d)
{
	char buf[1024];
	const char *path = cli_conf_path(buf, sizeof(buf)), *why = NULL;
	int r;

	if (!path) {
		cli_doctor_add(d, "shim-settings", true, NULL, "none (RTID_SHIM_CONF is empty)");
		return;
	}
	r = cli_conf_read(path, conf_line, d, &why);
	if (r == -ENOENT)
		cli_doctor_add(d, "shim-settings", true, NULL, "%s: none; the shim uses its defaults and the "
		    "environment (engines pass CRIU none of yours)", path);
	else if (r < 0)
		cli_doctor_add(d, "shim-settings", false, "make it root's and not writable by group or others "
		    "(chown root: FILE; chmod 0644 FILE)", "%s: %s: the shim ignores it", path, why);
	else if (d->bad_lines)
		cli_doctor_add(d, "shim-settings", false, "each line NAME=VALUE, NAME one of the variables of "
		    "rtid(1) the shim reads", "%s: line %s: not a setting (skipped)", path, d->bad);
	else if (d->bad_values)
		cli_doctor_add(d, "shim-settings", false, "give each setting a value of those accepted "
		    "(rtid(1), doc/shim.md), or remove the line for its default", "%s: %s%s: the shim "
		    "hands every call to the real tool, asking neither rtid serve nor rtid", path,
		    d->bad_value, d->bad_values > 1 ? ", and more" : "");
	else
		cli_doctor_add(d, "shim-settings", true, NULL, "%s: %u setting%s", path, d->lines,
		    d->lines == 1 ? "" : "s");
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
	const char *list = CLI_ENGINE_PATH, *named = getenv("RTID_REAL_TOOL");
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
		cli_doctor_add(d, "shim-on-path", false, "ln -s /usr/local/bin/rtid /usr/local/sbin/cuda-checkpoint",
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
	check_real_tool(d, named && *named ? named : d->real_tool[0] ? d->real_tool : NULL, real,
			over);
}

/* --- rtid serve --- */
/* How the daemon is run here: by systemd when systemd runs the node
 * (/run/systemd/system) and rtid's units are installed; else by hand. */
static bool under_systemd(const struct cli_doctor *d)
{
	static const char *const dirs[] = { "/etc/systemd/system", "/usr/local/lib/systemd/system",
					    "/usr/lib/systemd/system", "/lib/systemd/system" };
	char p[1100];
	struct stat st;

	cli_doctor_under(d, "/run/systemd/system", p, sizeof(p));
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s%s/rtid.socket", d->root, dirs[i]);
		if (access(p, F_OK) == 0)
			return true;
	}
	return false;
}

/* The counters doctor reads from the daemon's status: driver attaches
 * started, and workers that failed or were ended. More started than ended:
 * a worker holds (or is taking) the attach. */
struct serve_seen {
	int attaches, failures;
};

static void stat_line(void *ctx, const char *stat)
{
	struct serve_seen *s = ctx;

	if (!strncmp(stat, "attaches ", 9))
		(void)rtid__parse_pid(stat + 9, &s->attaches); /* 0 or not a count: none */
	else if (!strncmp(stat, "worker_failures ", 16))
		(void)rtid__parse_pid(stat + 16, &s->failures);
}

/* Asked with its status request, which reaches no driver: the check adds no
 * driver call to the daemon's counters, and works with a driver that hangs. */
void cli_doctor_daemon(struct cli_doctor *d)
{
	const char *path = getenv("RTID_SOCKET") ? rtid__svc_path(NULL)
			   : d->socket[0] ? d->socket : RTID__SVC_SOCKET_DEFAULT;
	bool sd = under_systemd(d);
	const char *restart = sd ? "systemctl restart rtid.socket rtid.service; journalctl -u rtid"
				 : "start rtid serve again as root (it replaces a stale socket); "
				   "its stderr says why it ended";
	struct serve_seen seen = { 0 };
	struct rtid__svc_conn c;
	struct stat st;
	int r;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		r = errno;
		cli_doctor_add(d, "rtid-serve", false, r == EACCES ? "run rtid doctor as root (CRIU runs "
		    "the shim as root)" : sd ? "systemctl enable --now rtid.socket (doc/serve.md)"
		    : "start 'rtid serve --actions' as root from the node's init (doc/serve.md; the "
		    "systemd units rtid.socket and rtid.service are installed with rtid)",
		    "%s: %s: every call pays a driver attach", path, r == EACCES
		    ? "cannot look: permission denied" : "no socket there");
		return;
	}
	if (st.st_uid != 0) {
		cli_doctor_add(d, "rtid-serve", false, sd ? "run rtid serve as root (rtid.service)"
		    : "run rtid serve as root", "%s is owned by uid %u: the shim trusts root's daemon only",
		    path, (unsigned)st.st_uid);
		return;
	}
	if ((r = rtid__svc_open(path, &c)) < 0) {
		cli_doctor_add(d, "rtid-serve", false, r == -EACCES ? "run rtid doctor as root, or as a "
		    "member of the socket's group (rtid serve --group); CRIU runs the shim as root"
		    : restart, "%s: cannot connect: %s%s", path, strerror(-r), r == -ECONNREFUSED
		    ? " (nobody listens: the daemon is gone)" : "");
		return;
	}
	r = rtid__svc_status(&c, rtid__now() + 10, stat_line, &seen);
	rtid__svc_close(&c);
	if (r < 0)
		cli_doctor_add(d, "rtid-serve", false, restart, "%s: no answer to status: %s", path,
		    strerror(-r));
	else if (seen.attaches <= seen.failures)
		cli_doctor_add(d, "rtid-serve", false, sd ? "journalctl -u rtid: why the driver attach fails"
		    : "rtid serve's stderr says why the driver attach fails", "%s: not attached to the "
		    "driver (%d attach%s started, as many failed or ended)", path, seen.attaches,
		    seen.attaches == 1 ? "" : "es");
	else
		cli_doctor_add(d, "rtid-serve", c.actions, sd ? "add --actions to rtid serve (systemctl "
		    "edit rtid.service), so that CRIU's lock, checkpoint, restore and unlock skip the "
		    "attach" : "start rtid serve with --actions, so that CRIU's lock, checkpoint, "
		    "restore and unlock skip the attach", "%s: attached, serving %s", path,
		    c.actions ? "queries and actions" : "queries only");
}

int cli_doctor_report(const struct cli_doctor *d, bool json)
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
