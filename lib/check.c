// SPDX-License-Identifier: MIT
/*
 * check.c - fatal error reporting.  write(2) only: these run with the head
 * lock held and may run in a signal handler, where stdio is not safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

/* A message being built; one byte is kept for the closing newline. */
struct msg {
	char buf[512];
	size_t len;
};

static void put(struct msg *m, const char *s)
{
	while (*s && m->len + 1 < sizeof(m->buf) - 1)
		m->buf[m->len++] = *s++;
}

static void put_hex(struct msg *m, uintptr_t v)
{
	char tmp[2 + 2 * sizeof(v) + 1];
	size_t n = sizeof(tmp) - 1;

	tmp[n] = '\0';
	do {
		tmp[--n] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v && n > 2);
	tmp[--n] = 'x';
	tmp[--n] = '0';
	put(m, tmp + n);
}

static void put_dec(struct msg *m, long v)
{
	char tmp[24];
	size_t n = sizeof(tmp) - 1;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	tmp[n] = '\0';
	do {
		tmp[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--n] = '-';
	put(m, tmp + n);
}

static __attribute__((noreturn)) void emit_and_abort(struct msg *m)
{
	const char *p = m->buf;
	size_t len = m->len;

	m->buf[len++] = '\n';
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, p, len);

		if (n <= 0)
			break;
		p += n;
		len -= (size_t)n;
	}
	abort();
}

void swait_fatal(const char *what, const void *a, const void *b, const void *c)
{
	struct msg m = { .len = 0 };
	const void *ptrs[3] = { a, b, c };

	put(&m, "libswait: ");
	put(&m, what);
	for (int i = 0; i < 3 && ptrs[i]; i++) {
		put(&m, i ? ", " : " [");
		put_hex(&m, (uintptr_t)ptrs[i]);
		if (i == 2 || !ptrs[i + 1])
			put(&m, "]");
	}
	emit_and_abort(&m);
}

void swait_fatal_call(const char *what, int err)
{
	struct msg m = { .len = 0 };

	put(&m, "libswait: ");
	put(&m, what);
	put(&m, " (errno ");
	put_dec(&m, err);
	put(&m, ")");
	emit_and_abort(&m);
}

void swait_fatal_errno(const char *call, int err, const char *file, int line)
{
	struct msg m = { .len = 0 };

	put(&m, "libswait: ");
	put(&m, file);
	put(&m, ":");
	put_dec(&m, line);
	put(&m, ": ");
	put(&m, call);
	put(&m, " failed with errno ");
	put_dec(&m, err);
	put(&m, err == ENOSYS ?
	    " (the kernel does not provide this futex operation)" :
	    " (the futex word was overwritten, or its memory freed, while "
	    "in use)");
	emit_and_abort(&m);
}
