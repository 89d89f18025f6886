/* The shim's first try: ask rtid serve, when its socket exists, and print
 * exactly what the real cuda-checkpoint would have printed. Anything short
 * of a driver answer (no daemon, refused, denied, an error, late) leaves the
 * call to the shim's usual path, which ends in the real tool. Two exceptions,
 * both for actions, where the tool's run would overlap a call of the
 * daemon's inside the driver: an action the daemon started and whose outcome
 * it lost, and an action it held back because an earlier call about the same
 * process is still inside the driver (error in-driver: a hung call, or one a
 * previous daemon left there). Each fails as the tool fails an action: a
 * message on stderr, exit 1. A query held back so still goes to the real
 * tool: queries change nothing, and CRIU reads any failure of
 * --get-restore-tid as "no CUDA here", which would leave the process out of
 * the dump. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic/parse.h"
#include "cli/cli.h"
#include "proc/proc.h"
#include "proto/service-client.h"
#include "rules/rules.h"
#include "shim/shim.h"

#define WAIT_DEFAULT 2.0 /* seconds for connect and reply (RTID_SERVICE_TIMEOUT) */
#define ACTION_WAIT_DEFAULT 660.0 /* the daemon's action deadline, and some */
#define NOTE_LINE 2047 /* bytes in a line of RTID_SHIM_LOG, its newline included */

static bool is_op(const char *a, struct rtid__svc_req *q)
{
	if (!strcmp(a, "--get-restore-tid"))
		q->op = RTID__OP_RESTORE_TID;
	else if (!strcmp(a, "--get-state"))
		q->op = RTID__OP_GET_STATE;
	else
		return false;
	return true;
}

static bool action(const char *a, struct rtid__svc_req *q)
{
	for (int op = RTID__OP_LOCK; op < RTID__OP_COUNT; op++)
		if (!strcmp(a, rtid__svc_op_name(op))) {
			q->op = op;
			return true;
		}
	return false;
}

/* The calls the daemon can answer, options in any order, each once. */
static bool parse(int argc, char **argv, struct rtid__svc_req *q)
{
	bool op = false, pid = false, timeout = false, map = false;
	char why[160];
	int ms;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1]; /* past the last, argv[argc]: NULL */

		if (!op && is_op(a, q))
			op = true;
		else if (!op && !strcmp(a, "--action") && v && action(v, q))
			op = true, i++;
		else if (!pid && !strcmp(a, "--pid") && v && rtid__parse_pid(v, &q->pid) == 0)
			pid = true, i++;
		else if (!timeout && !strcmp(a, "--timeout") && v &&
			 (rtid__parse_pid(v, &ms) == 0 || !strcmp(v, "0")))
			timeout = true, q->timeout_ms = strcmp(v, "0") ? (unsigned)ms : 0, i++;
		else if (!map && !strcmp(a, "--device-map") && v &&
			 rtid__devmap_parse(v, &q->map, why, sizeof(why)) == 0)
			map = true, i++;
		else if (!map && !strcmp(a, "--device-map") && v)
			return shim_note("%s: the real tool's to judge", why), false;
		else
			return false;
	}
	/* The real tool takes --timeout for lock only; anything else is its to
	 * judge. A map with anything but a restore the client never sends
	 * (rtid__svc_call): the tool judges that too. */
	return op && pid && (!timeout || q->op == RTID__OP_LOCK);
}

/* The request rule, applied before anyone is asked: as the caller (its own
 * processes, or any for root), who may ask for actions here as the real tool
 * would let it (the daemon applies its own stricter rule again). NULL when
 * the call may go ahead, else why not. */
static const char *refused(const struct rtid__svc_req *q)
{
	const char *proc = getenv("RTID_PROC");
	struct rtid__req_facts f = {
		.kind = rtid__svc_op_kind(q->op),
		.check_caller = true, .caller = geteuid(), .may_act = true,
	};
	enum rtid__req_verdict v;

	rtid__request_facts(proc && *proc ? proc : "/proc", q->pid, &f);
	v = rtid__request_rule(&f);
	return v == RTID__REQ_OK ? NULL : rtid__request_why(v);
}

