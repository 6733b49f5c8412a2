// SPDX-License-Identifier: MIT
/*
 * layout.c - the size limits the API promises and the version macros.
 *
 * Heads are embedded in users' structures and waiters live in their stack
 * frames, so the sizes are part of the ABI: on LP64 a head is at most 24
 * bytes and a waiter at most 32; with 32-bit pointers 16 and 20.  The header's SWAIT_VERSION_* must match
 * the Meson project version (passed in as SWAIT_EXPECT_VERSION_*).  Both are
 * checked at compile time; the run checks that each INITIALIZER is the
 * all-zero state the header calls valid and empty.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <swait.h>

#if !defined(SWAIT_EXPECT_VERSION_MAJOR) || \
	!defined(SWAIT_EXPECT_VERSION_MINOR) || \
	!defined(SWAIT_EXPECT_VERSION_PATCH)
#error "build with -DSWAIT_EXPECT_VERSION_{MAJOR,MINOR,PATCH} from meson"
#endif

_Static_assert(SWAIT_VERSION_MAJOR == SWAIT_EXPECT_VERSION_MAJOR &&
	       SWAIT_VERSION_MINOR == SWAIT_EXPECT_VERSION_MINOR &&
	       SWAIT_VERSION_PATCH == SWAIT_EXPECT_VERSION_PATCH,
	       "SWAIT_VERSION_* in swait.h differ from meson.project_version()");

#if defined(__LP64__)
_Static_assert(sizeof(struct swait_head) <= 24,
	       "struct swait_head grew past 24 bytes");
_Static_assert(sizeof(struct swait_waiter) <= 32,
	       "struct swait_waiter grew past 32 bytes");
#elif defined(__ILP32__) || (defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 4)
/* i386, armhf, x32: 32-bit pointers. */
_Static_assert(sizeof(struct swait_head) <= 16,
	       "struct swait_head grew past 16 bytes");
_Static_assert(sizeof(struct swait_waiter) <= 20,
	       "struct swait_waiter grew past 20 bytes");
#else
#error "layout.c: give this ABI's size limits (swait(7), SIZES)"
#endif

/* The futex words: 32-bit and 4-byte aligned, as the kernel requires. */
_Static_assert(sizeof(((struct swait_waiter *)0)->state) == 4 &&
	       offsetof(struct swait_waiter, state) % 4 == 0 &&
	       offsetof(struct swait_head, lock) % 4 == 0 &&
	       _Alignof(struct swait_head) >= 4 &&
	       _Alignof(struct swait_waiter) >= 4,
	       "a futex word is not a 4-byte aligned 32-bit word");

/* The kernel's names for the completion's members. */
_Static_assert(offsetof(struct swait_completion, done) == 0 &&
	       offsetof(struct swait_completion, wait) > 0,
	       "struct swait_completion lost its done/wait members");

static int all_zero(const void *p, size_t n)
{
	static const unsigned char zero[64];

	return n <= sizeof(zero) && memcmp(p, zero, n) == 0;
}

int main(void)
{
	/* static: only then are padding bytes zero too (C11 6.7.9p10) */
	static struct swait_head head = SWAIT_HEAD_INITIALIZER;
	static struct swait_waiter waiter = SWAIT_WAITER_INITIALIZER;
	static struct swait_completion comp = SWAIT_COMPLETION_INITIALIZER;
	int failures = 0;

	if (!all_zero(&head, sizeof(head)) ||
	    !all_zero(&waiter, sizeof(waiter)) ||
	    !all_zero(&comp, sizeof(comp))) {
		fprintf(stderr, "an INITIALIZER is not all-zero bytes\n");
		failures++;
	}
	printf("libswait %d.%d.%d: head %zu, waiter %zu, completion %zu bytes\n",
	       SWAIT_VERSION_MAJOR, SWAIT_VERSION_MINOR, SWAIT_VERSION_PATCH,
	       sizeof(head), sizeof(waiter), sizeof(comp));
	return failures ? 1 : 0;
}
