/* rtid doctor: what a node needs for CRIU to reach the driver through the
 * shim and rtid serve, each checked, and for each failure what to do: CRIU
 * and its CUDA plugin (loaded from its libdir; it finds cuda-checkpoint on
 * the engines' PATH and runs its -h at its start), the driver, rtid serve,
 * and the report; the shim's side (the PATH, -h as the plugin runs it, the
 * settings) is checked in cli-doctor-shim.c. --root DIR checks a tree rather
 * than / (tests, images). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "proc/proc.h"
#include "proto/service-client.h"
#include "config.h"

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
	"  --root DIR  check the tree at DIR instead of /: every path under DIR (its\n"
	"              DIR/etc/rtid/shim.conf, the socket it names there, its PATH), no\n"
	"              RTID_* of this shell's; DIR's criu is run here for its version:\n"
	"              give only trees you trust\n"
	"Exit status: 0 when every check passes, 1 otherwise, 2 usage error.\n";

/* --- the driver --- */
/* "GPU UUID:" of a GPU's information file: the UUID after the blanks. */
static int uuid_line(const char *line, size_t len, bool whole, void *arg)
{
	char *out = arg;
	size_t i = 9, j;

	if (!whole || len < 9 || memcmp(line, "GPU UUID:", 9))
		return 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	for (j = i; j < len && line[j] != ' ' && line[j] != '\t'; j++)
		;
	snprintf(out, 48, "%.*s", (int)(j - i < 47 ? j - i : 47), line + i);
	return 1;
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* The node's GPUs by PCI address, each with its UUID as the driver lists it
 * (what an operator writes a device map with, doc/plugin.md). */
static void check_gpus(struct cli_doctor *d, const char *proc)
{
	char gpus[1100], list[360] = "", path[1400], uuid[48];
	struct dirent **e = NULL;
	int n = scandir(strcat(strcpy(gpus, proc), "/driver/nvidia/gpus"), &e, not_dot, alphasort);
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/information", gpus, e[i]->d_name);
		strcpy(uuid, "no UUID");
		rtid__read_lines(AT_FDCWD, path, uuid_line, uuid);
		if (at < sizeof(list) - 1)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s %s", i ? ", " : ": ",
					       e[i]->d_name, uuid);
		free(e[i]);
	}
	free(e);
	cli_doctor_add(d, "nvidia-gpus", n > 0, "load the NVIDIA driver (nvidia.ko): CRIU's CUDA plugin "
	    "stays off without /proc/driver/nvidia/gpus", "%d GPU%s in %s%s", n > 0 ? n : 0,
	    n == 1 ? "" : "s", gpus, list);
}

static void check_driver(struct cli_doctor *d)
{
	char proc[1024], version[128];

	cli_doctor_under(d, "/proc", proc, sizeof(proc));
	check_gpus(d, proc);
	if (rtid__driver_version_read(proc, version, sizeof(version)) == 0) {
		cli_doctor_add(d, "nvidia-driver", true, NULL, "version %s", version);
		cli_doctor_attested(d, version);
	} else
		cli_doctor_add(d, "nvidia-driver", false, "install the NVIDIA driver (550 or later for "
		    "cuda-checkpoint; 570 for the driver API)", "no readable %s/driver/nvidia/version",
		    proc);
}

/* --- the socket systemd passes --- */
static const char *const unit_dirs[] = { "/etc/systemd/system", "/usr/local/lib/systemd/system",
					 "/usr/lib/systemd/system", "/lib/systemd/system" };

bool cli_doctor_unit(const struct cli_doctor *d, const char *unit, char *out, size_t len)
{
	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++) {
		snprintf(out, len, "%s%s/%s", d->root, unit_dirs[i], unit);
		if (access(out, F_OK) == 0)
			return true;
	}
	return false;
}

/* The last ListenSequentialPacket= of a unit file or drop-in into sock (an
 * empty one resets the list, as systemd reads it). */
static void listen_of(const char *file, char *sock, size_t len)
{
	char buf[8192];
	ssize_t n = rtid__read_at(AT_FDCWD, file, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *l = buf, *nl; l && *l; l = nl) {
		if ((nl = strchr(l, '\n')))
			*nl++ = '\0';
		if (!strncmp(l, "ListenSequentialPacket=", 23))
			snprintf(sock, len, "%s", l + 23);
	}
}

static int conf_only(const struct dirent *e)
{
	return strlen(e->d_name) > 5 && !strcmp(e->d_name + strlen(e->d_name) - 5, ".conf");
}

void cli_doctor_socket_unit(struct cli_doctor *d, const char *path)
{
	char unit[1100], dropin[1100], file[1400], sock[1024] = "";
	struct dirent **e;
	int n;

	if (!cli_doctor_unit(d, "rtid.socket", unit, sizeof(unit)))
		return;
	listen_of(unit, sock, sizeof(sock));
	snprintf(dropin, sizeof(dropin), "%s/etc/systemd/system/rtid.socket.d", d->root);
	for (int i = 0, k = n = scandir(dropin, &e, conf_only, alphasort); i < k; i++) {
		snprintf(file, sizeof(file), "%s/%s", dropin, e[i]->d_name);
		listen_of(file, sock, sizeof(sock));
		free(e[i]);
	}
	free(n >= 0 ? e : NULL);
	/* Under socket activation the daemon answers on the socket systemd
	 * passes, whatever --socket or RTID_SOCKET says: a shim that asks
	 * another path finds no daemon and pays an attach per call. */
	cli_doctor_add(d, "socket-unit", !strcmp(sock, path), "name rtid.socket's socket in "
	    "the settings file (RTID_SOCKET), or change both (systemctl edit rtid.socket)",
	    "rtid.socket listens on %s; the shim and rtid ask %s", sock[0] ? sock : "(no "
	    "ListenSequentialPacket=)", path);
}

