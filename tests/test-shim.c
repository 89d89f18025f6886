/* The cuda-checkpoint shim, called exactly as CRIU's CUDA plugin calls the
 * tool: execvp("cuda-checkpoint") from PATH, stdout and stderr into one pipe,
 * a 128-byte buffer, atoi, the exit status. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "plugin-call.h"
#include "shim-harness.h"

static void driver_mode_gives_the_tools_tid(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR", "", 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.tid, 4244);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
}

/* rtid's own answer is in the shim's log with the tid it gave, whatever its
 * number (tid 1 too: the one thread of a container's first process, by its
 * number there), or "none". */
static void rtids_answer_noted(void **state)
{
	char *q1[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "1", NULL };
	char *q[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char note[600];
	struct criu_call c;

	(void)state;
	snprintf(note, sizeof(note), "%s/shim.log", test_dir);
	unlink(note);
	setenv("RTID_SHIM_LOG", note, 1);
	write_file(test_dir, "proc/1/task/1/comm", "python3\n");
	setenv("FAKE_STDOUT", "1\n", 1);
	c = criu(q1);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "1\n");
	assert_non_null(strstr(slurp(note), "--get-restore-tid --pid 1: answered by rtid (tool): tid 1\n"));
	unsetenv("FAKE_STDOUT");
	setenv("FAKE_EXIT", "1", 1);
	c = criu(q);
	assert_int_equal(c.status, 1);
	assert_non_null(strstr(slurp(note), "--get-restore-tid --pid 4242: answered by rtid (tool): "
					    "none\n"));
	unsetenv("RTID_SHIM_LOG");
	unlink(note);
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/proc/1", test_dir);
		rm_tree(path);
	}
}

/* Every setting the shim takes, set to a value it can use: the query is
 * still the tool's answer, once; the API backend without its worker ends in
 * the real tool's answer too, never in an error of rtid's own. */
static void usable_settings_are_taken(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char *worker;
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR", "", 1);
	setenv("RTID_MODE", "driver", 1);
	setenv("RTID_BACKEND", "tool", 1);
	setenv("RTID_TIMEOUT", "5", 1);
	setenv("RTID_PATTERN", "^cuda[0-9]+$", 1);
	setenv("RTID_UNATTESTED", "0", 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
	setenv("RTID_BACKEND", "api", 1);
	worker = getenv("RTID_WORKER") ? strdup(getenv("RTID_WORKER")) : NULL;
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
	if (worker)
		setenv("RTID_WORKER", worker, 1);
	else
		unsetenv("RTID_WORKER");
	free(worker);
	unsetenv("RTID_MODE");
	unsetenv("RTID_BACKEND");
	unsetenv("RTID_TIMEOUT");
	unsetenv("RTID_PATTERN");
	unsetenv("RTID_UNATTESTED");
}

/* A malformed RTID_DRIVER_VERSION makes the version unknown, never a failed
 * query: driver mode still answers as the tool does, and nothing is added. */
static void bad_version_variable_keeps_driver_mode(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR", "", 1);
	setenv("RTID_DRIVER_VERSION", "not-a-version", 1);
	c = criu(argv);
	unsetenv("RTID_DRIVER_VERSION");
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
}

static void attested_scan_spawns_no_tool(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char path[600];
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "9999\n", 1); /* a tool that would lie, if asked */
	setenv("RTID_MODE", "scan", 1);
	snprintf(path, sizeof(path), "%s/proc", test_dir);
	setenv("RTID_PROC", path, 1);
	snprintf(path, sizeof(path), "%s/att.json", test_dir);
	setenv("RTID_ATTESTATION", path, 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n"); /* nothing else, not even a warning */
	assert_int_equal(count_lines(log_path), 0);
	/* The plugin's other spelling of the query is rtid's to answer too. */
	{
		char *other[] = { "cuda-checkpoint", "--pid", "4242", "--get-restore-tid", NULL };

		c = criu(other);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "4244\n");
		assert_int_equal(count_lines(log_path), 0);
	}
}

