/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRIU's internals, as CRIU's own CUDA plugin uses them: its options, its
 * log, its inventory, its task tree and compel's wait. None of this is a
 * stable interface (struct cr_options has no fixed layout), so the plugin is
 * built against one CRIU source tree and checks at init that it runs inside
 * that version. The only file compiled with CRIU's headers. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criu/include/criu-plugin.h>
#include <criu/include/cr_options.h>
#include <criu/include/image.h>
#include <criu/include/log.h>
#include <criu/include/pstree.h>
#include <criu/include/pid.h>
#include <criu/include/proc_parse.h>
#include <criu/include/seize.h>
#include <criu/include/util.h>
#include <compel/infect.h>
#include <compel/ksigset.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "plugin/plugin.h"

_Static_assert(sizeof(k_rtsigset_t) <= sizeof(struct plug_sigset), "a signal mask fits");

void plug_log(enum plug_level level, const char *fmt, ...)
{
	/* CRIU's log shows no level for a plugin's line: the word says it, so
	 * that a failure can be found by grep (and doctor finds the format). */
	char line[1024];
	size_t n = (size_t)snprintf(line, sizeof(line), "%s", level == PLUG_ERR ? "error: "
				    : level == PLUG_WARN ? "warning: " : "");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	print_on_level((unsigned)level, PLUG_PREFIX "%s", line);
}

struct seek {
	const char *s;
	bool found;
};

/* The running program's segments that nothing writes (its text and
 * read-only data, as loaded): s as a string of its own there. */
static int program_has(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seek *k = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !k->found; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && !(ph->p_flags & PF_W))
			k->found = rtid__has_cstring((const char *)(info->dlpi_addr + ph->p_vaddr),
						     ph->p_filesz, k->s);
	}
	return 1; /* the first object is the program: the rest are libraries */
}

/* The version string as a string of its own in the running binary (CRIU
 * prints it with --version): "4.2" is not "4.2.1" nor "4.21". Looked for in
 * memory, where the program is loaded already: reading the file again cost
 * 2 ms of every CRIU run. */
static bool has_version(const char *version)
{
	struct seek k = { .s = version };

	dl_iterate_phdr(program_has, &k);
	return k.found;
}

int plug_criu_check(char *why, size_t len)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	size_t have = 0;

	/* The size CRIU's symbol table gives its options: the layout we read.
	 * One refusal, whatever the reason, so that each is the one tested. */
	if (!dladdr1(&opts, &info, (void **)&sym, RTLD_DL_SYMENT))
		sym = NULL;
	if (sym)
		have = (size_t)sym->st_size;
	if (have != sizeof(struct cr_options))
		snprintf(why, len, "built for CRIU " RTID_CRIU_VERSION ", whose options take %zu "
			 "bytes; the running CRIU's take %zu (0: not found): another version",
			 sizeof(struct cr_options), have);
	else if (!has_version(RTID_CRIU_VERSION))
		snprintf(why, len, "built for CRIU " RTID_CRIU_VERSION "; the running CRIU is "
			 "another version (see criu --version)");
	else
		return 0;
	return -EPROTO;
}

unsigned plug_criu_timeout_s(void)
{
	return opts.timeout;
}

bool plug_criu_leave_running(void)
{
	return opts.final_state == TASK_ALIVE;
}

bool plug_criu_alarm(void)
{
	return alarm_timeouted();
}

int plug_criu_inventory_add(void)
{
	return add_inventory_plugin(PLUG_NAME) ? -1 : 0;
}

bool plug_criu_inventory_take(void)
{
	return check_and_remove_inventory_plugin(PLUG_NAME, strlen(PLUG_NAME));
}

void plug_criu_interrupt_only(void)
{
	set_compel_interrupt_only_mode();
}

void plug_criu_kill(int pid)
{
	if (kill(pid, SIGKILL) < 0)
		plug_log(PLUG_ERR, "cannot kill pid %d: %m\n", pid);
}

int plug_criu_image_dir(void)
{
	return criu_get_image_dir();
}

/* CRIU writes its run id into the dump's inventory and reads it back at
 * restore (4.0 on; an image of an older CRIU has the marker instead). */
const char *plug_criu_run_id(void)
{
	return criu_run_id;
}

const char *plug_criu_dump_run_id(void)
{
	return dump_criu_run_id[0] == NO_DUMP_CRIU_RUN_ID ? "" : dump_criu_run_id;
}

size_t plug_criu_tasks(int *pids, size_t max)
{
	struct pstree_item *item;
	size_t n = 0;

	for_each_pstree_item(item)
		if (task_alive(item)) {
			if (n < max)
				pids[n] = item->pid->real;
			n++;
		}
	return n;
}

int plug_thread_resume(int tid, struct plug_sigset *save)
{
	k_rtsigset_t block, old;
	const char *what;
	int e;

	ksigfillset(&block);
	ksigdelset(&block, SIGTRAP);
	/* Without PTRACE_O_SUSPEND_SECCOMP while it runs driver code. One
	 * failure path, its mask put back where it was changed. */
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(old), &old))
		what = "cannot read its signal mask";
	else if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(block), &block))
		what = "cannot block its signals";
	else if (ptrace(PTRACE_SETOPTIONS, tid, NULL, 0) || ptrace(PTRACE_CONT, tid, NULL, 0)) {
		what = "cannot resume it";
		e = errno; /* before the calls that set it back */
		/* As plug_thread_interrupt sets it back: CRIU's options and mask. */
		ptrace(PTRACE_SETOPTIONS, tid, NULL, PTRACE_O_SUSPEND_SECCOMP | PTRACE_O_TRACESYSGOOD);
		ptrace(PTRACE_SETSIGMASK, tid, sizeof(old), &old);
		errno = e;
	} else {
		memcpy(save, &old, sizeof(old)); /* plug_thread_interrupt reads as much back */
		return 0;
	}
	plug_log(PLUG_ERR, "restore thread %d: %s: %m\n", tid, what);
	return -1;
}

int plug_thread_interrupt(int tid, const struct plug_sigset *save)
{
	struct proc_status_creds creds;
	k_rtsigset_t old;
	const char *what;
	int e = 0;

	memcpy(&old, save, sizeof(old));
	/* Seized already: an interrupt stops it again. One failure path: each
	 * step's failure leaves the thread as unusable to CRIU as the next. */
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, 0))
		what = "cannot interrupt it", e = errno;
	else if (compel_wait_task(tid, -1, parse_pid_status, NULL, &creds.s, NULL) !=
		 COMPEL_TASK_ALIVE)
		what = "it did not stop"; /* compel says why in CRIU's log; errno is not its */
	else if (ptrace(PTRACE_SETOPTIONS, tid, NULL, PTRACE_O_SUSPEND_SECCOMP |
			PTRACE_O_TRACESYSGOOD) || ptrace(PTRACE_SETSIGMASK, tid, sizeof(old), &old))
		what = "cannot set it back as CRIU had it", e = errno;
	else
		return 0;
	plug_log(PLUG_ERR, "restore thread %d: %s%s%s\n", tid, what, e ? ": " : "",
		 e ? strerror(e) : "");
	return -1;
}
