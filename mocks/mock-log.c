#include "mock-log.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "casefile.h"

double mock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mock_log(const char *who, const char *event, int pid, int argc, char **argv,
	      const char *note)
{
	const char *path = getenv("RTID_MOCK_LOG");
	json_t *o, *args;
	char *text;
	int fd;

	if (!path || !*path)
		return;
	args = json_array();
	for (int i = 0; argv && i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	o = json_pack("{s:s,s:s,s:i,s:i,s:o,s:f,s:s?}", "mock", who, "event", event, "pid", pid,
		      "self", (int)getpid(), "argv", args, "t", mock_now(), "note", note);
	text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(o);
	if (!text)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t len = strlen(text);

		text[len] = '\n';
		/* One write: O_APPEND makes it land whole after the others. */
		if (write(fd, text, len + 1) < 0) {
			/* nothing to do: a lost log line fails the case that counts it */
		}
		close(fd);
	}
	free(text);
}

int mock_listed(const char *var, const char *op, int all)
{
	const char *ops = getenv(var);
	size_t len = strlen(op);

	if (!ops || !*ops)
		return all;
	for (const char *p = ops; (p = strstr(p, op)); p += len)
		if ((p == ops || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return 0;
}

void mock_slow_op(const char *op)
{
	const char *slow = getenv("RTID_MOCK_SLOW_S");
	double s;
	struct timespec ts;

	if (!slow || !mock_listed("RTID_MOCK_SLOW_OPS", op, 0))
		return;
	s = cf_scaled(strtod(slow, NULL)); /* the test's own setting, not foreign text */
	ts = (struct timespec){ (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
