/* rtid doctor's checks of the shim's side (its settings file, the shim and
 * the real tool on the PATH the engines give CRIU, rtid serve), the record
 * of every check and the report. The engines (Podman, CRI-O, containerd, all
 * under systemd) give CRIU systemd's PATH. */
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
	if (!name) {
		size_t n = strlen(d->bad);

		if (d->bad_lines++ < 8)
			snprintf(d->bad + n, sizeof(d->bad) - n, "%s%u", n ? ", " : "", line);
		return;
	}
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
	else
		cli_doctor_add(d, "shim-settings", true, NULL, "%s: %u setting%s", path, d->lines,
		    d->lines == 1 ? "" : "s");
}

/* --- the shim and the real tool on the engines' PATH --- */
void cli_doctor_path(struct cli_doctor *d)
{
	const char *list = CLI_ENGINE_PATH;
	char dir[256], cand[2048], first[2048] = "", real[2048] = "";

	while (cli_doctor_next_dir(&list, dir, sizeof(dir))) {
		char file[1024];

		snprintf(file, sizeof(file), "%s/cuda-checkpoint", dir);
		cli_doctor_under(d, file, cand, sizeof(cand));
		if (rtid__executable(cand) < 0)
			continue;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", cand);
		else if (!real[0] && !rtid__is_self(cand))
			snprintf(real, sizeof(real), "%s", cand);
	}
	if (!first[0]) {
		cli_doctor_add(d, "shim-on-path", false, "ln -s /usr/local/bin/rtid /usr/local/sbin/cuda-checkpoint",
		    "no cuda-checkpoint on the PATH systemd, Podman, CRI-O and containerd give CRIU "
		    "(" CLI_ENGINE_PATH ")");
	} else if (!rtid__is_self(first)) {
		cli_doctor_add(d, "shim-on-path", false, "link rtid as cuda-checkpoint in a directory before it "
		    "on that PATH, e.g. /usr/local/sbin", "the first cuda-checkpoint on the engines' "
		    "PATH is %s, not rtid: CRIU runs the real tool", first);
		snprintf(real, sizeof(real), "%s", first);
	} else {
		cli_doctor_add(d, "shim-on-path", true, NULL, "%s is rtid, first on the engines' PATH", first);
	}
	if (d->real_tool[0] || getenv("RTID_REAL_TOOL")) {
		const char *t = getenv("RTID_REAL_TOOL") ? getenv("RTID_REAL_TOOL") : d->real_tool;

		cli_doctor_add(d, "real-tool", rtid__executable(t) == 0 && !rtid__is_self(t),
		    "point RTID_REAL_TOOL in the settings file at NVIDIA's cuda-checkpoint",
		    "RTID_REAL_TOOL=%s%s", t, rtid__executable(t) < 0 ? ": not an executable"
					   : rtid__is_self(t) ? ": that is rtid itself" : "");
	} else {
		cli_doctor_add(d, "real-tool", real[0] != 0, "install NVIDIA's cuda-checkpoint after the shim on "
		    "that PATH (e.g. /usr/bin), or name it in RTID_REAL_TOOL in the settings file",
		    "%s%s", real[0] ? real : "no real cuda-checkpoint after the shim",
		    real[0] ? ": the shim's fallback" : "");
	}
}

/* --- rtid serve --- */
void cli_doctor_daemon(struct cli_doctor *d)
{
	const char *path = getenv("RTID_SOCKET") ? rtid__svc_path(NULL)
			   : d->socket[0] ? d->socket : RTID__SVC_SOCKET_DEFAULT;
	struct rtid__svc_req q = { .op = RTID__OP_GET_STATE, .pid = 1 };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	struct stat st;
	int r;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		cli_doctor_add(d, "rtid-serve", false, "systemctl enable --now rtid.socket (doc/serve.md)",
		    "no socket at %s: every call pays a driver attach", path);
		return;
	}
	if (st.st_uid != 0) {
		cli_doctor_add(d, "rtid-serve", false, "run rtid serve as root (rtid.service)",
		    "%s is owned by uid %u: the shim trusts root's daemon only", path,
		    (unsigned)st.st_uid);
		return;
	}
	if ((r = rtid__svc_open(path, &c)) < 0) {
		cli_doctor_add(d, "rtid-serve", false, "systemctl restart rtid.service; journalctl -u rtid",
		    "%s: cannot connect: %s", path, strerror(-r));
		return;
	}
	r = rtid__svc_call(&c, &q, rtid__now() + 10, &a);
	rtid__svc_close(&c);
	if (r < 0)
		cli_doctor_add(d, "rtid-serve", false, "systemctl restart rtid.service; journalctl -u rtid",
		    "%s: no answer: %s", path, strerror(-r));
	else if (a.kind == RTID__SVC_ERROR && (!strcmp(a.name, "worker-failed") ||
					       !strcmp(a.name, "timeout")))
		cli_doctor_add(d, "rtid-serve", false, "journalctl -u rtid: why the driver attach fails",
		    "%s: not attached to the driver: %s", path, a.text);
	else
		cli_doctor_add(d, "rtid-serve", c.actions, "add --actions to rtid serve (systemctl edit "
		    "rtid.service), so that CRIU's lock, checkpoint, restore and unlock skip the attach",
		    "%s: attached, serving %s", path, c.actions ? "queries and actions" : "queries only");
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
