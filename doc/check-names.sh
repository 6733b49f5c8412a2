#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-names.sh HEADER PAGE...
#	Every public name in HEADER (<swait.h>) has a man 3 page or link
#	among PAGEs, so that a call added without documentation fails the
#	docs suite.  Public names: the functions declared at the start of a
#	line (exported calls and static inline helpers), and the swait_event*
#	and SWAIT_* macros.  Not pages of their own: the include guard,
#	SWAIT_NONNULL (an attribute helper), SWAIT_MUTEX_ARG_CHECK (the
#	mutex macros' compile-time argument check, which
#	swait_event_mutex(3) describes) and SWAIT_VERSION_*, which swait(7)
#	must mention instead.
#
# check-names.sh --mentions HEADER PAGE
#	Every public name in HEADER (<swait/kernel.h>: its inline functions
#	and upper- or lower-case macros, less the guard and the swait_kernel_*
#	and SWAIT_KERNEL_* helpers) appears in the text of PAGE.
set -u

functions() {
	grep -oE '^(static inline )?[a-z][a-z ]*[ *]\*?[a-z_][a-z0-9_]*\(' "$1" |
		grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '('
}

macros() {
	grep -oE '^#define [A-Za-z_][A-Za-z0-9_]*' "$1" | awk '{ print $2 }'
}

status=0
n=0

if [ "${1:-}" = --mentions ]; then
	header=$2 page=$3
	for name in $(functions "$header") $(macros "$header"); do
		case "$name" in
		SWAIT_KERNEL_H|swait_kernel_*|SWAIT_KERNEL_*) continue ;;
		esac
		n=$((n + 1))
		if ! grep -q "$name" "$page"; then
			echo "$(basename "$page") does not mention $name" >&2
			status=1
		fi
	done
	[ "$n" -gt 20 ] || { echo "found only $n names in $header" >&2; exit 1; }
	[ "$status" -eq 0 ] && echo "$n names of $(basename "$header"), each in $(basename "$page")"
	exit "$status"
fi

header=$1
shift
pages=$(for p in "$@"; do basename "$p"; done)
overview=
for p in "$@"; do
	case "$p" in */swait.7|swait.7) overview=$p ;; esac
done

for name in $(functions "$header") $(macros "$header"); do
	case "$name" in
	SWAIT_H|SWAIT_COND_H|SWAIT_NONNULL|swait_final_recheck) continue ;;
	# swait_wake_one()'s inline half, documented under swait_wake_one
	swait_wake_one_inline) continue ;;
	SWAIT_MUTEX_ARG_CHECK) continue ;;
	SWAIT_VERSION_*)
		n=$((n + 1))
		if [ -z "$overview" ] || ! grep -q "$name" "$overview"; then
			echo "swait(7) does not mention $name" >&2
			status=1
		fi
		continue
		;;
	swait_*|SWAIT_*) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	if ! printf '%s\n' "$pages" | grep -qx "$name\.3"; then
		echo "no man page for $name (add it to a page and doc/meson.build)" >&2
		status=1
	fi
done

# A floor that catches a parser that stopped finding names: <swait.h> has
# over 20, <swait/cond.h> 8.
min=20
case "$header" in */cond.h) min=7 ;; esac
[ "$n" -gt "$min" ] || { echo "found only $n names in $header" >&2; exit 1; }
[ "$status" -eq 0 ] && echo "$n public names, each documented"
exit "$status"
