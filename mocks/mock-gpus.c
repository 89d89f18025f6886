/* The mock driver's GPUs (mock-gpus.h). Its own reader of UUIDs, not rtid's:
 * a fault shared by the two would pass unseen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mock-gpus.h"
#include "mock-log.h"

#define WHO "libcuda"
#define INVALID_VALUE 1
#define INVALID_DEVICE 101
#define MAX 16
#define UUID_LEN 40

struct gpus {
	char id[MAX][UUID_LEN + 1];
	int n;
};

/* pid's GPUs in memory, when there is no state directory. */
static struct { int pid; struct gpus g; } mem[64];
static int nmem;

static void split(const char *list, struct gpus *g)
{
	g->n = 0;
	while (list && *list && g->n < MAX) {
		size_t n = strcspn(list, ",");

		snprintf(g->id[g->n++], UUID_LEN + 1, "%.*s", (int)n, list);
		list += n + (list[n] == ',');
	}
}

static void uuid_text(const unsigned char *u, char out[UUID_LEN + 1])
{
	snprintf(out, UUID_LEN + 1,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

static int find(const struct gpus *g, const char *id)
{
	for (int i = 0; i < g->n; i++)
		if (!strcasecmp(g->id[i], id))
			return i;
	return -1;
}

static void path_of(int pid, char *buf, size_t len)
{
	mock_state_path(pid, ".gpus", buf, len);
}

static void keep(int pid, const struct gpus *g)
{
	char path[1024], line[MAX * (UUID_LEN + 1) + 1] = "";
	FILE *f;
	int i;

	for (i = 0; i < g->n; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", i ? "," : "",
			 g->id[i]);
	path_of(pid, path, sizeof(path));
	if (path[0] && (f = fopen(path, "w"))) {
		fprintf(f, "%s\n", line);
		fclose(f);
		return;
	}
	for (i = 0; i < nmem && mem[i].pid != pid; i++)
		;
	if (i == nmem && nmem < 64)
		nmem++;
	if (i < 64)
		mem[i].pid = pid, mem[i].g = *g;
}

static void recall(int pid, struct gpus *g)
{
	char path[1024], line[MAX * (UUID_LEN + 1) + 2];
	FILE *f;

	g->n = 0;
	path_of(pid, path, sizeof(path));
	if (path[0] && (f = fopen(path, "r"))) {
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			split(line, g);
		}
		fclose(f);
		return;
	}
	for (int i = 0; i < nmem; i++)
		if (mem[i].pid == pid)
			*g = mem[i].g;
}

void mock_gpus_checkpoint(int pid)
{
	const char *mine = getenv("RTID_MOCK_PROC_GPUS"), *node = getenv("RTID_MOCK_GPUS");
	struct gpus g;

	recall(pid, &g);
	if (g.n)
		return; /* where a restore put it */
	split(mine && *mine ? mine : node && *node ? node : "GPU-00000000-0000-0000-0000-000000000001",
	      &g);
	if (!(mine && *mine))
		g.n = 1;
	keep(pid, &g);
}

static int refuse(int pid, int err, const char *what, const char *id)
{
	char note[96];

	snprintf(note, sizeof(note), "%s %s", what, id);
	mock_log(WHO, "restore-map", pid, 0, NULL, note);
	return err;
}

int mock_gpus_restore(int pid, const unsigned char *args)
{
	static const unsigned char zero[52];
	const unsigned char *pairs;
	char note[MAX * (2 * UUID_LEN + 2)] = "";
	struct gpus had, node, to = { .n = 0 }, from = { .n = 0 };
	unsigned n;

	memcpy(&pairs, args, sizeof(pairs));
	memcpy(&n, args + 8, sizeof(n));
	if (memcmp(args + 12, zero, sizeof(zero)) != 0)
		return refuse(pid, INVALID_VALUE, "reserved", "set");
	if (n == 0)
		return pairs ? refuse(pid, INVALID_VALUE, "pairs", "without a count") : 0;
	if (n > MAX || !pairs)
		return refuse(pid, INVALID_VALUE, "pairs", n > MAX ? "too many" : "missing");
	recall(pid, &had);
	split(getenv("RTID_MOCK_GPUS"), &node);
	for (unsigned i = 0; i < n; i++) {
		char a[UUID_LEN + 1], b[UUID_LEN + 1];

		uuid_text(pairs + 32 * i, a);
		uuid_text(pairs + 32 * i + 16, b);
		if (find(&from, a) >= 0 || find(&to, b) >= 0)
			return refuse(pid, INVALID_VALUE, "twice", find(&from, a) >= 0 ? a : b);
		if (node.n && find(&node, b) < 0)
			return refuse(pid, INVALID_DEVICE, "not on the node", b);
		snprintf(from.id[from.n++], UUID_LEN + 1, "%s", a);
		snprintf(to.id[to.n++], UUID_LEN + 1, "%s", b);
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s=%s", i ? "," : "",
			 a, b);
	}
	/* The tool's rule: the map must contain all checkpointed devices. */
	for (int i = 0; i < had.n; i++)
		if (find(&from, had.id[i]) < 0)
			return refuse(pid, INVALID_VALUE, "missing", had.id[i]);
	mock_log(WHO, "restore-map", pid, 0, NULL, note);
	for (int i = 0; i < had.n; i++)
		snprintf(had.id[i], UUID_LEN + 1, "%s", to.id[find(&from, had.id[i])]);
	keep(pid, &had);
	return 0;
}
