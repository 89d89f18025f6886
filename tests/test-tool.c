/* The tool as the driver's voice: only exit 0 with one positive number is a
 * tid, 1 and 3 are "none", everything else is an error; nothing is left behind. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "basic/parse.h"
#include "core/core.h"

static char log_path[512], pid_path[512];
static const char *const vars[] = { "FAKE_STDOUT", "FAKE_STDERR", "FAKE_EXIT", "FAKE_SIGNAL",
				    "FAKE_HANG" };

static int setup(void **state)
{
	(void)state;
	test_dir_setup(state);
	snprintf(log_path, sizeof(log_path), "%s/log", test_dir);
	snprintf(pid_path, sizeof(pid_path), "%s/pids", test_dir);
	setenv("FAKE_LOG", log_path, 1);
	setenv("FAKE_PIDFILE", pid_path, 1);
	write_file(test_dir, "4242/task/4242/comm", "python3\n"); /* the process asked about */
	/* The threads the stand-in tool names: a tid is an answer only as one. */
	write_file(test_dir, "4242/task/4243/comm", "cuda00001400006\n");
	write_file(test_dir, "4242/task/77/comm", "worker\n");
	/* Orphans of the tool come to us, so we can prove they were killed. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	unlink(log_path);
	unlink(pid_path);
	return 0;
}

static struct rtid_result ask(const char *tool, double timeout)
{
	struct rtid_config cfg = { RTID_CONFIG_INIT, .mode = RTID_MODE_DRIVER, .tool = tool, .timeout_s = timeout,
				   .proc_root = test_dir };
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;

	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve(ctx, 4242, &r), 0);
	rtid_ctx_free(ctx);
	return r;
}

static struct rtid_result ask_fake(void)
{
	return ask(env_path("FAKE_TOOL"), 10);
}

static void answer_with_exact_argv(void **state)
{
	struct rtid_result r;
	FILE *f;
	char line[256] = "";

	(void)state;
	setenv("FAKE_STDOUT", "4243\n", 1);
	setenv("FAKE_STDERR", "warning: something chatty\n", 1);
	r = ask_fake();
	assert_int_equal(r.error, RTID_OK);
	assert_int_equal(r.tid, 4243);
	assert_int_equal(r.source, RTID_SRC_TOOL);
	f = fopen(log_path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "--get-restore-tid --pid 4242\n");
	assert_int_equal(count_lines(log_path), 1);
}

static void exit_codes(void **state)
{
	static const struct { const char *code; enum rtid_error err; } t[] = {
		{ "1", RTID_OK }, { "3", RTID_OK }, { "2", RTID_ERR_TOOL_FAILED },
		{ "4", RTID_ERR_TOOL_FAILED }, { "100", RTID_ERR_TOOL_FAILED },
		{ "255", RTID_ERR_TOOL_FAILED }, { "127", RTID_ERR_TOOL_FAILED },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_result r;

		setenv("FAKE_EXIT", t[i].code, 1);
		/* A number on stdout does not turn a failure into a tid. */
		setenv("FAKE_STDOUT", "4243\n", 1);
		setenv("FAKE_STDERR", "Could not get restore thread ID for process ID 4242: "
				      "\"invalid argument\"\n", 1);
		r = ask_fake();
		assert_int_equal(r.error, t[i].err);
		assert_int_equal(r.tid, 0);
		if (t[i].err)
			assert_non_null(strstr(r.detail, "exit"));
	}
}

static void bad_outputs(void **state)
{
	static const char *const t[] = { "12abc\n", "", "\n", "-5\n", "0\n", "12 13\n",
					 "4243\n4244\n", "tid: 4243\n", "4243.0\n", ("\x01\x7f" "42\n") };

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_result r;

		setenv("FAKE_STDOUT", t[i], 1);
		r = ask_fake();
		assert_int_equal(r.error, RTID_ERR_BAD_OUTPUT);
		assert_int_equal(r.tid, 0);
	}
}

static void overlong_output(void **state)
{
	char big[5000];
	struct rtid_result r;

	(void)state;
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("FAKE_STDOUT", big, 1);
	r = ask_fake();
	assert_int_equal(r.error, RTID_ERR_BAD_OUTPUT);
	assert_non_null(strstr(r.detail, "longer"));
}

