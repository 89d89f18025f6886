/* The fake /proc's FUSE operations; private_data is the struct fp_model. */
#ifndef FAKEPROC_FS_H
#define FAKEPROC_FS_H

#define FUSE_USE_VERSION 31
#include <fuse.h>

#include "model.h"

extern const struct fuse_operations fakeproc_ops;

#endif