static void none_exits_like_the_tool(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	struct criu_call c;

	(void)state;
	setenv("FAKE_EXIT", "1", 1);
	c = criu(argv);
	assert_int_equal(c.status, 1);
	/* rtid's answer (the tool ran once, for rtid), in the tool's words. */
	assert_string_equal(c.out, "Could not get restore thread ID for process ID 4242: "
			    "\"invalid argument\"\n");
	assert_int_equal(count_lines(log_path), 1);
	setenv("FAKE_EXIT", "3", 1);
	assert_int_equal(criu(argv).status, 3);
	setenv("FAKE_EXIT", "2", 1);
	assert_int_equal(criu(argv).status, 2);
	unsetenv("FAKE_EXIT");
	/* Garbage is never rtid's tid: the real tool runs again and its own
	 * output is what CRIU reads, exactly as without the shim. */
	setenv("FAKE_STDOUT", "12abc\n", 1);
	unlink(log_path);
	assert_string_equal(criu(argv).out, "12abc\n");
	assert_int_equal(count_lines(log_path), 2);
}

static void other_calls_reach_the_real_tool(void **state)
{
	char *lock[] = { "cuda-checkpoint", "--action", "lock", "--pid", "4242", "--timeout",
			 "10000", NULL };
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	char line[256] = "", note[600];
	struct criu_call c;
	FILE *f;

	(void)state;
	snprintf(note, sizeof(note), "%s/shim.log", test_dir);
	unlink(note);
	setenv("RTID_SHIM_LOG", note, 1);
	setenv("FAKE_EXIT", "7", 1);
	c = criu(lock);
	assert_int_equal(c.status, 7);
	f = fopen(log_path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "--action lock --pid 4242 --timeout 10000\n");
	unsetenv("FAKE_EXIT");
	setenv("FAKE_STDOUT", "real help: --action lock|checkpoint|restore|unlock\n", 1);
	c = criu(help);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "real help: --action lock|checkpoint|restore|unlock\n");
	/* A call of a query's length that is no query (a get-state) is the
	 * tool's alone: run once, as called, and nothing asked for rtid. */
	{
		char *get_state[] = { "cuda-checkpoint", "--get-state", "--pid", "4242", NULL };

		unlink(log_path);
		setenv("FAKE_STDOUT", "running\n", 1);
		c = criu(get_state);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "running\n");
		assert_int_equal(count_lines(log_path), 1);
		assert_string_equal(slurp(log_path), "--get-state --pid 4242\n");
	}
	/* The shim's log: for each of the three calls, that it went to the
	 * real tool (the two about a process, that no daemon was there to
	 * ask), and nothing of a resolver that was never asked. */
	{
		const char *t = slurp(note);
		int n = 0, m = 0;

		for (const char *p = t; (p = strstr(p, ": to the real tool ")); p++)
			n++;
		for (const char *p = t; (p = strstr(p, ": rtid serve not asked: no socket")); p++)
			m++;
		assert_int_equal(n, 3);
		assert_int_equal(m, 2);
		assert_int_equal(count_lines(note), 5);
	}
	unsetenv("RTID_SHIM_LOG");
	unlink(note);
}

static void no_real_tool_is_a_clear_error(void **state)
{
	char *argv[] = { "cuda-checkpoint", "-h", NULL };
	char saved[sizeof(path_env)];
	struct criu_call c;

	(void)state;
	memcpy(saved, path_env, sizeof(saved));
	snprintf(path_env, sizeof(path_env), "%s/shim:/usr/bin:/bin", test_dir);
	c = criu(argv);
	memcpy(path_env, saved, sizeof(saved));
	assert_true(c.status != 0 && c.status != 1 && c.status != 3);
	assert_non_null(strstr(c.out, "no real cuda-checkpoint"));
}

static void never_recurses(void **state)
{
	char *argv[] = { "cuda-checkpoint", "-h", NULL };
	char shim[600];
	struct criu_call c;

	(void)state;
	snprintf(shim, sizeof(shim), "%s/shim/cuda-checkpoint", test_dir);
	setenv("RTID_REAL_TOOL", shim, 1);
	c = criu(argv);
	assert_true(c.status != 0);
	assert_non_null(strstr(c.out, "shim itself"));
}

/* The tool rtid runs for its own query is never the shim again: a real tool
 * that is a wrapper calling cuda-checkpoint from PATH (the shim) meets the
 * recursion guard at once, for rtid's query, for the fallback and for a call
 * the shim hands over at once, and not a chain of shims each asking again
 * (the wrapper counts its runs; past eight it stops the chain itself). */
