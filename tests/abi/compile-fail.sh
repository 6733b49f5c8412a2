#!/bin/sh
# SPDX-License-Identifier: MIT
#
# compile-fail.sh LANG SRC INCDIR [FLAG...] -- COMPILER...
#
# The mutex macros' argument checks (<swait.h>, "waiting with a mutex"):
# compiles SRC (mutex-args.c) as LANG (c or c++) with -I INCDIR, the
# FLAGs and COMPILER, once per case:
#   SWAIT_CASE=0    the control; must compile with -pedantic-errors
#                   -Wall -Wextra -Werror, so that the failures below are
#                   the checks' and not a broken file or command line;
#   SWAIT_CASE=1-3  a mutex where the condition belongs, or something
#                   else where the mutex belongs; must FAIL without
#                   -Werror (an error, not a warning), and the compiler's
#                   messages must carry the check's own message.
set -u

if [ $# -lt 5 ]; then
	echo "usage: $0 LANG SRC INCDIR [FLAG...] -- COMPILER..." >&2
	exit 2
fi
lang=$1 src=$2 inc=$3
shift 3
flags=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	flags="$flags $1"
	shift
done
if [ $# -lt 2 ]; then
	echo "$0: no compiler after --" >&2
	exit 2
fi
shift

case $lang in
c)
	std=-std=c99
	# Which of SWAIT_MUTEX_ARG_CHECK's messages each case must print.
	want1='cond is a pthread_mutex_t'
	want2=$want1
	want3='mutex is not a pthread_mutex_t'
	;;
c++)
	std=-std=c++11
	want1='mutex is not a pthread_mutex_t'
	want2=$want1
	want3=$want1
	;;
*)
	echo "$0: LANG is c or c++, not '$lang'" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/swait-cfail.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fail=0
# shellcheck disable=SC2086
if "$@" -x "$lang" $std $flags -pedantic-errors -Wall -Wextra -Werror \
		-I "$inc" -DSWAIT_CASE=0 -c -o "$tmp/ok.o" "$src" \
		> "$tmp/out" 2>&1; then
	echo "ok: case 0 (the control) compiles as $lang with -Werror"
else
	echo "FAIL: case 0, the control, does not compile as $lang:" >&2
	cat "$tmp/out" >&2
	exit 1
fi

for n in 1 2 3; do
	eval "want=\$want$n"
	# The same standard in its GNU mode and no -Werror or
	# -pedantic-errors: only a hard error may stop these.
	# shellcheck disable=SC2086
	if "$@" -x "$lang" $(echo "$std" | sed 's/=c/=gnu/') $flags -Wall \
			-I "$inc" -DSWAIT_CASE=$n -c -o "$tmp/bad.o" "$src" \
			> "$tmp/out" 2>&1; then
		echo "FAIL: case $n compiled as $lang; it must not:" >&2
		cat "$tmp/out" >&2
		fail=1
	elif ! grep -q "$want" "$tmp/out"; then
		echo "FAIL: case $n failed as $lang, but not saying '$want':" >&2
		cat "$tmp/out" >&2
		fail=1
	else
		echo "ok: case $n is a compile error as $lang ('$want')"
	fi
done
exit $fail
