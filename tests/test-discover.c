/* Finding candidate CUDA processes for rtid validate --all. */
#include <dlfcn.h>
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "rtid.h"

/* The allocator and the pattern compiler as the library calls them (this
 * program's definitions are the ones its static code binds to), forwarding
 * to the next ones (libc's, or a sanitizer's, or valgrind's: RTLD_NEXT keeps
 * the allocator one). While fail_growth is set, growing a block that exists
 * fails as a full heap does, and the block refused is remembered
 * (refused_block) until it is freed (refused_freed). patterns: patterns
 * compiled and not yet freed. The heap's own figures (mallinfo2) count
 * blocks cached by libc as in use, so they cannot tell a leak. */
static bool fail_growth, refused_freed;
static int patterns;

/* Under ASan or TSan (gcc's __SANITIZE_*__, clang's __has_feature) the
 * stand-ins are left out and the tests that need them skip: the sanitizer's
 * runtime replaces the allocator itself and calls dlsym, which frees, while
 * it starts, so a free of this program's finding the next one by dlsym
 * crashes before main (and a statically linked runtime has no next one to
 * find but libc's, another allocator). UBSan alone changes nothing here. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STAND_INS_LEFT_OUT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define STAND_INS_LEFT_OUT 1
#endif
#endif
#ifndef STAND_INS_LEFT_OUT
static void *refused_block;

static void *next_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

void *realloc(void *p, size_t size)
{
	static void *(*next)(void *, size_t);

	if (fail_growth && p) {
		refused_block = p;
		refused_freed = false;
		errno = ENOMEM;
		return NULL;
	}
	if (!next)
		next = (void *(*)(void *, size_t))next_fn("realloc");
	return next(p, size);
}

void free(void *p)
{
	static void (*next)(void *);
	static bool resolving;

	if (p && p == refused_block) {
		refused_freed = true;
		refused_block = NULL;
	}
	if (!next) {
		if (resolving)
			return; /* dlsym freeing while it finds free: kept, harmlessly */
		resolving = true;
		next = (void (*)(void *))next_fn("free");
		resolving = false;
	}
	next(p);
}

int regcomp(regex_t *re, const char *pattern, int flags)
{
	static int (*next)(regex_t *, const char *, int);
	int r;

	if (!next)
		next = (int (*)(regex_t *, const char *, int))next_fn("regcomp");
	r = next(re, pattern, flags);
	patterns += r == 0;
	return r;
}

void regfree(regex_t *re)
{
	static void (*next)(regex_t *);

	if (!next)
		next = (void (*)(regex_t *))next_fn("regfree");
	patterns--;
	next(re);
}
#endif

/* A test that needs the stand-ins: skipped, saying why, where they are left out. */
static void needs_stand_ins(void)
{
#ifdef STAND_INS_LEFT_OUT
	print_message("skipped: built with a sanitizer, which replaces the allocator itself: "
		      "no stand-in for realloc, free, regcomp or regfree here\n");
	skip();
#endif
}

/* A test that needs realloc's stand-in to be the one called: valgrind
 * redirects realloc and free of the program itself to its own allocator (the
 * pattern compiler's stand-ins stay), so whether the stand-in answers is
 * asked of it, not assumed: one growth with fail_growth set must fail. */
static void needs_allocator_stand_in(void)
{
	/* Called through a pointer the compiler cannot see through: a call of
	 * realloc by name is the builtin to it, assumed to read none of this
	 * program's variables, so the setting of fail_growth around it would be
	 * dropped. */
	void *(*volatile grow)(void *, size_t) = realloc;
	char *p, *q;

	needs_stand_ins();
	p = malloc(8);
	assert_non_null(p);
	fail_growth = true;
	q = grow(p, 1 << 16);
	fail_growth = false;
	if (q) {
		free(q);
		print_message("skipped: realloc is not this program's (valgrind's allocator "
			      "replaces it): no growth can be refused here\n");
		skip();
	}
	free(p);
}

static void finds_gpu_holders_and_named_threads(void **state)
{
	char *root = tmp_dir(), p[512];
	int *pids = NULL, fds;
	size_t n = 0;

	(void)state;
	write_file(root, "10/task/10/comm", "python3\n");          /* holds /dev/nvidia0 */
	write_file(root, "10/fd/.keep", "");
	snprintf(p, sizeof(p), "%s/10/fd/3", root);
	assert_int_equal(symlink("/dev/nvidia0", p), 0);
	snprintf(p, sizeof(p), "%s/10/fd/4", root);
	assert_int_equal(symlink("/dev/null", p), 0);
	write_file(root, "30/task/31/comm", "cuda00001400006\n"); /* a named thread */
	write_file(root, "20/task/20/comm", "bash\n");            /* neither */
	write_file(root, "20/fd/.keep", "");
	snprintf(p, sizeof(p), "%s/20/fd/1", root);
	assert_int_equal(symlink("/dev/pts/0", p), 0);
	snprintf(p, sizeof(p), "%s/20/fd/5", root); /* 15 characters: longer than the prefix */
	assert_int_equal(symlink("socket:[123456]", p), 0);
	write_file(root, "40/task/40/comm", "python3\n"); /* the prefix's device alone */
	write_file(root, "40/fd/.keep", "");
	snprintf(p, sizeof(p), "%s/40/fd/7", root);
	assert_int_equal(symlink("/dev/nvidia", p), 0);
	write_file(root, "50/task/50/comm", "python3\n"); /* a prefix of the prefix */
	write_file(root, "50/fd/.keep", "");
	snprintf(p, sizeof(p), "%s/50/fd/2", root);
	assert_int_equal(symlink("/dev/nvidi", p), 0);
	write_file(root, "60/task/60/comm", "python3\n"); /* 11 characters, the last not the prefix's */
	write_file(root, "60/fd/.keep", "");
	snprintf(p, sizeof(p), "%s/60/fd/4", root);
	assert_int_equal(symlink("/dev/nvidiX", p), 0);
	write_file(root, "self/task/1/comm", "x\n");              /* not a pid */
	fds = count_fds();
	assert_int_equal(rtid_find_candidates(root, NULL, &pids, &n), 0);
	assert_int_equal(count_fds(), fds); /* every fd directory looked at closed */
	assert_int_equal(n, 3); /* neither 20, 50 nor 60 */
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 30);
	assert_int_equal(pids[2], 40);
	free(pids);
	/* A custom pattern changes which names count. */
	assert_int_equal(rtid_find_candidates(root, "^bash$", &pids, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pids[1], 20);
	free(pids);
	rm_tree(root);
	free(root);
}

