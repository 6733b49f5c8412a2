#!/bin/sh
# SPDX-License-Identifier: MIT
#
# abidiff-check.sh BASELINE.abi LIBRARY HEADERS-DIR
#
# Compare the freshly built library with the release baseline (abi/).
#
# Policy: an addition (a new function, a new version node) is compatible:
# it is reported and the test passes.  Anything else that abidiff reports
# fails the test: a removed or re-versioned symbol (abidiff sets
# ABIDIFF_ABI_INCOMPATIBLE_CHANGE, 8) and any change to an existing
# function's types (abidiff sets only ABIDIFF_ABI_CHANGE, 4).  The second
# kind matters here because callers embed struct swait_head, swait_waiter
# and swait_completion in their own memory, so a size or layout change
# breaks them although libabigail cannot call it incompatible.  To tell
# the two kinds apart, the verdict comes from a second run with
# --no-added-syms: whatever it still reports is a change to what the
# baseline already exported.
#
# Exit status: 0 compatible, 1 ABI break, 99 abidiff itself failed.
set -u

base=$1 lib=$2 hdrs=$3
# The same filtering as abi/update.sh used for the baseline.
set -- --headers-dir2 "$hdrs" --drop-private-types

abidiff "$@" "$base" "$lib"
full=$?
if [ $((full & 3)) -ne 0 ]; then
	echo "abidiff failed (status $full)" >&2
	exit 99
fi
if [ "$full" -eq 0 ]; then
	echo "ABI identical to $(basename "$base")"
	exit 0
fi

abidiff "$@" --no-added-syms "$base" "$lib" >/dev/null
verdict=$?
if [ $((verdict & 3)) -ne 0 ]; then
	echo "abidiff failed (status $verdict)" >&2
	exit 99
fi
if [ $((verdict & 12)) -ne 0 ]; then
	if [ $((verdict & 8)) -ne 0 ]; then
		kind="incompatible change (removed or re-versioned symbols)"
	else
		kind="change to existing interfaces (types, sizes, layouts)"
	fi
	cat >&2 <<MSG
FAIL: $kind; abidiff status $verdict.
If the change is deliberate, follow abi/README.md: new version node or
soname bump, then abi/update.sh to regenerate the baseline.
MSG
	exit 1
fi
echo "compatible additions only (reported above); ABI kept"
exit 0