static void wrapper_of_the_shim_stops_at_once(void **state)
{
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	char wrapper[600], runs[600], text[1400];
	struct criu_call c;

	(void)state;
	snprintf(runs, sizeof(runs), "%s/wrapper-runs", test_dir);
	unlink(runs);
	snprintf(text, sizeof(text), "#!/bin/sh\necho run >> %s\n"
		 "[ \"$(wc -l < %s)\" -gt 8 ] && exit 9\nexec cuda-checkpoint \"$@\"\n", runs, runs);
	write_file(test_dir, "wrapper/cuda-checkpoint", text);
	snprintf(wrapper, sizeof(wrapper), "%s/wrapper/cuda-checkpoint", test_dir);
	assert_int_equal(chmod(wrapper, 0755), 0);
	setenv("RTID_REAL_TOOL", wrapper, 1);
	c = criu(query);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "refusing to recurse"));
	assert_int_equal(count_lines(runs), 2); /* rtid's query, then the fallback */
	assert_int_equal(count_lines(log_path), 0); /* the stand-in tool never ran */
	unlink(runs);
	/* A call the shim hands to the tool at once (no query of rtid's): the
	 * guard goes with it too, and the wrapper runs once. */
	c = criu(help);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "refusing to recurse"));
	assert_int_equal(count_lines(runs), 1);
	unlink(runs);
}

static void other_failures(void **state)
{
	char *query[] = { "cuda-checkpoint", "--pid", "4242", "--get-restore-tid", NULL };
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	struct criu_call c;

	(void)state;
	/* The other order of the two options is the same query. */
	setenv("FAKE_STDOUT", "4244\n", 1);
	assert_string_equal(criu(query).out, "4244\n");
	/* A tool that crashes: the shim dies by the same signal. */
	setenv("FAKE_SIGNAL", "11", 1);
	assert_int_equal(criu(query).status, 128 + 11);
	unsetenv("FAKE_SIGNAL");
	/* A real tool that cannot be run. */
	setenv("RTID_REAL_TOOL", "/nonexistent/cuda-checkpoint", 1);
	c = criu(help);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "no such executable"));
	c = criu(query);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "no such executable"));
	/* One that is executable but no program (no ELF, no #!): the exec
	 * fails, and the shim says so with its own code, never the tool's. */
	{
		char bad[600];

		write_file(test_dir, "not-a-program", "not a program\n");
		snprintf(bad, sizeof(bad), "%s/not-a-program", test_dir);
		assert_int_equal(chmod(bad, 0755), 0);
		setenv("RTID_REAL_TOOL", bad, 1);
		c = criu(help);
		assert_int_equal(c.status, 231);
		assert_non_null(strstr(c.out, "cannot run"));
		assert_non_null(strstr(c.out, "Exec format error"));
	}
	unsetenv("RTID_REAL_TOOL");
	/* Called from something the shim started: no recursion, and the log
	 * says why the call failed. */
	{
		char note[600];

		snprintf(note, sizeof(note), "%s/shim.log", test_dir);
		unlink(note);
		setenv("RTID_SHIM_LOG", note, 1);
		setenv("RTID_SHIM_ACTIVE", "1", 1);
		c = criu(query);
		unsetenv("RTID_SHIM_ACTIVE");
		unsetenv("RTID_SHIM_LOG");
		assert_int_equal(c.status, 231);
		assert_non_null(strstr(c.out, "refusing to recurse"));
		assert_non_null(strstr(slurp(note), ": called by itself (RTID_SHIM_ACTIVE is set: the real "
				       "tool is another shim?): refused, exit 231\n"));
		unlink(note);
	}
}

/* A thread given where a process is expected is refused before anyone is
 * asked, the real tool included (acting on a tid can harm the process), as
 * the tool answers a pid it cannot take (exit 1, "invalid argument"); it
 * used to reach the real tool, which locked the thread. --get-state takes a
 * thread: CRIU asks it with the restore tid. */