/* Candidates come sorted by pid whatever order the directory lists them in
 * (a comparator that answered "greater" both ways reversed the listing). */
static void sorted_by_pid(void **state)
{
	static const int pids_in[] = { 57, 12, 940, 3, 208, 71, 15 };
	char *root = tmp_dir(), p[64];
	int *pids = NULL;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(pids_in) / sizeof(pids_in[0]); i++) {
		snprintf(p, sizeof(p), "%d/task/%d/comm", pids_in[i], pids_in[i] + 1);
		write_file(root, p, "cuda00001400006\n");
	}
	assert_int_equal(rtid_find_candidates(root, NULL, &pids, &n), 0);
	assert_int_equal(n, 7);
	for (size_t i = 1; i < n; i++)
		assert_true(pids[i - 1] < pids[i]);
	free(pids);
	rm_tree(root);
	free(root);
}

static void errors(void **state)
{
	int *pids = (int *)0x1;
	size_t n = 99;

	(void)state;
	assert_int_equal(rtid_find_candidates("/nonexistent", NULL, &pids, &n), -ENOENT);
	assert_int_equal(rtid_find_candidates("/tmp", "cuda[", &pids, &n), -EINVAL);
	assert_int_equal(rtid_find_candidates(NULL, NULL, &pids, &n), -EINVAL);
	/* Either out-parameter missing: refused before any is written. */
	assert_int_equal(rtid_find_candidates("/nonexistent", NULL, NULL, &n), -EINVAL);
	assert_int_equal(rtid_find_candidates("/nonexistent", NULL, &pids, NULL), -EINVAL);
	assert_ptr_equal(pids, (int *)0x1);
	assert_int_equal(n, 99);
}

/* A pattern of the caller's is compiled for each search and freed on every
 * way out: after one that found some, one that found none, and one whose
 * root is gone. */
static void keeps_no_pattern(void **state)
{
	int *pids = NULL;
	size_t n = 0;
	char *root;

	(void)state;
	needs_stand_ins();
	root = tmp_dir();
	write_file(root, "100/task/100/comm", "cuda00001400006\n");
	patterns = 0;
	assert_int_equal(rtid_find_candidates(root, "^cuda", &pids, &n), 0);
	assert_int_equal(n, 1);
	free(pids);
	assert_int_equal(patterns, 0);
	assert_int_equal(rtid_find_candidates(root, "^none$", &pids, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(patterns, 0);
	assert_int_equal(rtid_find_candidates("/nonexistent", "^cuda", &pids, &n), -ENOENT);
	assert_int_equal(patterns, 0);
	rm_tree(root);
	free(root);
}

/* More candidates than the first list holds, and no memory to grow it: the
 * search fails with -ENOMEM, writes neither out-parameter (no partial list
 * taken for the whole) and keeps nothing. */
static void no_memory_to_grow(void **state)
{
	int *pids = (int *)0x1;
	char *root, p[64];
	size_t n = 99;

	(void)state;
	needs_allocator_stand_in();
	root = tmp_dir();
	for (int pid = 100; pid < 200; pid++) {
		snprintf(p, sizeof(p), "%d/task/%d/comm", pid, pid);
		write_file(root, p, "cuda00001400006\n");
	}
	fail_growth = true;
	refused_freed = false;
	assert_int_equal(rtid_find_candidates(root, NULL, &pids, &n), -ENOMEM);
	fail_growth = false;
	assert_true(refused_freed); /* the list so far */
	assert_ptr_equal(pids, (int *)0x1);
	assert_int_equal(n, 99);
	/* With memory, all hundred. */
	assert_int_equal(rtid_find_candidates(root, NULL, &pids, &n), 0);
	assert_int_equal(n, 100);
	assert_int_equal(pids[99], 199);
	free(pids);
	rm_tree(root);
	free(root);
}

static void real_proc_never_lists_itself(void **state)
{
	int *pids = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(rtid_find_candidates("/proc", NULL, &pids, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(pids[i], getpid());
	free(pids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_gpu_holders_and_named_threads),
		cmocka_unit_test(sorted_by_pid),
		cmocka_unit_test(errors),
		cmocka_unit_test(keeps_no_pattern),
		cmocka_unit_test(no_memory_to_grow),
		cmocka_unit_test(real_proc_never_lists_itself),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
