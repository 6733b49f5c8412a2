#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/mutants/applies.sh: every seeded bug's patch still applies to the
# source tree exactly (no fuzz), checked in seconds by the main suite, so
# that an edit to lib/ that moves a mutant's context fails here and not an
# hour later in the mutants stage (tests/mutants/run) with "STALE".
# A dry run: the tree is not touched.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
command -v patch >/dev/null 2>&1 || { echo "applies.sh: no patch(1)"; exit 77; }
bad=0
n=0
for p in "$here"/*.patch; do
	n=$((n + 1))
	m=$(basename "$p" .patch)
	if ! out=$(patch -d "$top" -p1 -F0 --dry-run --forward --batch -s <"$p" 2>&1); then
		echo "mutant $m: its patch no longer applies exactly:"
		echo "$out" | sed 's/^/  /'
		bad=$((bad + 1))
	fi
done
echo "$n mutant patches, $bad stale"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
