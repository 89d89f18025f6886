/* What can be run: the search for a program the way execvp searches
 * (regular files we may execute only), never finding rtid itself nor any
 * other rtid (another version, the static build: each carries rtid's ELF
 * note), so that a shim named cuda-checkpoint never calls a shim. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"

#define ELFCLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
#define NATIVE_DATA (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)

/* Same bytes: a copy of the running program under another inode. */
static bool same_contents(int a, int b)
{
	char x[16384], y[sizeof(x)];

	for (;;) {
		ssize_t n = read(a, x, sizeof(x)), m;

		if (n < 0)
			return false;
		for (ssize_t got = 0; got < n; got += m) {
			m = read(b, y + got, (size_t)(n - got));
			if (m <= 0)
				return false;
		}
		if (n == 0)
			return read(b, y, 1) == 0;
		if (memcmp(x, y, (size_t)n))
			return false;
	}
}

/* Is cand the running program (self: its stat), by inode or by content? */
static bool is_self(const char *cand, const struct stat *self)
{
	struct stat st;
	int a, b;
	bool same;

	if (stat(cand, &st) < 0)
		return false;
	if (st.st_dev == self->st_dev && st.st_ino == self->st_ino)
		return true;
	if (st.st_size != self->st_size || !S_ISREG(st.st_mode))
		return false;
	a = open(cand, O_RDONLY | O_CLOEXEC);
	b = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	same = a >= 0 && b >= 0 && same_contents(a, b);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

#define NOTE_PHDRS_MAX 64   /* program headers looked at */
#define NOTE_SEGMENT_MAX 4096 /* a note segment read whole; a larger one is not rtid's */
#define NOTE_ALIGN(n, a) (((n) + (a) - 1) & ~(size_t)((a) - 1))

/* rtid's note in one note segment (len bytes of notes padded to align):
 * true and its text (the version) in ver. Every size is the file's word,
 * checked against len before it is used. */
static bool note_in(const unsigned char *p, size_t len, size_t align, char *ver, size_t vlen)
{
	size_t off = 0;

	while (len - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) h;
		size_t name_at = off + sizeof(h), desc_at;

		memcpy(&h, p + off, sizeof(h));
		if (h.n_namesz > len - name_at)
			return false;
		desc_at = name_at + NOTE_ALIGN(h.n_namesz, align);
		if (desc_at > len || h.n_descsz > len - desc_at)
			return false;
		if (h.n_type == RTID__NOTE_TYPE && h.n_namesz == sizeof(RTID__NOTE_NAME) &&
		    !memcmp(p + name_at, RTID__NOTE_NAME, sizeof(RTID__NOTE_NAME))) {
			size_t n = strnlen((const char *)p + desc_at, h.n_descsz);

			snprintf(ver, vlen, "%.*s", (int)(n < vlen ? n : vlen - 1), p + desc_at);
			return true;
		}
		off = desc_at + NOTE_ALIGN(h.n_descsz, align);
		if (off >= len)
			return false;
	}
	return false;
}

/* The note segments of an ELF program of our own class and byte order (no
 * other can be an rtid that runs here), read through fd. */
static int note_of(int fd, char *ver, size_t vlen)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[NOTE_PHDRS_MAX];
	unsigned char seg[NOTE_SEGMENT_MAX];
	size_t size;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS ||
	    eh.e_ident[EI_DATA] != NATIVE_DATA || eh.e_phentsize != sizeof(ph[0]) ||
	    eh.e_phnum > NOTE_PHDRS_MAX)
		return 0;
	size = eh.e_phnum * sizeof(ph[0]);
	if (pread(fd, ph, size, (off_t)eh.e_phoff) != (ssize_t)size)
		return 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		size_t align = ph[i].p_align == 8 ? 8 : 4;

		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > sizeof(seg) ||
		    pread(fd, seg, ph[i].p_filesz, (off_t)ph[i].p_offset) != (ssize_t)ph[i].p_filesz)
			continue;
		if (note_in(seg, ph[i].p_filesz, align, ver, vlen))
			return 1;
	}
	return 0;
}

int rtid__rtid_note(const char *path, char *ver, size_t vlen)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), r;

	if (fd < 0)
		return -errno;
	r = note_of(fd, ver && vlen ? ver : buf, ver && vlen ? vlen : sizeof(buf));
	close(fd);
	return r;
}

int rtid__executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES; /* what execve says of a directory */
	return access(path, X_OK) < 0 ? -errno : 0;
}

static int search_path(const char *name, const struct stat *self, char **out)
{
	const char *path = getenv("PATH");
	const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";

	while (*p) {
		size_t len = strcspn(p, ":");
		char *cand;

		if (asprintf(&cand, "%.*s/%s", (int)len, len ? p : ".", name) < 0)
			return -ENOMEM;
		/* Skipping every rtid keeps the shim from calling a shim. */
		if (rtid__executable(cand) == 0 && !(self && is_self(cand, self)) &&
		    rtid__rtid_note(cand, NULL, 0) != 1) {
			*out = cand;
			return 0;
		}
		free(cand);
		p += len + (p[len] == ':');
	}
	return -ENOENT;
}

/* The running program's stat. Through an open fd, not stat(): a checker
 * such as valgrind maps the open of /proc/self/exe to the program it runs,
 * while stat() would see the checker itself. O_PATH: an execute-only rtid
 * (mode 0711) must still know itself. */
static int self_stat(struct stat *st)
{
	int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	return r;
}

bool rtid__is_self(const char *path)
{
	struct stat self;

	return self_stat(&self) == 0 && is_self(path, &self);
}

bool rtid__is_rtid(const char *path)
{
	return rtid__is_self(path) || rtid__rtid_note(path, NULL, 0) == 1;
}

/* Returns 0 and *out, -ENOENT when there is no such executable, -ENOMEM. */
int rtid__tool_find(const char *name, char **out)
{
	struct stat self;
	bool have_self = self_stat(&self) == 0;

	if (!name)
		name = "cuda-checkpoint";
	if (strchr(name, '/')) {
		char *copy;

		/* Known missing now is a clearer error than a child that exits 127. */
		if (rtid__executable(name) < 0)
			return -ENOENT;
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		*out = copy;
		return 0;
	}
	return search_path(name, have_self ? &self : NULL, out);
}
