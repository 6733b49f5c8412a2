#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-readme.sh README EXAMPLE: the first ```c block of README's
# "## A complete example" section is EXAMPLE, less EXAMPLE's leading //
# comment lines.  The example suite builds and runs EXAMPLE, and the
# install suite builds it against the installed library, under Helgrind,
# DRD and ThreadSanitizer: so the README's copy is what those check.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 README EXAMPLE" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/swait-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk '/^## A complete example/ { sec = 1; next }
     sec && /^## / { exit }
     sec && !blk && /^```c$/ { blk = 1; next }
     blk && /^```$/ { exit }
     blk { print }' "$1" > "$tmp/readme.c"
awk 'head && /^\/\// { next } { head = 0; print }' head=1 "$2" > "$tmp/example.c"
[ -s "$tmp/readme.c" ] || { echo "no \`\`\`c block under '## A complete example' in $1" >&2; exit 1; }
if ! diff -u "$tmp/readme.c" "$tmp/example.c" >&2; then
	echo "README.md's first example and $2 differ (above): keep them in step" >&2
	exit 1
fi
echo "README.md's first example is $2"
