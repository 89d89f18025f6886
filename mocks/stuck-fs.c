/* stuck-fs MOUNTPOINT READY_FD: a stand-in for a driver call stuck in the
 * kernel. A FUSE file system with one file, MOUNTPOINT/stuck, whose reads
 * this server takes and never answers: the kernel then waits for the answer
 * uninterruptibly, and a reader killed with SIGKILL stays (in state D) until
 * this server ends (SIGTERM), when the kernel aborts the connection and the
 * reader dies. The mock libcuda reads the file for a hang "in the kernel"
 * (RTID_MOCK_STUCK_FILE). Writes "ready\n" to READY_FD once mounted, then
 * "read\n" for each read it has taken: from then on that reader is stuck.
 * Mounts as root, or through fusermount3. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/parse.h"
#include "helpers.h"

#define ROOT_INO 1
static int events = -1; /* READY_FD */
#define FILE_INO 2

static void attr_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ino == ROOT_INO ? S_IFDIR | 0755 : S_IFREG | 0444;
	st->st_nlink = ino == ROOT_INO ? 2 : 1;
	st->st_size = ino == ROOT_INO ? 0 : 4096;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .ino = FILE_INO, .attr_timeout = 3600,
				      .entry_timeout = 3600 };

	if (parent != ROOT_INO || strcmp(name, "stuck")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	attr_of(FILE_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	attr_of(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->direct_io = 1; /* every read comes here, none from a cache */
	fuse_reply_open(req, fi);
}

/* Taken and never answered: the whole point. The request is left to the
 * kernel's abort of the connection when this server ends. */
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	if (write(events, "read\n", 5) != 5)
		fprintf(stderr, "stuck-fs: cannot say read: %s\n", strerror(errno));
	(void)req;
	(void)ino;
	(void)size;
	(void)off;
	(void)fi;
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = ll_lookup,
	.getattr = ll_getattr,
	.open = ll_open,
	.read = ll_read,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, fargv);
	struct fuse_session *se;
	int r, watch;

	if (argc != 3 || rtid__parse_pid(argv[2], &events) < 0) {
		fprintf(stderr, "usage: stuck-fs MOUNTPOINT READY_FD\n");
		return 2;
	}
	watch = fuse_watch_start(argv[1]); /* a user's: unmount should it be killed */
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) < 0 || fuse_session_mount(se, argv[1]) < 0) {
		fprintf(stderr, "stuck-fs: cannot mount %s\n", argv[1]);
		fuse_watch_done(watch);
		return 1;
	}
	if (write(events, "ready\n", 6) != 6)
		fprintf(stderr, "stuck-fs: cannot say ready: %s\n", strerror(errno));
	r = fuse_session_loop(se);
	/* Closing the device aborts the connection: every stuck reader wakes. */
	fuse_remove_signal_handlers(se);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	fuse_detach(argv[1]);
	fuse_watch_done(watch);
	return r < 0 ? 1 : 0;
}