static const char *const what[RTID__OP_COUNT] = {
	"get restore thread ID for", "get state of", "lock", "checkpoint", "restore", "unlock",
};

/* Print the driver's answer as the tool does; return its exit status. */
static int print(const struct rtid__svc_ans *a)
{
	if (a->kind == RTID__SVC_TID)
		printf("%d\n", a->value);
	else if (a->kind == RTID__SVC_STATE)
		printf("%s\n", rtid__svc_state_name(a->value));
	else if (a->kind == RTID__SVC_CUERR && strcmp(a->text, "-"))
		fprintf(stderr, "Could not %s process ID %d: \"%s\"\n", what[a->op], a->pid, a->text);
	else if (a->kind == RTID__SVC_CUERR) /* a code the driver has no string for */
		fprintf(stderr, "Could not %s process ID %d: \"error %d\"\n", what[a->op], a->pid,
			a->value);
	fflush(NULL);
	return a->kind == RTID__SVC_CUERR ? a->value & 0xff : 0;
}

/* Why the shim fell back, appended to RTID_SHIM_LOG when set: never on
 * stderr, which CRIU reads in front of the real tool's answer. */
void shim_note(const char *fmt, ...)
{
	const char *path = getenv("RTID_SHIM_LOG");
	char stamp[32], *line = NULL;
	struct timespec ts;
	size_t len; /* open_memstream sets it */
	struct tm tm;
	va_list ap;
	FILE *f;
	int fd;

	if (!path || !*path)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	/* A stream that grows: the note is whole before it is cut, and no
	 * offset into a fixed buffer is computed by hand. */
	if (!(f = open_memstream(&line, &len)))
		return;
	fprintf(f, "%s.%03ldZ %d: ", stamp, ts.tv_nsec / 1000000, (int)getpid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0) {
		free(line);
		return;
	}
	/* A note too long (the whole argv, the tool's error) is cut to one line
	 * of NOTE_LINE bytes with its newline, which takes the place of the
	 * terminating NUL or of the first byte cut. */
	if (len > NOTE_LINE - 1)
		len = NOTE_LINE - 1;
	line[len++] = '\n';
	/* O_NONBLOCK: a FIFO at the path must not hang the call CRIU waits on
	 * (an open for writing blocks until a reader comes); only a regular
	 * file is written, in one write, so that the lines of shims running at
	 * once never interleave. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			(void)!write(fd, line, len);
		close(fd);
	}
	free(line);
}

bool shim_try_service(int argc, char **argv, int *rc, bool *to_tool)
{
	struct rtid__svc_req q = { 0 };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;
	const char *path = rtid__svc_path(NULL);
	struct stat st;
	double wait = rtid__env_seconds("RTID_SERVICE_TIMEOUT", WAIT_DEFAULT);
	const char *why;
	char buf[120];
	int r;

	if (!parse(argc, argv, &q))
		return false; /* not a call the daemon serves: pass_through logs it */
	r = stat(path, &st) < 0 ? -errno : S_ISSOCK(st.st_mode) ? 0 : -ENOTSOCK;
	if (r < 0) {
		shim_note("%s --pid %d: rtid serve not asked: %s at %s", rtid__svc_op_name(q.op),
			  q.pid, r == -ENOENT || r == -ENOTSOCK ? "no socket" : strerror(-r), path);
		return false;
	}
	if ((why = refused(&q))) {
		shim_note("%s --pid %d: %s: not asked of rtid serve", rtid__svc_op_name(q.op), q.pid,
			  why);
		return false;
	}
	/* A daemon is set up from here on: why it did not answer is worth a line. */
	if ((r = rtid__svc_open_version(path, &c, q.map.n ? RTID__SVC_VERSION_MAP
						      : RTID__SVC_VERSION_PLAIN)) < 0) {
		shim_note("rtid serve at %s: cannot connect: %s", path, strerror(-r));
		return false;
	}
	if ((why = rtid__svc_untrusted(&c, buf, sizeof(buf)))) {
		shim_note("rtid serve at %s: not trusted: %s", path, why);
		rtid__svc_close(&c);
		return false;
	}
	/* An action may not be repeated by the tool while the daemon still runs it,
	 * so its answer is awaited past the daemon's own deadline. */
	if (q.op >= RTID__OP_LOCK)
		wait = rtid__env_seconds("RTID_SERVICE_ACTION_TIMEOUT", ACTION_WAIT_DEFAULT) +
		       q.timeout_ms / 1000.0;
	r = rtid__svc_call(&c, &q, rtid__now() + wait, &a);
	rtid__svc_close(&c);
	/* Started by the daemon: whatever went wrong since, the action may have
	 * reached the driver, and running it again through the tool would be a
	 * second operation on a process in an unknown state. It fails here, as
	 * the tool fails an action, with the reason on stderr. */
	if (c.started && (r < 0 || a.kind == RTID__SVC_UNKNOWN || a.kind == RTID__SVC_ERROR ||
			  a.kind == RTID__SVC_DENIED)) {
		snprintf(buf, sizeof(buf), "%s", r < 0 ? strerror(-r) : a.text);
		fprintf(stderr, "Could not %s process ID %d: \"rtid serve started it and %s: %s; "
			"its outcome is unknown, so it is not run again\"\n", what[q.op], q.pid,
			r < 0 ? "the answer was lost" : "could not tell its outcome",
			r < 0 ? buf : a.name);
		shim_note("rtid serve at %s: %s --pid %d started, outcome unknown (%s): not run "
			  "again", path, rtid__svc_op_name(q.op), q.pid, buf);
		*rc = 1;
		return true;
	}
	if (r < 0) {
		shim_note("rtid serve at %s: no answer: %s", path, strerror(-r));
		return false;
	}
	if (q.op >= RTID__OP_LOCK && a.kind == RTID__SVC_ERROR &&
	    !strcmp(a.name, RTID__SVC_IN_DRIVER)) {
		fprintf(stderr, "Could not %s process ID %d: \"rtid serve held it back: an earlier "
			"call about this process is still inside the driver; not run\"\n", what[q.op],
			q.pid);
		shim_note("rtid serve at %s: %s --pid %d held back, a call about it still in the "
			  "driver: failed, not run by the tool", path, rtid__svc_op_name(q.op), q.pid);
		*rc = 1;
		return true;
	}
	if (a.kind == RTID__SVC_ERROR || a.kind == RTID__SVC_DENIED) {
		shim_note("rtid serve at %s: %s: %s", path,
			  a.kind == RTID__SVC_DENIED ? "denied" : a.name, a.text);
		return false;
	}
	/* A query the driver failed, where its "none" is not what it said: the
	 * daemon's own attach may be what failed (its confinement, an attach
	 * gone stale), and a failure read as "no CUDA here" would leave the
	 * process out of the dump. The tool's own attach answers it. Nothing
	 * was started: a query changes nothing. */
	if (a.kind == RTID__SVC_CUERR && q.op < RTID__OP_LOCK &&
	    rtid__driver_said((int)a.value) == RTID__SAID_FAILED) {
		shim_note("rtid serve at %s: %s --pid %d: driver error %s: to the real tool", path,
			  rtid__svc_op_name(q.op), q.pid, a.name);
		if (to_tool)
			*to_tool = true; /* rtid's own query would ask the same tool or driver */
		return false;
	}
	*rc = print(&a);
	/* The note carries the answer itself: the log alone tells an operator
	 * which tid or state CRIU was given. */
	if (a.kind == RTID__SVC_TID)
		snprintf(buf, sizeof(buf), "tid %d", a.value);
	else if (a.kind == RTID__SVC_STATE)
		snprintf(buf, sizeof(buf), "state %s", rtid__svc_state_name(a.value));
	else if (a.kind == RTID__SVC_DONE)
		snprintf(buf, sizeof(buf), "done");
	else
		snprintf(buf, sizeof(buf), "driver error %s", a.name);
	shim_note("%s --pid %d: answered by rtid serve: %s, exit %d", rtid__svc_op_name(q.op),
		  q.pid, buf, *rc);
	return true;
}
