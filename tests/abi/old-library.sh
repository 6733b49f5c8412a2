#!/bin/sh
# SPDX-License-Identifier: MIT
#
# old-library.sh LIBSWAIT_SO INCDIR [FLAG...] -- COMPILER...
#
# A program compiled with <swait.h>'s inline swait_wake_one() reads the
# walks word's SWAIT_HEAD_ASYM_BIT, which libraries before asymmetric heads
# used as a generation bit: on one of those it would take an ordinary head
# whose generation is odd for an asymmetric one and skip the wake's fence,
# a lost wakeup.  So the dynamic loader must refuse to run it there.  This
# links two programs against this build's library (LIBSWAIT_SO), one with
# the inline and one with SWAIT_NO_INLINE, and runs both on a stand-in for
# an older libswait.so.0 (the same soname, the version nodes up to
# SWAIT_0.7, nothing of SWAIT_0.8):
#   - the control, built with SWAIT_NO_INLINE (it reads no bit), runs and
#     calls the stand-in's wake, so the stand-in loads and binds;
#   - the program with the inline does not start, and the loader names the
#     missing version node.
set -u

if [ $# -lt 4 ]; then
	echo "usage: $0 LIBSWAIT_SO INCDIR [FLAG...] -- COMPILER..." >&2
	exit 2
fi
lib=$1 inc=$2
shift 2
flags=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	flags="$flags $1"
	shift
done
[ $# -gt 1 ] || { echo "$0: no compiler after --" >&2; exit 2; }
shift

tmp=$(mktemp -d "${TMPDIR:-/tmp}/swait-oldlib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/new" "$tmp/old"
ln -s "$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")" \
	"$tmp/new/libswait.so"

# The stand-in: what the programs call, in the nodes an older release had.
cat >"$tmp/old.c" <<'C'
#include <stdio.h>
#include <swait.h>
void swait_head_init(struct swait_head *h) { (void)h; }
void swait_wake_one(struct swait_head *h) { (void)h; puts("old wake"); }
int swait_head_init_asym(struct swait_head *h) { (void)h; return 38; }
C
cat >"$tmp/old.map" <<'M'
SWAIT_0.1 { global: swait_head_init; swait_wake_one; local: *; };
SWAIT_0.7 { global: swait_head_init_asym; } SWAIT_0.1;
M
cat >"$tmp/prog.c" <<'C'
#include <swait.h>
int main(void)
{
	static struct swait_head h;

	swait_head_init(&h);
	swait_wake_one(&h);
	return 0;
}
C

run() {
	# shellcheck disable=SC2086 # the flags and the compiler split into words
	"$@" >"$tmp/cmd.log" 2>&1 || { cat "$tmp/cmd.log"; return 1; }
}
# shellcheck disable=SC2086
run "$@" $flags -DSWAIT_NO_INLINE -I"$inc" -shared -fPIC \
	-o "$tmp/old/libswait.so.0" \
	-Wl,-soname,libswait.so.0 -Wl,--version-script="$tmp/old.map" \
	"$tmp/old.c" || { echo "FAIL: building the stand-in"; exit 1; }
for how in no-inline inline; do
	def=
	[ $how = no-inline ] && def=-DSWAIT_NO_INLINE
	# shellcheck disable=SC2086
	run "$@" $flags $def -I"$inc" -o "$tmp/prog-$how" "$tmp/prog.c" \
		-L"$tmp/new" -lswait ||
		{ echo "FAIL: linking prog-$how against $lib"; exit 1; }
done

if ! LD_LIBRARY_PATH=$tmp/old "$tmp/prog-no-inline" >"$tmp/run.log" 2>&1 ||
   ! grep -q '^old wake$' "$tmp/run.log"; then
	cat "$tmp/run.log"
	echo "FAIL: the control (SWAIT_NO_INLINE) did not run on the stand-in"
	exit 1
fi
echo "ok:   built with SWAIT_NO_INLINE, it runs on an older library"

if LD_LIBRARY_PATH=$tmp/old "$tmp/prog-inline" >"$tmp/run.log" 2>&1; then
	cat "$tmp/run.log"
	echo "FAIL: built with the inline wake, it ran on a library without SWAIT_0.8"
	exit 1
fi
if ! grep -q "version .SWAIT_0\.8' not found" "$tmp/run.log"; then
	cat "$tmp/run.log"
	echo "FAIL: it did not start, but the loader did not name SWAIT_0.8"
	exit 1
fi
echo "ok:   built with the inline wake, the loader refuses it: $(head -n 1 "$tmp/run.log")"
