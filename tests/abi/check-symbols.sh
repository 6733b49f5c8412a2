#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-symbols.sh LIB MAPFILE SONAME
#
# The ABI guard for the symbol table: the shared library LIB must export
# exactly the global symbols that the version script MAPFILE lists, each with
# the version of the node that lists it (name@@NODE), define exactly the
# version nodes that MAPFILE declares, and carry the soname SONAME.
#
# Fails on a symbol exported but not listed (a leak past hidden visibility),
# listed but not exported (a missing definition or export macro), exported
# without a version or with the wrong one, or a wrong soname.
#
# Uses nm and readelf from binutils ($NM and $READELF override them).
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 LIB MAPFILE SONAME" >&2
	exit 2
fi
lib=$1
map=$2
soname=$3
# Tool output (readelf's labels, sort order) must not depend on the locale.
LC_ALL=C
export LC_ALL
NM=${NM:-nm}
READELF=${READELF:-readelf}

for tool in "$NM" "$READELF"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not found (install binutils)"
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/swait-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fail=0
problem() {
	echo "FAIL: $*" >&2
	fail=1
}

# --- the version script: "node NAME" for each version node and "sym NAME
# NODE" for each global, from a small tokenizer: comments dropped, then
# "NODE {" opens a node, "global:" and "local:" switch scope, "name;" is
# a symbol and "} PARENT;" closes the node.  Wildcards and extern "C++"
# blocks are refused: the map must name every export for this comparison
# to mean anything.
awk '
{ buf = buf $0 "\n" }
END {
	while ((i = index(buf, "/*")) > 0) {
		rest = substr(buf, i + 2)
		j = index(rest, "*/")
		if (j == 0) {
			buf = substr(buf, 1, i - 1)
			break
		}
		buf = substr(buf, 1, i - 1) " " substr(rest, j + 2)
	}
	gsub(/[{};:]/, " & ", buf)
	n = split(buf, tok, /[ \t\n]+/)
	depth = 0; node = ""; scope = "global"; prev = ""
	for (k = 1; k <= n; k++) {
		t = tok[k]
		if (t == "")
			continue
		if (t == "{") {
			if (depth++ > 0) {
				print "error nested block in node " node
				continue
			}
			node = prev; scope = "global"; prev = ""
			print "node " node
		} else if (t == "}") {
			depth--; prev = ""
		} else if (t == ":") {
			if (prev == "local")
				scope = "local"
			else
				scope = "global"
			prev = ""
		} else if (t == ";") {
			if (depth > 0 && prev != "" && scope == "global")
				print "sym " prev " " node
			prev = ""
		} else {
			prev = t
		}
	}
}' "$map" > "$tmp/map.raw"

if grep '^error' "$tmp/map.raw" >&2; then
	echo "FAIL: $map has a block this check cannot compare" >&2
	exit 1
fi
if ! grep -q '^sym ' "$tmp/map.raw"; then
	echo "FAIL: no global symbols found in $map" >&2
	exit 1
fi
if grep '^sym .*[*?[]' "$tmp/map.raw" >&2; then
	echo "FAIL: $map uses a wildcard in a global: list every export by name" >&2
	exit 1
fi
awk '$1 == "sym" { print $2 "@@" $3 }' "$tmp/map.raw" | sort > "$tmp/listed.all"
awk '$1 == "node" { print $2 }' "$tmp/map.raw" | sort > "$tmp/nodes.listed"
sort -u "$tmp/listed.all" > "$tmp/listed"
dups=$(cut -d@ -f1 "$tmp/listed.all" | uniq -d)
[ -z "$dups" ] ||
	problem "listed more than once in $map: $(echo "$dups" | tr '\n' ' ')"

# --- the library's dynamic symbol table.  --with-symbol-versions makes
# older binutils print the version (newer ones always do).  Absolute (A)
# symbols are the version nodes themselves.
if ! "$NM" -D --defined-only --with-symbol-versions "$lib" > "$tmp/nm.out"; then
	echo "FAIL: $NM -D could not read $lib" >&2
	exit 1
fi
awk '$2 != "A" { print $3 }' "$tmp/nm.out" | sort > "$tmp/exported"
awk '$2 == "A" { print $3 }' "$tmp/nm.out" | sort > "$tmp/nodes.exported"

# comm -23: only in the first file; comm -13: only in the second.
comm -13 "$tmp/listed" "$tmp/exported" > "$tmp/unlisted"
comm -23 "$tmp/listed" "$tmp/exported" > "$tmp/missing"
if [ -s "$tmp/unlisted" ]; then
	problem "exported by $lib but not listed in $map with that version" \
		"(name@@NODE expected):"
	sed 's/^/    /' "$tmp/unlisted" >&2
fi
if [ -s "$tmp/missing" ]; then
	problem "listed in $map but not exported by $lib as name@@NODE:"
	sed 's/^/    /' "$tmp/missing" >&2
fi
if ! cmp -s "$tmp/nodes.listed" "$tmp/nodes.exported"; then
	problem "version nodes differ: $map declares" \
		"$(tr '\n' ' ' < "$tmp/nodes.listed")but $lib defines" \
		"$(tr '\n' ' ' < "$tmp/nodes.exported")"
fi

# --- the soname.
got=$("$READELF" -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$got" = "$soname" ] || problem "soname of $lib is '$got', expected '$soname'"

if [ "$fail" -ne 0 ]; then
	echo "The exported ABI does not match $map; see above." >&2
	exit 1
fi
echo "ok: $(wc -l < "$tmp/listed") symbols, versions" \
	"$(tr '\n' ' ' < "$tmp/nodes.listed")soname $got"
