/* A resolver's context: the caller's config read whatever header it was
 * built with, defaults settled once, the driver version and what the
 * attestation says of it. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "core/core.h"

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (s && !(*out = strdup(s)))
		return -ENOMEM;
	return 0;
}

static int ctx_version(struct rtid_ctx *ctx, const char *v)
{
	const struct rtid_attest_entry *e;

	if (v) {
		char running[sizeof(ctx->driver_version)];

		if (!rtid__version_valid(v))
			return -EINVAL;
		strcpy(ctx->driver_version, v); /* valid means at most 31 bytes */
		ctx->have_version = true;
		/* A stale version (a variable baked into an image, a driver upgraded
		 * since) must not scan under another version's attestation: the
		 * running one is reported, and nothing is trusted. */
		if (rtid__driver_version_read(ctx->proc_root, running, sizeof(running)) == 0 &&
		    strcmp(running, v) != 0) {
			strcpy(ctx->driver_version, running);
			ctx->version_mismatch = true;
			return 0;
		}
	} else {
		ctx->have_version = rtid__driver_version_read(ctx->proc_root, ctx->driver_version,
							      sizeof(ctx->driver_version)) == 0;
	}
	if (!ctx->have_version)
		return 0; /* unknown: never attested */
	ctx->attested = rtid_attest_clean(ctx->cfg.attestation, ctx->driver_version);
	e = rtid_attest_find(ctx->cfg.attestation, ctx->driver_version);
	ctx->revoked = e && e->revoked; /* a mismatch, unless explicitly lifted */
	return 0;
}

static int ctx_setup(struct rtid_ctx *ctx, const struct rtid_config *cfg)
{
	int r;

	ctx->cfg = *cfg;
	if ((unsigned)cfg->mode >= RTID__MODE_MAX || (unsigned)cfg->backend >= RTID__BACKEND_MAX)
		return -EINVAL;
	/* Defaults settled once, here: the batch code reads these as they are. */
	if (ctx->cfg.timeout_s <= 0)
		ctx->cfg.timeout_s = RTID_TIMEOUT_DEFAULT;
	if (ctx->cfg.jobs == 0)
		ctx->cfg.jobs = RTID_JOBS_DEFAULT;
	if (ctx->cfg.jobs > RTID__MAX_CHILDREN)
		ctx->cfg.jobs = RTID__MAX_CHILDREN;
	if ((r = dup_opt(cfg->proc_root ? cfg->proc_root : "/proc", &ctx->proc_root)) < 0 ||
	    (r = dup_opt(cfg->tool, &ctx->drv.tool_name)) < 0 ||
	    (r = dup_opt(cfg->libcuda, &ctx->drv.libcuda)) < 0 ||
	    (r = dup_opt(cfg->service_socket, &ctx->drv.service_socket)) < 0)
		return r;
	/* Not kept: the caller's strings may go; ctx holds its own copies. */
	ctx->cfg.driver_version = NULL;
	ctx->cfg.pattern = NULL;
	ctx->cfg.proc_root = ctx->cfg.tool = ctx->cfg.libcuda = ctx->cfg.service_socket = NULL;
	if ((r = ctx_version(ctx, cfg->driver_version)) < 0)
		return r;
	/* A tool that is missing is reported per pid, where it is needed. */
	if (cfg->backend == RTID_BACKEND_TOOL) {
		r = rtid__tool_find(cfg->tool, &ctx->drv.tool_path);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	ctx->drv.backend = ctx->cfg.backend;
	ctx->drv.timeout_s = ctx->cfg.timeout_s;
	ctx->drv.jobs = ctx->cfg.jobs;
	return 0;
}

/* The sizes of the first published layouts: the smallest a caller can have
 * been built with. Fields are only ever added at the ends. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define CONFIG_SIZE_0 END_OF(struct rtid_config, service_socket)
#define RESULT_SIZE_0 END_OF(struct rtid_result, detail)

/* Copy the caller's config, whatever header it was built with: an older one
 * reads as zeros (defaults) in the fields it lacks; a newer one may be larger
 * only by fields left zero, since a set one would be silently ignored. */
static int config_copy(const struct rtid_config *cfg, struct rtid_config *out)
{
	const unsigned char *tail = (const unsigned char *)cfg + sizeof(*out);

	if (cfg->size < CONFIG_SIZE_0 || cfg->result_size < RESULT_SIZE_0)
		return -EINVAL;
	for (size_t i = 0; cfg->size > sizeof(*out) && i < cfg->size - sizeof(*out); i++)
		if (tail[i])
			return -E2BIG;
	memset(out, 0, sizeof(*out));
	memcpy(out, cfg, cfg->size < sizeof(*out) ? cfg->size : sizeof(*out));
	return 0;
}

int rtid_ctx_new(const struct rtid_config *cfg, struct rtid_ctx **out)
{
	struct rtid_config c;
	struct rtid_ctx *ctx;
	int r;

	if (!cfg || !out)
		return -EINVAL;
	if ((r = config_copy(cfg, &c)) < 0)
		return r;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	if (rtid__matcher_init(&ctx->matcher, c.pattern) < 0) {
		free(ctx);
		return -EINVAL;
	}
	r = ctx_setup(ctx, &c);
	if (r < 0) {
		rtid_ctx_free(ctx);
		return r;
	}
	*out = ctx;
	return 0;
}

void rtid_ctx_free(struct rtid_ctx *ctx)
{
	if (!ctx)
		return;
	rtid__driver_end(&ctx->drv);
	rtid__matcher_fini(&ctx->matcher);
	free(ctx->proc_root);
	free(ctx->drv.tool_name);
	free(ctx->drv.tool_path);
	free(ctx->drv.libcuda);
	free(ctx->drv.service_socket);
	free(ctx);
}

bool rtid_ctx_version_mismatch(const struct rtid_ctx *ctx)
{
	return ctx && ctx->version_mismatch;
}

const char *rtid_ctx_driver_version(const struct rtid_ctx *ctx)
{
	return ctx && ctx->have_version ? ctx->driver_version : NULL;
}

bool rtid_ctx_attested(const struct rtid_ctx *ctx)
{
	return ctx && ctx->attested;
}
