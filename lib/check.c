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

static void put(char *buf, size_t *len, size_t cap, const char *s)
{
	while (*s && *len + 1 < cap)
		buf[(*len)++] = *s++;
}

static void put_hex(char *buf, size_t *len, size_t cap, uintptr_t v)
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
	put(buf, len, cap, tmp + n);
}

static void put_dec(char *buf, size_t *len, size_t cap, long v)
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
	put(buf, len, cap, tmp + n);
}

static __attribute__((noreturn)) void emit_and_abort(char *buf, size_t len)
{
	buf[len++] = '\n';
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n <= 0)
			break;
		buf += n;
		len -= (size_t)n;
	}
	abort();
}

void swait_fatal(const char *what, const void *a, const void *b, const void *c)
{
	char buf[512];
	size_t len = 0;
	const void *ptrs[3] = { a, b, c };

	put(buf, &len, sizeof(buf) - 1, "libswait: ");
	put(buf, &len, sizeof(buf) - 1, what);
	for (int i = 0; i < 3 && ptrs[i]; i++) {
		put(buf, &len, sizeof(buf) - 1, i ? ", " : " [");
		put_hex(buf, &len, sizeof(buf) - 1, (uintptr_t)ptrs[i]);
		if (i == 2 || !ptrs[i + 1])
			put(buf, &len, sizeof(buf) - 1, "]");
	}
	emit_and_abort(buf, len);
}

void swait_fatal_call(const char *what, int err)
{
	char buf[512];
	size_t len = 0;

	put(buf, &len, sizeof(buf) - 1, "libswait: ");
	put(buf, &len, sizeof(buf) - 1, what);
	put(buf, &len, sizeof(buf) - 1, " (errno ");
	put_dec(buf, &len, sizeof(buf) - 1, err);
	put(buf, &len, sizeof(buf) - 1, ")");
	emit_and_abort(buf, len);
}

void swait_fatal_errno(const char *call, int err, const char *file, int line)
{
	char buf[512];
	size_t len = 0;

	put(buf, &len, sizeof(buf) - 1, "libswait: ");
	put(buf, &len, sizeof(buf) - 1, file);
	put(buf, &len, sizeof(buf) - 1, ":");
	put_dec(buf, &len, sizeof(buf) - 1, line);
	put(buf, &len, sizeof(buf) - 1, ": ");
	put(buf, &len, sizeof(buf) - 1, call);
	put(buf, &len, sizeof(buf) - 1, " failed with errno ");
	put_dec(buf, &len, sizeof(buf) - 1, err);
	put(buf, &len, sizeof(buf) - 1, err == ENOSYS ?
	    " (the kernel does not provide this futex operation)" :
	    " (the futex word was overwritten, or its memory freed, while "
	    "in use)");
	emit_and_abort(buf, len);
}
