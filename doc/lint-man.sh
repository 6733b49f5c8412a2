#!/bin/sh
# SPDX-License-Identifier: MIT
#
# lint-man.sh PAGE...  -  fail on any warning in the generated man pages.
#
# A page that is only a ".so manN/target.N" link must name a page of the
# same set.  Every other page goes through each linter that is installed:
#
#   mandoc -T lint -W warning PAGE       (Debian: mandoc)
#   man --warnings -l -E UTF-8 PAGE      (man-db, with groff's warnings)
#
# and any message fails the test.  Exactly three mandoc messages are
# ignored: "skipping paragraph macro: PP empty", "... PP after SH" and
# "... PP after SS".  scdoc puts a .P before and after every heading, which
# renders the same as without them; no page source can cause or avoid them.
set -u

status=0
checked=0
for page in "$@"; do
	dir=$(dirname "$page")
	first=$(head -n 1 "$page")
	case "$first" in
	.so\ *)
		target=$(basename "${first#.so }")
		if [ "$(wc -l <"$page")" -ne 1 ] || [ ! -e "$dir/$target" ]; then
			echo "$page: bad link: '$first'" >&2
			status=1
		fi
		continue
		;;
	esac
	checked=$((checked + 1))
	if command -v mandoc >/dev/null 2>&1; then
		out=$(mandoc -T lint -W warning "$page" 2>&1 |
		      grep -v -E 'skipping paragraph macro: PP (empty|after S[HS])$')
		if [ -n "$out" ]; then
			printf '%s\n' "$out" >&2
			status=1
		fi
	fi
	if command -v man >/dev/null 2>&1; then
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 \
		      man --warnings -l -E UTF-8 "$page" 2>&1 >/dev/null)
		if [ -n "$out" ]; then
			printf '%s: man --warnings:\n%s\n' "$page" "$out" >&2
			status=1
		fi
	fi
done

if [ "$checked" -eq 0 ]; then
	echo "no pages to lint" >&2
	exit 1
fi
[ "$status" -eq 0 ] && echo "$checked pages, $(($# - checked)) links: no warnings"
exit "$status"
