#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Regenerate abi/libswait.so.0.abi, the ABI baseline that the 'abi' test
# suite (tests/abigail) compares every build against.
#
#   abi/update.sh              describe the library built from the work tree
#   abi/update.sh --ref v0.2.0 describe the library built from a git ref
#   abi/update.sh BUILDDIR     describe BUILDDIR/lib/libswait.so.0 as it is
#
# Run it only for a deliberate ABI change or a release, and commit the new
# baseline together with the change that needs it (see abi/README.md).  The
# library is built in a scratch directory with the default buildtype
# (debugoptimized: abidw needs the -g debug information) and none of the
# testing-only options, so the baseline describes what users install.
#
# Needs: abidw (Debian: abigail-tools), meson, ninja, and git for --ref.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
soname=libswait.so.0
out="$here/$soname.abi"

# The flags must match tests/abigail/abidiff-check.sh: only types reachable
# from include/ are described, and no build paths end up in the file.
describe() {	# describe LIBRARY HEADERS-DIR
	abidw --headers-dir "$2" --drop-private-types \
	      --no-corpus-path --no-comp-dir-path --short-locs \
	      --out-file "$out" "$1"
	echo "wrote $out from $1"
}

scratch_build() {	# scratch_build SOURCE-DIR -> prints the build dir
	b=$(mktemp -d "${TMPDIR:-/tmp}/swait-abi.XXXXXX")
	meson setup "$b" "$1" -Dtests=disabled -Dbench=disabled \
		-Dexamples=disabled -Ddocs=disabled >"$b.log" 2>&1 ||
		{ cat "$b.log" >&2; exit 1; }
	ninja -C "$b" >>"$b.log" 2>&1 || { cat "$b.log" >&2; exit 1; }
	rm -f "$b.log"
	echo "$b"
}

case "${1:-}" in
--ref)
	ref=${2:?usage: $0 --ref GIT-REF}
	src=$(mktemp -d "${TMPDIR:-/tmp}/swait-abi-src.XXXXXX")
	git -C "$top" archive "$ref" | tar -x -C "$src"
	b=$(scratch_build "$src")
	describe "$b/lib/$soname" "$src/include"
	rm -rf "$b" "$src"
	;;
-h|--help)
	sed -n '3,17p' "$0"
	;;
'')
	b=$(scratch_build "$top")
	describe "$b/lib/$soname" "$top/include"
	rm -rf "$b"
	;;
*)
	[ -e "$1/lib/$soname" ] || { echo "$0: no $1/lib/$soname" >&2; exit 1; }
	describe "$1/lib/$soname" "$top/include"
	;;
esac
