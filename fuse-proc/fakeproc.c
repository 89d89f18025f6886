/* fakeproc: serve a case file as a /proc tree over FUSE.
 *
 *   fakeproc [-f] [--ready-fd N] CASEFILE MOUNTPOINT
 *
 * -f stays in the foreground; --ready-fd N writes "ready\n" to fd N once the
 * mount is up (how the case runner waits without polling). SIGTERM, SIGINT
 * and SIGHUP unmount cleanly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "helpers.h"
#include "basic/parse.h"
#include "rtid.h"

static const char usage[] =
	"Usage: fakeproc [-f] [--ready-fd N] CASEFILE MOUNTPOINT\n"
	"Serve the processes, threads and faults of CASEFILE as a /proc tree.\n"
	"Control at runtime: write \"fault ...\", \"clear\" or \"reset\" lines to\n"
	"MOUNTPOINT/rtid-control; read it to see what is armed.\n";

struct opts {
	bool foreground;
	int ready_fd;
	const char *casefile, *mnt;
};

static int parse(int argc, char **argv, struct opts *o)
{
	int n = 0;

	o->ready_fd = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f"))
			o->foreground = true;
		else if (!strcmp(argv[i], "--ready-fd") && i + 1 < argc) {
			if (rtid__parse_pid(argv[++i], &o->ready_fd) < 0)
				return -1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			exit(0);
		} else if (n == 0) {
			o->casefile = argv[i], n++;
		} else if (n == 1) {
			o->mnt = argv[i], n++;
		} else {
			return -1;
		}
	}
	return n == 2 ? 0 : -1;
}

static int fuse_usable(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "fakeproc: cannot use FUSE: /dev/fuse: %s (needs the fuse module "
			"and permission to open /dev/fuse)\n", strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int serve(struct fuse *f, const struct opts *o)
{
	struct fuse_session *se = fuse_get_session(f);
	int r, watch = fuse_watch_start(o->mnt); /* a user's stand-in for auto_unmount */

	if (fuse_mount(f, o->mnt) != 0) {
		fprintf(stderr, "fakeproc: cannot mount on %s (is it an empty directory, and may "
			"this user mount? as non-root, fusermount3 must be installed)\n", o->mnt);
		fuse_watch_done(watch);
		return 1;
	}
	if (fuse_set_signal_handlers(se) != 0 || fuse_daemonize(o->foreground) != 0) {
		fuse_unmount(f);
		fuse_watch_done(watch);
		return 1;
	}
	if (o->ready_fd >= 0) {
		if (write(o->ready_fd, "ready\n", 6) != 6) {
			/* the runner then sees EOF and reports the failure */
		}
		close(o->ready_fd);
	}
	r = fuse_loop(f);
	fuse_remove_signal_handlers(se);
	fuse_unmount(f);
	fuse_watch_done(watch);
	return r < 0 ? 1 : 0; /* > 0: the signal that ended the loop */
}

int main(int argc, char **argv)
{
	/* auto_unmount: fusermount3 unmounts when fakeproc dies, even by SIGKILL
	 * (as root; a user's fakeproc has fuse_watch_start's watcher). */
	char *fargv[] = { argv[0], "-o", "fsname=fakeproc,subtype=fakeproc,auto_unmount", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct casefile *c = NULL;
	struct fp_model *m = NULL;
	struct opts o = { 0 };
	struct fuse *f;
	char err[512];
	int rc = 1;

	if (parse(argc, argv, &o) < 0) {
		fputs(usage, stderr);
		return 2;
	}
	if (cf_load(o.casefile, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "fakeproc: %s\n", err);
		return 2;
	}
	if (fuse_usable() == 0 && fp_model_new(c, &m) == 0) {
		f = fuse_new(&args, &fakeproc_ops, sizeof(fakeproc_ops), m);
		if (f) {
			rc = serve(f, &o);
			fuse_destroy(f);
		}
	}
	fuse_opt_free_args(&args);
	fp_model_free(m);
	cf_free(c);
	return rc;
}
