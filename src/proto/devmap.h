/* A device map: which GPU a restored process's CUDA state goes to, pair by
 * pair, in cuda-checkpoint's own syntax (r580, --device-map):
 * "GPU-<uuid>=GPU-<uuid>,..." with the UUIDs as nvidia-smi -L prints them,
 * old (the GPU at the checkpoint) first. One reader for the shim, the
 * daemon, rtid's plugin and rtid doctor, so that all refuse alike. */
#ifndef RTID_DEVMAP_H
#define RTID_DEVMAP_H

#include <stddef.h>

/* Pairs in one map: a node's GPUs, with room (an HGX node has 8, a DGX-2 16). */
#define RTID__MAP_MAX 16
/* "GPU-" and 36 characters of UUID, without its NUL. */
#define RTID__UUID_TEXT 40
/* The longest map text, without its NUL: every pair, '=' and ','. */
#define RTID__MAP_TEXT (RTID__MAP_MAX * (2 * RTID__UUID_TEXT + 2) - 1)

/* One pair as the driver takes it (CUcheckpointGpuPair: two CUuuid). */
struct rtid__gpu_pair {
	unsigned char from[16], to[16];
};

struct rtid__devmap {
	unsigned n; /* 0: no map */
	struct rtid__gpu_pair pair[RTID__MAP_MAX];
};

/* Parse text (a map in the tool's syntax) into *out. 0, or -EINVAL and why
 * (len bytes) names the fault: an empty map or pair, a pair that is not
 * OLD=NEW, a malformed UUID, a GPU named twice on one side, more than
 * RTID__MAP_MAX pairs. *out is untouched on failure. */
int rtid__devmap_parse(const char *text, struct rtid__devmap *out, char *why, size_t len);
/* m in the tool's syntax into buf (at least RTID__MAP_TEXT + 1 bytes for
 * every map): its length; "" for a map of no pairs. */
size_t rtid__devmap_format(const struct rtid__devmap *m, char *buf, size_t len);
/* One UUID as the tool writes it, "GPU-" and lower-case hex, into out. */
void rtid__uuid_format(const unsigned char uuid[16], char out[RTID__UUID_TEXT + 1]);
/* Parse one UUID of exactly n bytes of s ("GPU-" then 8-4-4-4-12 hex
 * digits, either case): 0 and uuid, or -EINVAL. */
int rtid__uuid_parse(const char *s, size_t n, unsigned char uuid[16]);

#endif
