/* The shim's question to rtid serve, in process: which argument lists are a
 * call the daemon answers (the rest never reach the socket), and that no
 * socket, or something else at its path, leaves the call to the shim. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "shim/shim.h"
#include "helpers.h"
#include "serve/serve.h"

#define ARGV(...) ((char *[]){ "cuda-checkpoint", __VA_ARGS__, NULL })

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* Whether the shim asked the socket: a listener with a backlog tells. */
static bool asked(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void test_which_calls_are_asked(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *dir = tmp_dir(), path[100];
	char **yes[] = {
		ARGV("--get-restore-tid", "--pid", "7"), ARGV("--pid", "7", "--get-restore-tid"),
		ARGV("--get-state", "--pid", "7"), ARGV("--action", "lock", "--pid", "7"),
		ARGV("--pid", "7", "--timeout", "0", "--action", "lock"),
		ARGV("--action", "unlock", "--pid", "7"), ARGV("--action", "restore", "--pid", "7"),
		ARGV("--action", "checkpoint", "--pid", "7"),
	};
	char **no[] = {
		ARGV("-h"), ARGV("--toggle", "--pid", "7"), ARGV("--get-restore-tid"),
		ARGV("--get-restore-tid", "--pid", "0"), ARGV("--get-restore-tid", "--pid"),
		ARGV("--pid", "7"), ARGV("--get-state", "--get-restore-tid", "--pid", "7"),
		ARGV("--get-state", "--pid", "7", "--pid", "7"), ARGV("--action", "freeze", "--pid", "7"),
		ARGV("--action"), ARGV("--get-state", "--pid", "7", "--timeout", "10"),
		ARGV("--action", "lock", "--pid", "7", "--timeout"),
		ARGV("--action", "lock", "--pid", "7", "--timeout", "1", "--timeout", "1"),
		ARGV("--action", "lock", "--pid", "7", "--timeout", "x"),
		ARGV("--action", "lock", "--action", "lock", "--pid", "7"),
	};
	char log[120];
	int lfd, rc = -1;

	(void)state;
	snprintf(log, sizeof(log), "%s/shim.log", dir);
	setenv("RTID_SHIM_LOG", log, 1);
	snprintf(path, sizeof(path), "%s/s", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 64), 0);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "0.01", 1); /* nobody answers: late */
	setenv("RTID_SERVICE_ACTION_TIMEOUT", "0.01", 1);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_false(shim_try_service(count(no[i]), no[i], &rc));
		assert_false(asked(lfd));
	}
	assert_int_equal(access(log, F_OK), -1); /* not the daemon's calls: nothing to say */
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_false(shim_try_service(count(yes[i]), yes[i], &rc)); /* late */
		assert_true(asked(lfd));
	}
	assert_int_equal(rc, -1);
	/* A daemon that does not answer says why in the shim's log, once per call. */
	assert_int_equal(count_lines(log), (int)(sizeof(yes) / sizeof(yes[0])));
	assert_non_null(strstr(slurp(log), ": no answer: "));
	close(lfd);
	/* The socket is there but nobody listens: that is said too. */
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc));
	assert_int_equal(count_lines(log), (int)(sizeof(yes) / sizeof(yes[0])) + 1);
	assert_non_null(strstr(slurp(log), ": cannot connect: Connection refused"));
	unsetenv("RTID_SHIM_LOG");
	unlink(path);
	/* No socket, or a file at its path: nothing is asked. A bad wait is the
	 * default wait. */
	setenv("RTID_SERVICE_TIMEOUT", "bogus", 1);
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc));
	write_file(dir, "s", "not a socket\n");
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc));
	rm_tree(dir);
	free(dir);
}

/* The daemon's log: one line per event, cut rather than split when long. */
static void test_log_line_is_bounded(void **state)
{
	char big[1000], got[2048];
	int p[2], saved = dup(2);
	ssize_t n;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(pipe(p), 0);
	dup2(p[1], 2);
	serve_log("denied %s", big);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], got, sizeof(got));
	close(p[0]);
	assert_true(n > 500 && n < 530);
	assert_int_equal(got[n - 1], '\n');
	assert_null(memchr(got, '\n', (size_t)n - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_calls_are_asked),
		cmocka_unit_test(test_log_line_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
