/* Shared pieces of the rtid command's subcommands. */
#ifndef RTID_CLI_H
#define RTID_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "basic/parse.h"
#include "rtid.h"

struct cli_opts {
	struct rtid_config cfg;
	const char *attestation_path;
	struct rtid_attestation *attestation;
	bool json;
	const char *bad_env_version; /* a malformed RTID_DRIVER_VERSION, until an option overrides it */
};

/* Options every resolving subcommand takes; the help text lists them. */
extern const char cli_common_help[];

/* Defaults from the environment (RTID_MODE, RTID_PROC, ...). Returns 0 or -1
 * after printing what is wrong. */
int cli_opts_init(struct cli_opts *o, const char *prog);

/* Handle one common option (getopt_long's value c, its argument arg). Returns
 * 1 if handled, 0 if not a common option, -1 after printing a usage error. */
int cli_opt_common(struct cli_opts *o, int c, const char *arg, const char *prog);

/* After the options: a malformed RTID_DRIVER_VERSION that no
 * --driver-version overrode is an error naming the variable. 0 or -1 after
 * printing. (The shim does not call it: there the version is just unknown.) */
int cli_check_env(const struct cli_opts *o, const char *prog);

/* Load the attestation the options name. Returns 0 or -1 after printing. */
int cli_load_attestation(struct cli_opts *o, const char *prog);

/* A strict count from the command line: 0..max. */
int cli_parse_count(const char *s, unsigned max, unsigned *out);

/* Print one result as a JSON line, or a table row. */
void cli_print_json(FILE *f, const struct rtid_result *r);
void cli_print_table_head(FILE *f);
void cli_print_row(FILE *f, const struct rtid_result *r);

/* Process hygiene (cli-opts.c). init: become a child subreaper and make
 * SIGTERM/SIGINT/SIGHUP kill and reap every child before rtid dies by the
 * signal. kill_strays: kill and reap every child left (async-signal-safe).
 * before_exec: the same, then undo init, for an exec of the real tool. */
void cli_hygiene_init(void);
/* What a caller may hand down that breaks waiting for children: SIGCHLD
 * ignored (the kernel then reaps them itself, and every exit status is lost)
 * and blocked signals, reset to the defaults; and fds 0-2 closed, opened on
 * /dev/null so that no socket or pipe of ours takes their numbers. Before
 * anything is spawned. */
void cli_hygiene_reset_signals(void);
void cli_kill_strays(void);
void cli_hygiene_before_exec(void);

/* --- cli-opts.c, too: the values of the settings (the file: conf/) --- */
/* Whether the shim can use value for the setting name: NULL when it can (an
 * empty value is the default, as unset; a path or a name is any value), else
 * the values accepted, in words. The shim and rtid doctor judge by this one
 * function, so that what doctor passes the shim takes. */
const char *cli_conf_unusable(const char *name, const char *value);
/* The first setting of the file's names in the environment that the shim
 * cannot use: its name, its *value and the values *accepted; NULL when
 * every one is usable. */
const char *cli_conf_env_unusable(const char **value, const char **accepted);
/* rtid doctor: the node's setup for CRIU, the shim and rtid serve. */
int cmd_doctor(int argc, char **argv);

/* rtid doctor's shared parts (cli-doctor-shim.c), for cli-doctor.c. */
/* systemd's default PATH, which Podman, CRI-O (monitor_env), containerd
 * and sudo's secure_path give too. */
#define CLI_ENGINE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define CLI_DOCTOR_MAX 16

struct cli_check {
	const char *name;
	bool ok;
	char detail[400], fix[300];
};

struct cli_doctor {
	const char *root; /* "" for / */
	struct cli_check c[CLI_DOCTOR_MAX];
	int n;
	char socket[1024], real_tool[1024], mode[32]; /* from the shim's settings file */
	char serve_uid[32]; /* RTID_SERVE_UID, from the file */
	char attestation[1024]; /* RTID_ATTESTATION, from the file */
	char shim_log[1024];    /* RTID_SHIM_LOG, from the file */
	/* The settings file and the socket checked: under the root, the tree's
	 * own (its file's RTID_SOCKET, else the default); the socket as the
	 * tree names it too (rtid.socket's words), and the engines' PATH. */
	char conf[1100], sock[1100], sock_tree[1024], tool[1100];
	/* Under the root: what the shim run for -h is given for them. */
	char env_conf[1200], env_sock[1200], env_tool[1200];
	bool tool_named; /* by RTID_REAL_TOOL in the file, which its old name does not override */
	unsigned bad_lines, lines, bad_values;
	char bad[480]; /* the lines that are no setting, each with its name */
	char bad_value[300]; /* the first value the shim cannot use: line, setting, accepted */
};