static void crash(void **state)
{
	struct rtid_result r;

	(void)state;
	setenv("FAKE_STDOUT", "4243\n", 1);
	setenv("FAKE_SIGNAL", "11", 1);
	r = ask_fake();
	assert_int_equal(r.error, RTID_ERR_TOOL_CRASHED);
	assert_int_equal(r.tid, 0);
	assert_non_null(strstr(r.detail, "signal 11"));
}

/* A caller that lets the kernel reap its children (SIGCHLD ignored, as a
 * daemon may) takes the tool's exit status away: what it printed is then no
 * answer, since it might have exited 2 after printing. */
static void stolen_exit_status_is_an_error(void **state)
{
	struct rtid_result r;

	(void)state;
	setenv("FAKE_STDOUT", "4243\n", 1);
	assert_int_equal(ask_fake().tid, 4243); /* the same tool, its status kept */
	signal(SIGCHLD, SIG_IGN);
	r = ask_fake();
	signal(SIGCHLD, SIG_DFL);
	assert_int_equal(r.error, RTID_ERR_TOOL_CRASHED);
	assert_int_equal(r.tid, 0);
}

/* Every pid the fake wrote must be gone: reap orphans, then ask the kernel. */
static void assert_all_gone(void)
{
	FILE *f = fopen(pid_path, "r");
	int pid, n = 0;

	assert_non_null(f);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	while (fscanf(f, "%d", &pid) == 1) { /* our own file, not foreign text */
		assert_int_equal(kill(pid, 0), -1);
		assert_int_equal(errno, ESRCH);
		n++;
	}
	fclose(f);
	assert_true(n >= 1);
}

static void hang_times_out_and_kills_group(void **state)
{
	struct rtid_result r;
	double t0 = rtid__now(), base;
	int fds = count_fds();

	(void)state;
	/* The bound is beyond what a tool that answers costs now (a baseline of
	 * this run: load slows both alike): the 0.3 s timeout and the kill. */
	ask(env_path("FAKE_TOOL"), 10);
	base = rtid__now() - t0;
	unlink(pid_path); /* the pids below are the hanging tool's alone */
	t0 = rtid__now();
	setenv("FAKE_HANG", "2", 1); /* also leaves a grandchild holding the pipes */
	r = ask(env_path("FAKE_TOOL"), 0.3 * time_factor());
	assert_int_equal(r.error, RTID_ERR_TIMEOUT);
	assert_true(rtid__now() - t0 - base < 2.7 * time_factor());
	assert_int_equal(count_lines(pid_path), 2);
	/* SIGKILL was sent to the group; give the orphan time to be reaped by
	 * waiting for it, not by sleeping. */
	while (waitpid(-1, NULL, 0) > 0)
		;
	assert_all_gone();
	assert_int_equal(count_fds(), fds);
}

static void missing_tool(void **state)
{
	struct rtid_result r;

	(void)state;
	r = ask("/nonexistent/cuda-checkpoint", 1);
	assert_int_equal(r.error, RTID_ERR_TOOL_NOT_FOUND);
	/* A directory named as the tool is no tool: said before any spawn. */
	assert_int_equal(ask(test_dir, 1).error, RTID_ERR_TOOL_NOT_FOUND);
	setenv("PATH", "/nonexistent", 1);
	r = ask(NULL, 1);
	assert_int_equal(r.error, RTID_ERR_TOOL_NOT_FOUND);
	/* Empty PATH elements mean the current directory, as in execvp. */
	setenv("PATH", "::/nonexistent:", 1);
	assert_int_equal(ask(NULL, 1).error, RTID_ERR_TOOL_NOT_FOUND);
	setenv("PATH", "", 1); /* empty: the default path */
	assert_int_equal(ask("cuda-checkpoint-not-here", 1).error, RTID_ERR_TOOL_NOT_FOUND);
	unsetenv("PATH"); /* the default path has no cuda-checkpoint here either */
	assert_int_equal(ask("cuda-checkpoint-not-here", 1).error, RTID_ERR_TOOL_NOT_FOUND);
}

