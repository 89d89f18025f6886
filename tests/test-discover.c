/* Finding candidate CUDA processes for rtid validate --all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "rtid.h"

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
	write_file(root, "self/task/1/comm", "x\n");              /* not a pid */
	fds = count_fds();
	assert_int_equal(rtid_find_candidates(root, NULL, &pids, &n), 0);
	assert_int_equal(count_fds(), fds); /* every fd directory looked at closed */
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 30);
	free(pids);
	/* A custom pattern changes which names count. */
	assert_int_equal(rtid_find_candidates(root, "^bash$", &pids, &n), 0);
	assert_int_equal(n, 2);
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
		cmocka_unit_test(real_proc_never_lists_itself),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