/* --- rtid serve --- */
/* How the daemon is run here: by systemd when systemd runs the node
 * (/run/systemd/system) and rtid's units are installed; else by hand. */
static bool under_systemd(const struct cli_doctor *d)
{
	char p[1100];
	struct stat st;

	cli_doctor_under(d, "/run/systemd/system", p, sizeof(p));
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	return cli_doctor_unit(d, "rtid.socket", p, sizeof(p));
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

/* rtid serve reachable, root's, attached, serving actions. Asked with its
 * status request, which reaches no driver: the check adds no driver call to
 * the daemon's counters, and works with a driver that hangs. */
static void check_daemon(struct cli_doctor *d)
{
	const char *path = d->sock;
	bool sd = under_systemd(d);
	const char *restart = sd ? "systemctl restart rtid.socket rtid.service; journalctl -u rtid"
				 : "start rtid serve again as root (it replaces a stale socket); "
				   "its stderr says why it ended";
	struct serve_seen seen = { 0 };
	struct rtid__svc_conn c;
	struct stat st;
	int r;

	if (sd)
		cli_doctor_socket_unit(d, d->sock_tree);
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
	if (st.st_uid != 0 && !rtid__svc_uid_named(cli_doctor_env(d, "RTID_SERVE_UID") ?: d->serve_uid,
						   st.st_uid)) {
		cli_doctor_add(d, "rtid-serve", false, sd ? "run rtid serve as root (rtid.service)"
		    : "run rtid serve as root, or name its uid in RTID_SERVE_UID in the shim's settings",
		    "%s is owned by uid %u: the shim trusts root's daemon only, or RTID_SERVE_UID's",
		    path, (unsigned)st.st_uid);
		return;
	}
	/* EPIPE: connected, and hung up on before the greeting was sent; what
	 * answers there answered nothing, as when it hangs up after it (the
	 * two differ only by how soon it closed). */
	if ((r = rtid__svc_open(path, &c)) < 0 && r != -EPIPE) {
		cli_doctor_add(d, "rtid-serve", false, r == -EACCES ? "run rtid doctor as root, or as a "
		    "member of the socket's group (rtid serve --group); CRIU runs the shim as root"
		    : restart, "%s: cannot connect: %s%s", path, strerror(-r), r == -ECONNREFUSED
		    ? " (nobody listens: the daemon is gone)" : "");
		return;
	}
	if (r == 0) {
		r = rtid__svc_status(&c, rtid__now() + 10, stat_line, &seen);
		rtid__svc_close(&c);
	} else {
		r = -EIO; /* as rtid__svc_status says a closed connection */
	}
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

/* --- the tree checked --- */
void cli_doctor_tree(struct cli_doctor *d)
{
	const char *sock = d->socket[0] ? d->socket : RTID__SVC_SOCKET_DEFAULT;
	char path[1100], node[64];

	if (!d->root[0]) {
		sock = getenv("RTID_SOCKET") ? rtid__svc_path(NULL) : sock;
		snprintf(d->sock, sizeof(d->sock), "%s", sock);
		snprintf(d->sock_tree, sizeof(d->sock_tree), "%s", sock);
		snprintf(d->tool, sizeof(d->tool), "%s", d->real_tool);
		return;
	}
	if (!d->socket[0]) { /* the node's default, as the tree has it */
		snprintf(node, sizeof(node), "/%s", RTID_NODE_SOCKET);
		sock = node;
	}
	snprintf(d->sock_tree, sizeof(d->sock_tree), "%s", sock);
	cli_doctor_under(d, sock, d->sock, sizeof(d->sock));
	if (d->real_tool[0])
		cli_doctor_under(d, d->real_tool, d->tool, sizeof(d->tool));
	snprintf(d->env_conf, sizeof(d->env_conf), "RTID_SHIM_CONF=%s", d->conf);
	snprintf(d->env_sock, sizeof(d->env_sock), "RTID_SOCKET=%s", d->sock);
	if (d->tool[0])
		snprintf(d->env_tool, sizeof(d->env_tool), "RTID_REAL_TOOL=%s", d->tool);
	cli_doctor_engine_path(d->root, path, sizeof(path));
	cli_doctor_add(d, "root", true, NULL, "the tree at %s alone (no setting of this shell's): "
	    "settings %s, socket %s, the engines' PATH %s", d->root, d->conf[0] ? d->conf : "none",
	    d->sock, path);
}

/* --- the report --- */
/* Every check, in words or as JSON, on stdout. Returns the exit status: 0
 * when all passed, else 1. */
static int report(const struct cli_doctor *d, bool json)
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
	cli_doctor_tree(d);
	cli_doctor_path(d);
	check_daemon(d);
	cli_doctor_criu(d);
	check_driver(d);
	rc = report(d, json);
	free(d);
	return rc;
}