/* Record a check: its name, whether it passed, the fix (kept for a failure
 * only) and what was found. CLI_DOCTOR_MAX holds every check. */
struct cli_check *cli_doctor_add(struct cli_doctor *d, const char *name, bool ok, const char *fix,
				 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* cli-attest.c: whether the scan is attested for the running driver
 * version (a check of d). */
void cli_doctor_attested(struct cli_doctor *d, const char *version);
/* Run tool -h as CRIU's CUDA plugin runs cuda-checkpoint (argv[0]
 * "cuda-checkpoint", the engines' PATH under d's root, no LD_LIBRARY_PATH
 * nor LD_PRELOAD; behind_shim: with RTID_SHIM_ACTIVE, as the shim runs the
 * real tool), and judge it as the plugin does: true when it exits 0 with
 * --action in the first 2047 bytes of its output; else false and why (its
 * exit status or signal and the first line of its stderr). At most 10 s. */
bool cli_doctor_help(const struct cli_doctor *d, const char *tool, bool behind_shim, char *why,
		     size_t len);
/* A setting from the environment as the checked tree's shim would see it:
 * getenv here; NULL under --root, where only the tree's own file counts (an
 * engine passes CRIU none of a shell's environment). */
const char *cli_doctor_env(const struct cli_doctor *d, const char *name);
/* After cli_doctor_conf: the socket the checked tree's shim asks (d->sock,
 * and d->sock_tree as the tree names it), its named real tool (d->tool);
 * under a root, the one line that says what is checked. */
void cli_doctor_tree(struct cli_doctor *d);
/* path inside the tree d checks, into out. */
void cli_doctor_under(const struct cli_doctor *d, const char *path, char *out, size_t len);
/* The next directory of the colon list at *p into out; false at its end. */
bool cli_doctor_next_dir(const char **p, char *out, size_t len);
/* The engines' PATH (CLI_ENGINE_PATH) with each directory under root ("" for
 * /), into out. */
void cli_doctor_engine_path(const char *root, char *out, size_t len);
/* The shim's settings file and its values; the shim first, its -h, and the
 * real tool after it on the engines' PATH (cli-doctor-shim.c; rtid serve,
 * CRIU, the driver and the report are cli-doctor.c's own). */
void cli_doctor_conf(struct cli_doctor *d);
/* CRIU on the engines' PATH, its version, its CUDA plugin where CRIU loads
 * it, and no second CUDA plugin beside it (cli-doctor-criu.c). */
void cli_doctor_criu(struct cli_doctor *d);
/* Where a systemd unit of rtid's is installed under d's root (/etc first, as
 * systemd looks), into out; false when nowhere. */
bool cli_doctor_unit(const struct cli_doctor *d, const char *unit, char *out, size_t len);
/* With rtid.socket installed: whether it listens (its unit file and its
 * drop-ins in /etc) on path, the socket the shim's settings name; a check
 * "socket-unit" that fails when not. */
void cli_doctor_socket_unit(struct cli_doctor *d, const char *path);
void cli_doctor_path(struct cli_doctor *d);

int cmd_resolve(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_attest(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* rtid serve status: the running daemon's counters. */
int cmd_serve_status(int argc, char **argv);

/* getopt_long values of the common long options. */
enum {
	OPT_MODE = 0x100, OPT_BACKEND, OPT_TOOL, OPT_LIBCUDA, OPT_PROC, OPT_PATTERN,
	OPT_DRIVER_VERSION, OPT_ATTESTATION, OPT_UNATTESTED, OPT_TIMEOUT, OPT_DEADLINE,
	OPT_JOBS, OPT_JSON,
};

#define CLI_COMMON_LONGOPTS                                                   \
	{ "mode", 1, NULL, OPT_MODE }, { "backend", 1, NULL, OPT_BACKEND },   \
	{ "tool", 1, NULL, OPT_TOOL }, { "libcuda", 1, NULL, OPT_LIBCUDA },   \
	{ "proc", 1, NULL, OPT_PROC }, { "pattern", 1, NULL, OPT_PATTERN },   \
	{ "driver-version", 1, NULL, OPT_DRIVER_VERSION },                    \
	{ "attestation", 1, NULL, OPT_ATTESTATION },                          \
	{ "unattested", 0, NULL, OPT_UNATTESTED },                            \
	{ "timeout", 1, NULL, OPT_TIMEOUT }, { "deadline", 1, NULL, OPT_DEADLINE }, \
	{ "jobs", 1, NULL, OPT_JOBS }, { "json", 0, NULL, OPT_JSON }

#endif