static void a_thread_is_refused_before_the_tool(void **state)
{
	static const char *const want[] = {
		"Could not lock process ID 4244: \"invalid argument\"\n",
		"Could not checkpoint process ID 4244: \"invalid argument\"\n",
		"Could not restore process ID 4244: \"invalid argument\"\n",
		"Could not unlock process ID 4244: \"invalid argument\"\n",
		"Could not get restore thread ID for process ID 4244: \"invalid argument\"\n",
		"Could not get restore thread ID for process ID 4244: \"invalid argument\"\n",
		"Could not toggle process ID 4244: \"invalid argument\"\n",
		"Could not lock process ID 4244: \"invalid argument\"\n",
	};
	char *calls[][8] = { /* each ends in NULL: the rest of its row */
		{ "cuda-checkpoint", "--action", "lock", "--pid", "4244", "--timeout", "10000" },
		{ "cuda-checkpoint", "--action", "checkpoint", "--pid", "4244", NULL },
		{ "cuda-checkpoint", "--action", "restore", "--pid", "4244", NULL },
		{ "cuda-checkpoint", "--pid", "4244", "--action", "unlock", NULL },
		{ "cuda-checkpoint", "--get-restore-tid", "--pid", "4244", NULL },
		{ "cuda-checkpoint", "--pid", "4242", "--get-restore-tid", "--pid", "4244", NULL },
		{ "cuda-checkpoint", "--toggle", "--pid", "4244", NULL },
		{ "cuda-checkpoint", "--timeout", "5", "--action", "lock", "--pid", "4244" },
	};
	char *state_call[] = { "cuda-checkpoint", "--get-state", "--pid", "4244", NULL };
	char *lock[] = { "cuda-checkpoint", "--action", "lock", "--pid", "4242", NULL };
	char path[600];
	struct criu_call c;

	(void)state;
	write_file(test_dir, "proc/4244/status", "Name:\tcuda00001400006\nTgid:\t4242\nPid:\t4244\n"
						 "Threads:\t2\n");
	write_file(test_dir, "proc/4242/status", "Name:\tpython3\nTgid:\t4242\nPid:\t4242\n"
						 "Threads:\t2\n");
	setenv("FAKE_STDOUT", "running\n", 1);
	snprintf(path, sizeof(path), "%s/shim-thread.log", test_dir);
	unlink(path);
	setenv("RTID_SHIM_LOG", path, 1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		c = criu(calls[i]);
		assert_int_equal(c.status, 1);
		assert_string_equal(c.out, want[i]);
	}
	unsetenv("RTID_SHIM_LOG");
	assert_int_equal(count_lines(log_path), 0); /* the real tool never ran */
	/* The operator reads why in the shim's log, with the thread's process. */
	assert_non_null(strstr(slurp(path), ": lock --pid 4244: a thread, not a process: only "
					  "get-state takes a thread (of process 4242): refused, the "
					  "real tool not run\n"));
	unlink(path);
	/* get-state by the restore tid, and a process, reach the tool. */
	c = criu(state_call);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "running\n");
	c = criu(lock);
	assert_int_equal(c.status, 0);
	assert_int_equal(count_lines(log_path), 2);
	/* An option's value is never an option, as the tool reads the call: a
	 * get-state whose --timeout or --device-map value reads "--toggle" is
	 * still a get-state, and takes the thread. */
	for (int i = 0; i < 2; i++) {
		char *odd[] = { "cuda-checkpoint", "--get-state", "--pid", "4244",
				i ? "--device-map" : "--timeout", "--toggle", NULL };

		c = criu(odd);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "running\n");
	}
	/* --action as the last argument names no action: still a get-state,
	 * the tool's to judge. */
	{
		char *last[] = { "cuda-checkpoint", "--get-state", "--pid", "4244", "--action", NULL };

		c = criu(last);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "running\n");
	}
	assert_int_equal(count_lines(log_path), 5);
	unlink(log_path);
	/* A status that says nothing of a thread leaves it to the tool. */
	write_file(test_dir, "proc/4244/status", "Name:\tcuda00001400006\n");
	c = criu(calls[0]);
	assert_int_equal(count_lines(log_path), 1);
	unlink(log_path);
	snprintf(path, sizeof(path), "%s/proc/4244/status", test_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/4242/status", test_dir);
	unlink(path);
}

/* rtid's own failures end in the real tool's answer, never in an exit of
 * rtid's (which CRIU would read as "no CUDA here"): a setting the shim
 * cannot use is one, said in its log and not on the stream CRIU reads. */