/* The PATH search passes over what execvp passes over (a directory, a file
 * we may not run) and over the running program itself (a link to it, a copy
 * of it: the shim must never call itself), and takes the first real tool,
 * even one of the same size. */
static void path_search_as_execvp(void **state)
{
	char dirs[5][600], path[3100] = "", *found = NULL, self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	for (int i = 0; i < 5; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "path%d/.keep", i);
		write_file(test_dir, rel, "");
		snprintf(dirs[i], sizeof(dirs[i]), "%s/path%d", test_dir, i);
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s", i ? ":" : "",
			 dirs[i]);
	}
	write_file(dirs[0], "cuda-checkpoint/.keep", "");       /* a directory */
	write_file(dirs[1], "cuda-checkpoint", "#!/bin/sh\n"); /* not executable */
	assert_int_equal(symlink(self, strcat(dirs[2], "/cuda-checkpoint")), 0);
	assert_int_equal(copy_self(strcat(dirs[3], "/cuda-checkpoint"), false), 0);
	assert_int_equal(copy_self(strcat(dirs[4], "/cuda-checkpoint"), true), 0);
	setenv("PATH", path, 1);
	assert_int_equal(rtid__tool_find(NULL, &found), 0);
	assert_string_equal(found, dirs[4]);
	free(found);
	assert_true(rtid__is_self(dirs[3]));
	assert_false(rtid__is_self(dirs[4]));
	/* Only the running program itself there: no tool at all. */
	assert_int_equal(unlink(dirs[4]), 0);
	assert_int_equal(rtid__tool_find(NULL, &found), -ENOENT);
	unsetenv("PATH");
}

/* An ELF program of our class with one note segment of the given notes:
 * enough for rtid__rtid_note, which reads nothing else. */
struct elf_knobs {
	unsigned phnum;     /* program headers (the note's is the last) */
	size_t phentsize;   /* 0: the right one */
	size_t align;       /* the note segment's */
	size_t filesz;      /* 0: the notes' length */
	unsigned char cls;  /* 0: ours */
};

