/* FUSE operations of the fake /proc: thin, each one a model call. Content is
 * made at open and kept per handle, reads are direct (no page cache), and
 * files report size 0, as the kernel's /proc does. */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

struct handle {
	struct fp_path path;
	char *buf;
	size_t len;
};

static struct fp_model *model(void)
{
	return fuse_get_context()->private_data;
}

static bool is_dir(enum fp_node n)
{
	return n == FP_ROOT || n == FP_DRIVER || n == FP_DRIVER_NVIDIA || n == FP_PID ||
	       n == FP_TASKDIR || n == FP_TASK;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Every lookup and read must reach the model: faults fire on access. */
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	conn->want &= ~FUSE_CAP_READDIRPLUS;
	return fuse_get_context()->private_data;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct fp_path p;
	int r = fp_path_parse(path, &p);

	(void)fi;
	if (r == 0)
		r = fp_exists(model(), &p);
	if (r < 0)
		return r;
	memset(st, 0, sizeof(*st));
	st->st_mode = is_dir(p.node) ? S_IFDIR | 0555
		    : p.node == FP_TASK_COMM || p.node == FP_PID_COMM || p.node == FP_CONTROL
			    ? S_IFREG | 0644 : S_IFREG | 0444;
	st->st_nlink = is_dir(p.node) ? 2 : 1;
	/* A process's entries are its owner's, as the kernel shows them: the
	 * case's processes are those of whoever serves it (a user's fakeproc
	 * serves that user's processes); the rest of the tree is root's. */
	if (p.node != FP_ROOT && p.node != FP_CONTROL && p.node != FP_DRIVER &&
	    p.node != FP_DRIVER_NVIDIA && p.node != FP_VERSION) {
		st->st_uid = getuid();
		st->st_gid = getgid();
	}
	st->st_size = 0;
	st->st_mtime = st->st_atime = st->st_ctime = time(NULL);
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_one(void *ctx, const char *name, off_t next)
{
	struct fill_ctx *f = ctx;

	return f->filler(f->buf, name, NULL, next, 0);
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct fill_ctx ctx = { buf, filler };
	struct fp_path p;
	int r = fp_path_parse(path, &p);

	(void)fi;
	(void)flags;
	if (r < 0)
		return r;
	if (!is_dir(p.node))
		return -ENOTDIR;
	return fp_list(model(), &p, off, fill_one, &ctx);
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	r = fp_path_parse(path, &h->path);
	if (r == 0 && h->path.node != FP_CONTROL && (fi->flags & O_ACCMODE) != O_RDONLY)
		r = -EACCES;
	if (r == 0)
		r = fp_open(model(), &h->path, &h->buf, &h->len);
	if (r < 0) {
		free(h);
		return r;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return 0;
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fs_read(const char *path, char *out, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	size_t max;
	int delay, r;

	(void)path;
	r = fp_read_faults(model(), &h->path, &delay, &max);
	if (delay > 0)
		pause_ms(delay);
	if (r < 0)
		return r;
	if ((size_t)off >= h->len)
		return 0;
	if (size > h->len - (size_t)off)
		size = h->len - (size_t)off;
	if (size > max)
		size = max;
	memcpy(out, h->buf + off, size);
	return (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	int r;

	(void)path;
	(void)off;
	if (h->path.node != FP_CONTROL)
		return -EACCES;
	r = fp_control(model(), buf, size);
	return r < 0 ? r : (int)size;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct fp_path p;

	(void)size;
	(void)fi;
	return fp_path_parse(path, &p) == 0 && p.node == FP_CONTROL ? 0 : -EACCES;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;

	(void)path;
	free(h->buf);
	free(h);
	return 0;
}

const struct fuse_operations fakeproc_ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.release = fs_release,
};