static void bad_settings_reach_the_real_tool(void **state)
{
	static const char *const bad[][2] = {
		{ "RTID_MODE", "bogus" }, { "RTID_BACKEND", "bogus" }, { "RTID_TIMEOUT", "abc" },
		{ "RTID_TIMEOUT", "-1" }, { "RTID_SERVICE_TIMEOUT", "2s" },
		{ "RTID_SERVICE_ACTION_TIMEOUT", "10m" }, { "RTID_UNATTESTED", "yes" },
		{ "RTID_SERVE_UID", "root" }, { "RTID_PATTERN", "cuda[" },
	};
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char log[600];

	(void)state;
	snprintf(log, sizeof(log), "%s/shim-bad.log", test_dir);
	setenv("RTID_SHIM_LOG", log, 1);
	setenv("FAKE_STDOUT", "4244\n", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct criu_call c;
		char want[64];

		setenv(bad[i][0], bad[i][1], 1);
		c = criu(query);
		unsetenv(bad[i][0]);
		assert_string_equal(c.out, "4244\n");
		assert_int_equal(c.status, 0);
		snprintf(want, sizeof(want), "bad %s '%s'", bad[i][0], bad[i][1]);
		assert_non_null(strstr(slurp(log), want));
	}
	unsetenv("FAKE_STDOUT");
	unsetenv("RTID_SHIM_LOG");
}

/* The log says what the scan said of each answer, so that an operator sees
 * whether the mode set did its work: a canary cross-checks (it proves the
 * naming itself, attested or not), except on a driver whose naming has a
 * mismatch on record: the attestation is read in canary mode for that, and
 * the driver alone answers; a cross-check that disagrees names the scan's
 * tid; a scan that found nothing says why the tool answered; the driver
 * mode says nothing more. The answer is the driver's each time. */
static void modes_say_what_the_scan_said(void **state)
{
	static const struct {
		const char *mode, *attestation, *tool, *pattern, *out, *said;
	} calls[] = {
		{ "canary", "att.json", "4244\n", NULL, "4244\n", "tid 4244; cross-check: agree\n" },
		{ "canary", "none.json", "4244\n", NULL, "4244\n", "tid 4244; cross-check: agree\n" },
		{ "canary", "revoked.json", "4244\n", NULL, "4244\n",
		  "tid 4244; scan not used: unattested\n" },
		{ "crosscheck", "att.json", "4242\n", NULL, "4242\n",
		  "tid 4242; cross-check: mismatch (the scan named 4244)\n" },
		{ "crosscheck", "att.json", "4242\n", "^none$", "4242\n",
		  "tid 4242; cross-check: mismatch (the scan named none)\n" },
		{ "scan", "att.json", "4244\n", "^none$", "4244\n",
		  "tid 4244; scan not used: zero-matches\n" },
		{ "driver", "att.json", "4244\n", NULL, "4244\n", "(tool): tid 4244\n" },
	};
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char log[600], path[600];

	(void)state;
	write_file(test_dir, "revoked.json", "{\"format\": 1, \"drivers\": {\"580.159.03\": "
					"{\"agree\": 12, \"mismatch\": 1}}}");
	snprintf(log, sizeof(log), "%s/shim-said.log", test_dir);
	setenv("RTID_SHIM_LOG", log, 1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct criu_call c;

		unlink(log);
		unlink(log_path);
		setenv("RTID_MODE", calls[i].mode, 1);
		snprintf(path, sizeof(path), "%s/%s", test_dir, calls[i].attestation);
		setenv("RTID_ATTESTATION", path, 1);
		setenv("FAKE_STDOUT", calls[i].tool, 1);
		if (calls[i].pattern)
			setenv("RTID_PATTERN", calls[i].pattern, 1);
		else
			unsetenv("RTID_PATTERN");
		c = criu(query);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, calls[i].out);
		assert_int_equal(count_lines(log_path), 1); /* the driver asked once */
		if (!strstr(slurp(log), calls[i].said))
			fail_msg("%s: the log lacks '%s': %s", calls[i].mode, calls[i].said, slurp(log));
	}
	/* A scan that named tid 1 (process 1's main thread, named as the
	 * driver's thread) is said with its tid, not as none. */
	{
		char *init[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "1", NULL };
		struct criu_call c;

		write_file(test_dir, "proc/1/task/1/comm", "cuda00001400006\n");
		write_file(test_dir, "proc/1/task/7/comm", "python3\n");
		unlink(log);
		setenv("RTID_MODE", "crosscheck", 1);
		unsetenv("RTID_PATTERN");
		setenv("FAKE_STDOUT", "7\n", 1);
		c = criu(init);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "7\n");
		if (!strstr(slurp(log), "tid 7; cross-check: mismatch (the scan named 1)\n"))
			fail_msg("the log lacks the scan's tid 1: %s", slurp(log));
	}
	unsetenv("RTID_SHIM_LOG");
}