static void write_elf(const char *path, const void *notes, size_t len, struct elf_knobs k)
{
	ElfW(Ehdr) eh = { .e_phoff = sizeof(eh), .e_phnum = (ElfW(Half))k.phnum,
			  .e_phentsize = (ElfW(Half))(k.phentsize ? k.phentsize : sizeof(ElfW(Phdr))) };
	ElfW(Phdr) ph = { .p_type = PT_NOTE, .p_align = k.align, .p_filesz = k.filesz ? k.filesz : len };
	ElfW(Phdr) other = { .p_type = PT_LOAD };
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = k.cls ? k.cls : (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	ph.p_offset = sizeof(eh) + k.phnum * sizeof(ph);
	fwrite(&eh, sizeof(eh), 1, f);
	for (unsigned i = 0; i + 1 < k.phnum; i++)
		fwrite(&other, sizeof(other), 1, f);
	if (k.phnum)
		fwrite(&ph, sizeof(ph), 1, f);
	fwrite(notes, 1, len, f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* One note: header, name and text, each padded to align. */
static size_t note(unsigned char *p, const char *name, unsigned type, const char *text, size_t align,
		   unsigned namesz_said)
{
	ElfW(Nhdr) h = { .n_namesz = namesz_said ? namesz_said : (unsigned)strlen(name) + 1,
			 .n_descsz = (unsigned)strlen(text) + 1, .n_type = type };
	size_t n = sizeof(h), pad = (strlen(name) + 1 + align - 1) / align * align;

	memcpy(p, &h, sizeof(h));
	memset(p + n, 0, pad);
	memcpy(p + n, name, strlen(name) + 1);
	n += pad;
	pad = (strlen(text) + 1 + align - 1) / align * align;
	memset(p + n, 0, pad);
	memcpy(p + n, text, strlen(text) + 1);
	return n + pad;
}

/* Any rtid is known by its note, whatever its bytes; nothing else is, and a
 * file whose sizes do not hold together is read no further than it is. */
static void rtid_known_by_its_note(void **state)
{
	unsigned char n[256];
	char path[600], ver[64] = "", self[PATH_MAX], *found = NULL, dir[600];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t at;

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	snprintf(path, sizeof(path), "%s/elf", test_dir);
	/* Another note first, then rtid's: found, its text the version. */
	at = note(n, "GNU", 3, "abc", 4, 0);
	at += note(n + at, "rtid", 1, "9.9", 4, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 3, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, ver, sizeof(ver)), 1);
	assert_string_equal(ver, "9.9");
	assert_true(rtid__is_rtid(path));
	assert_false(rtid__is_self(path));
	/* Notes padded to 8 in a segment aligned so. */
	at = note(n, "GNU", 5, "12345", 8, 0);
	at += note(n + at, "rtid", 1, "1.0", 8, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 8 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 1);
	/* The same name with another type, or another name: not rtid. */
	at = note(n, "rtid", 2, "9.9", 4, 0);
	at += note(n + at, "rtix", 1, "9.9", 4, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	assert_false(rtid__is_rtid(path));
	/* Sizes that do not hold together: a name past the segment, a text past it. */
	at = note(n, "rtid", 1, "9.9", 4, 200);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	at = note(n, "rtid", 1, "9.9", 4, 0);
	write_elf(path, n, at - 4, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	/* A segment said longer than the file, or longer than is read at all. */
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4, .filesz = at + 8 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4, .filesz = 5000 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	/* Headers that are not ours: too many, the wrong size, the other class,
	 * program headers past the end, no ELF at all, nothing there. */
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 65, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4, .phentsize = 8 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4, .cls = 9 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	write_elf(path, n, 0, (struct elf_knobs){ .phnum = 0 });
	assert_int_equal(truncate(path, sizeof(ElfW(Ehdr))), 0);
	{
		int fd = open(path, O_RDWR);
		ElfW(Half) two = 2;

		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, &two, sizeof(two), offsetof(ElfW(Ehdr), e_phnum)),
				 sizeof(two));
		close(fd);
	}
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	write_file(test_dir, "elf", "#!/bin/sh\n");
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	assert_int_equal(rtid__rtid_note("/nonexistent/rtid", NULL, 0), -ENOENT);
	/* rtid's own build carries it; this test program does not. */
	assert_int_equal(rtid__rtid_note(env_path("RTID_BIN"), ver, sizeof(ver)), 1);
	assert_true(ver[0] >= '0' && ver[0] <= '9');
	assert_int_equal(rtid__rtid_note(self, NULL, 0), 0);
	/* The PATH search passes over another rtid to the real tool after it. */
	write_file(test_dir, "rtid-dir/.keep", "");
	write_file(test_dir, "tool-dir/cuda-checkpoint", "#!/bin/sh\n");
	snprintf(path, sizeof(path), "%s/tool-dir/cuda-checkpoint", test_dir);
	assert_int_equal(chmod(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/rtid-dir/cuda-checkpoint", test_dir);
	at = note(n, "rtid", 1, "0.0.1", 4, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4 });
	snprintf(dir, sizeof(dir), "%s/rtid-dir:%s/tool-dir", test_dir, test_dir);
	setenv("PATH", dir, 1);
	assert_int_equal(rtid__tool_find(NULL, &found), 0);
	unsetenv("PATH");
	assert_non_null(strstr(found, "/tool-dir/"));
	free(found);
}

/* The edges of the note reader: a text cut to the caller's buffer, a
 * segment that ends in less than a note header or whose name's padding
 * runs past it, the other byte order, and a buffer of no size. */
static void note_reader_edges(void **state)
{
	unsigned char n[256];
	char path[600], ver[64], small[3] = "xx";
	size_t at;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/elf-edge", test_dir);
	/* The version cut to what the caller has room for, NUL-terminated. */
	at = note(n, "rtid", 1, "9.9.9", 4, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, small, sizeof(small)), 1);
	assert_string_equal(small, "9.");
	/* A buffer of no size: the answer still, nothing written to it. */
	strcpy(ver, "untouched");
	assert_int_equal(rtid__rtid_note(path, ver, 0), 1);
	assert_string_equal(ver, "untouched");
	/* Another note, then fewer bytes than a note header: not rtid. */
	at = note(n, "GNU", 3, "abc", 4, 0);
	memset(n + at, 0, 4);
	write_elf(path, n, at + 4, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	/* A segment smaller than one note header. */
	write_elf(path, n, 4, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	/* The name fits, its padding to 4 does not: read no further. */
	at = note(n, "rtid", 1, "9.9", 4, 0);
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4,
						  .filesz = sizeof(ElfW(Nhdr)) + 5 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	/* rtid's note in a program of the other byte order: not one that runs here. */
	write_elf(path, n, at, (struct elf_knobs){ .phnum = 1, .align = 4 });
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 1);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, (unsigned char[]){ __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
						       ELFDATA2MSB : ELFDATA2LSB }, 1, EI_DATA), 1);
	close(fd);
	assert_int_equal(rtid__rtid_note(path, NULL, 0), 0);
	assert_false(rtid__is_rtid(path));
}

/* A copy of the running program is itself, by its bytes; a copy with one
 * byte changed, or a file that is not there, is not. The PATH search passes
 * over such a copy. */
static void copy_of_self_is_self(void **state)
{
	char self[PATH_MAX], copy[700], other[700], dir[1500], *found = NULL;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char buf[65536];
	int in, out;
	ssize_t r;

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	write_file(test_dir, "self-dir/.keep", "");
	write_file(test_dir, "real-dir/rtid-self-test", "#!/bin/sh\n");
	snprintf(copy, sizeof(copy), "%s/self-dir/rtid-self-test", test_dir);
	snprintf(other, sizeof(other), "%s/real-dir/rtid-self-test", test_dir);
	assert_int_equal(chmod(other, 0755), 0);
	in = open(self, O_RDONLY);
	out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	close(out);
	assert_true(rtid__is_self(copy));
	assert_true(rtid__is_rtid(copy));
	assert_false(rtid__is_self(other));          /* another size */
	assert_false(rtid__is_self("/nonexistent/x")); /* not there */
	/* On PATH before the real one: passed over. */
	snprintf(dir, sizeof(dir), "%s/self-dir:%s/real-dir", test_dir, test_dir);
	setenv("PATH", dir, 1);
	assert_int_equal(rtid__tool_find("rtid-self-test", &found), 0);
	assert_string_equal(found, other);
	free(found);
	/* Empty entries and no such program anywhere: -ENOENT, nothing given. */
	found = NULL;
	setenv("PATH", "/nonexistent::/nonexistent2:", 1);
	assert_int_equal(rtid__tool_find("rtid-no-such-program", &found), -ENOENT);
	assert_null(found);
	unsetenv("PATH");
	/* The same size, one byte changed: not self. */
	out = open(copy, O_RDWR);
	assert_true(out >= 0);
	assert_int_equal(pread(out, buf, 1, 100), 1);
	buf[0] ^= 1;
	assert_int_equal(pwrite(out, buf, 1, 100), 1);
	close(out);
	assert_false(rtid__is_self(copy));
	/* Not readable: cannot be compared, so not self. */
	if (geteuid() != 0) {
		assert_int_equal(chmod(copy, 0111), 0);
		assert_false(rtid__is_self(copy));
	}
}

static void no_leaks_over_many_calls(void **state)
{
	int fds = count_fds();

	(void)state;
	setenv("FAKE_STDOUT", "77\n", 1);
	for (int i = 0; i < 30; i++)
		assert_int_equal(ask_fake().tid, 77);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child, no zombie */
	assert_int_equal(errno, ECHILD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(answer_with_exact_argv, reset),
		cmocka_unit_test_setup(exit_codes, reset),
		cmocka_unit_test_setup(bad_outputs, reset),
		cmocka_unit_test_setup(overlong_output, reset),
		cmocka_unit_test_setup(crash, reset),
		cmocka_unit_test_setup(stolen_exit_status_is_an_error, reset),
		cmocka_unit_test_setup(hang_times_out_and_kills_group, reset),
		cmocka_unit_test_setup(no_leaks_over_many_calls, reset),
		cmocka_unit_test_setup(missing_tool, reset),
		cmocka_unit_test_setup(path_search_as_execvp, reset),
		cmocka_unit_test_setup(rtid_known_by_its_note, reset),
		cmocka_unit_test_setup(note_reader_edges, reset),
		cmocka_unit_test_setup(copy_of_self_is_self, reset),
	};
	return cmocka_run_group_tests(tests, setup, test_dir_teardown);
}
