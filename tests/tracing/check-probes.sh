#!/bin/sh
# SPDX-License-Identifier: MIT
# check-probes.sh LIB: the USDT probes of lib/trace.h are in the built
# library as "stapsdt" ELF notes, provider libswait, each name present.
set -eu
lib=$1
notes=$(readelf -n "$lib") || { echo "readelf -n $lib failed"; exit 1; }
missing=""
for probe in wait_start wait_end wake wake_all lock_contended; do
	if ! printf '%s\n' "$notes" | grep -A3 'stapsdt' |
			grep -q "Provider: libswait" ||
	   ! printf '%s\n' "$notes" | grep -qx "[[:space:]]*Name: $probe"; then
		missing="$missing $probe"
	fi
done
if [ -n "$missing" ]; then
	echo "probes missing from $lib:$missing"
	printf '%s\n' "$notes" | grep -E 'Provider|Name' | head -20
	exit 1
fi
echo "all 5 libswait probes present in $lib"