/* A call too long for one log line is logged cut, marked "...", and still
 * reaches the real tool whole. */
static void long_call_logged_cut(void **state)
{
	char arg[1500], log[600], *argv[] = { "cuda-checkpoint", "--toggle", arg, NULL };
	const char *text, *cut;
	struct criu_call c;

	(void)state;
	memset(arg, 'a', sizeof(arg) - 1);
	arg[sizeof(arg) - 1] = '\0';
	snprintf(log, sizeof(log), "%s/shim-long.log", test_dir);
	setenv("RTID_SHIM_LOG", log, 1);
	setenv("FAKE_STDOUT", "toggled\n", 1);
	c = criu(argv);
	unsetenv("RTID_SHIM_LOG");
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "toggled\n");
	text = slurp(log);
	cut = strstr(text, "aaa...: to the real tool");
	assert_non_null(cut);
	/* Cut at the most a call's arguments take in a line, 1023 bytes with
	 * the "...". */
	assert_int_equal(cut + 6 - strstr(text, "--toggle aaa"), 1023);
	assert_null(strstr(text, arg)); /* never the whole argument */
	assert_int_equal(count_lines(log_path), 1); /* the tool ran once */
	/* At the bound: arguments of 1023 bytes are logged whole, of 1024 cut. */
	for (size_t whole = 1023; whole <= 1024; whole++) {
		char *at_bound[] = { "cuda-checkpoint", "--toggle", arg, NULL };
		size_t len = whole - strlen("--toggle ");

		arg[len] = '\0';
		unlink(log);
		setenv("RTID_SHIM_LOG", log, 1);
		c = criu(at_bound);
		unsetenv("RTID_SHIM_LOG");
		assert_string_equal(c.out, "toggled\n");
		text = slurp(log);
		if (whole == 1023) {
			assert_non_null(strstr(text, arg));
			assert_null(strstr(text, "..."));
		} else
			assert_non_null(strstr(text, "aaa...: to the real tool"));
		arg[len] = 'a';
		unlink(log_path);
	}
	/* A call with no argument at all is logged as one. */
	{
		char *bare[] = { "cuda-checkpoint", NULL };

		unlink(log);
		setenv("RTID_SHIM_LOG", log, 1);
		c = criu(bare);
		unsetenv("RTID_SHIM_LOG");
		assert_string_equal(c.out, "toggled\n");
		assert_non_null(strstr(slurp(log), ": (no arguments): to the real tool "));
		unlink(log_path);
	}
	/* A note longer than a log line (a long call refused for a very long
	 * path) is cut to one whole line, never split into two. */
	{
		char tool[3100], *help[] = { "cuda-checkpoint", "--toggle", arg, NULL };
		const char *nl;

		unlink(log);
		snprintf(tool, sizeof(tool), "/nonexistent/");
		memset(tool + strlen(tool), 'x', sizeof(tool) - 1 - strlen(tool));
		tool[sizeof(tool) - 1] = '\0';
		setenv("RTID_REAL_TOOL", tool, 1);
		setenv("RTID_SHIM_LOG", log, 1);
		c = criu(help);
		unsetenv("RTID_SHIM_LOG");
		unsetenv("RTID_REAL_TOOL");
		assert_int_equal(c.status, 231);
		text = slurp(log);
		nl = strchr(text, '\n');
		assert_non_null(nl);
		assert_int_equal(nl[1], '\0'); /* one line */
		assert_int_equal((int)(nl + 1 - text), 2047);
	}
}

/* A setting the shim cannot use sends every call to the real tool, rtid serve
 * included: RTID_SERVICE_TIMEOUT=2s used to fall back to 2 s and ask the
 * daemon, against doc/shim.md. A listener stands for the daemon: it is never
 * connected to, while a good value does connect. */
static void bad_setting_asks_no_daemon(void **state)
{
	char *get_state[] = { "cuda-checkpoint", "--get-state", "--pid", "4242", NULL };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char log[600], status[200];
	struct criu_call c;
	int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), fd;

	(void)state;
	assert_true(l >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", test_dir);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 4), 0);
	snprintf(log, sizeof(log), "%s/shim-svc.log", test_dir);
	/* A process of ours, which the shim may ask the daemon about. */
	snprintf(status, sizeof(status), "Name:\tpython3\nTgid:\t4242\nPid:\t4242\nUid:\t%u\t%u\t%u\t%u\n"
		 "Threads:\t2\n", geteuid(), geteuid(), geteuid(), geteuid());
	write_file(test_dir, "proc/4242/status", status);
	setenv("RTID_SHIM_LOG", log, 1);
	setenv("RTID_SOCKET", a.sun_path, 1);
	setenv("FAKE_STDOUT", "running\n", 1);
	setenv("RTID_SERVICE_TIMEOUT", "2s", 1);
	c = criu(get_state);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "running\n");
	assert_int_equal(accept(l, NULL, NULL), -1); /* never connected */
	assert_int_equal(errno, EAGAIN);
	assert_non_null(strstr(slurp(log), "bad RTID_SERVICE_TIMEOUT '2s'"));
	/* A good value: the shim connects (and, with no answer, asks the tool). */
	setenv("RTID_SERVICE_TIMEOUT", "0.1", 1);
	c = criu(get_state);
	assert_string_equal(c.out, "running\n");
	fd = accept(l, NULL, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* A process that is not there is not asked of the daemon (the request
	 * rule refuses it first): the real tool's answer, the reason logged. */
	{
		char *gone[] = { "cuda-checkpoint", "--get-state", "--pid", "4343", NULL };

		c = criu(gone);
		assert_string_equal(c.out, "running\n");
		assert_int_equal(accept(l, NULL, NULL), -1);
		assert_int_equal(errno, EAGAIN);
		assert_non_null(strstr(slurp(log), "get-state --pid 4343: "));
		assert_non_null(strstr(slurp(log), ": not asked of rtid serve"));
	}
	close(l);
	unlink(a.sun_path);
	snprintf(log, sizeof(log), "%s/proc/4242/status", test_dir);
	unlink(log);
	unsetenv("RTID_SERVICE_TIMEOUT");
	unsetenv("RTID_SOCKET");
	unsetenv("RTID_SHIM_LOG");
}

/* A caller that ignores SIGCHLD hands that down through exec: the kernel
 * would then reap the tool itself and its exit status would be lost (every
 * answer an error, the real tool run a second time). The shim resets it:
 * one tool run, its answer. */
static void inherited_sigchld_ignore(void **state)
{
	char *argv[] = { "env", "--ignore-signal=CHLD", "cuda-checkpoint", "--get-restore-tid",
			 "--pid", "4242", NULL };
	char path[sizeof(path_env) + 8], out[129] = "";
	const char *env[] = { path, NULL };

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR", "", 1);
	snprintf(path, sizeof(path), "PATH=%s", path_env);
	assert_int_equal(plugin_call("env", argv, env, out, sizeof(out)), 0);
	assert_string_equal(out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(driver_mode_gives_the_tools_tid, shim_reset),
		cmocka_unit_test_setup(rtids_answer_noted, shim_reset),
		cmocka_unit_test_setup(usable_settings_are_taken, shim_reset),
		cmocka_unit_test_setup(long_call_logged_cut, shim_reset),
		cmocka_unit_test_setup(modes_say_what_the_scan_said, shim_reset),
		cmocka_unit_test_setup(inherited_sigchld_ignore, shim_reset),
		cmocka_unit_test_setup(bad_version_variable_keeps_driver_mode, shim_reset),
		cmocka_unit_test_setup(attested_scan_spawns_no_tool, shim_reset),
		cmocka_unit_test_setup(none_exits_like_the_tool, shim_reset),
		cmocka_unit_test_setup(other_calls_reach_the_real_tool, shim_reset),
		cmocka_unit_test_setup(no_real_tool_is_a_clear_error, shim_reset),
		cmocka_unit_test_setup(never_recurses, shim_reset),
		cmocka_unit_test_setup(wrapper_of_the_shim_stops_at_once, shim_reset),
		cmocka_unit_test_setup(other_failures, shim_reset),
		cmocka_unit_test_setup(bad_settings_reach_the_real_tool, shim_reset),
		cmocka_unit_test_setup(a_thread_is_refused_before_the_tool, shim_reset),
		cmocka_unit_test_setup(bad_setting_asks_no_daemon, shim_reset),
	};
	return cmocka_run_group_tests(tests, shim_setup, test_dir_teardown);
}
