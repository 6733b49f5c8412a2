#!/bin/sh
# SPDX-License-Identifier: MIT
#
# pshared.sh SWAIT_RUN PRELOAD PROGRAM - pshared.c under swait-run --stats.
# Its own checks must pass, and each of its two processes must print its
# own stats line (swait-run(1)): the parent's counts the process-shared
# condvar it handed to glibc (1 fallback), and the child, forked after
# that and leaving by _exit(), starts from zero (0 fallback), with no wait
# or signal counted on libswait in either: they all ran on glibc's.
set -eu
here=$(dirname "$0")
. "$here/run-stats.sh"
run_stats pshared "$1" "$2" "$3"
stats='^swait-preload: pid [0-9]*: [0-9]* waits, [0-9]* signals, [0-9]* broadcasts, [0-9]* fallback$'
grep "$stats" "$dir/err" | sed 's/^swait-preload: pid [0-9]*: //' | sort >"$dir/lines"
printf '%s\n' '0 waits, 0 signals, 0 broadcasts, 0 fallback' \
	'0 waits, 0 signals, 0 broadcasts, 1 fallback' >"$dir/want"
pids=$(sed -n 's/^swait-preload: pid \([0-9]*\):.*/\1/p' "$dir/err" | sort -u | wc -l)
if ! cmp -s "$dir/lines" "$dir/want" || [ "$pids" != 2 ]; then
	echo "pshared: expected a parent's line with 1 fallback and a child's" \
		"from zero, of two processes; got:" >&2
	cat "$dir/err" >&2
	exit 1
fi
echo "pshared: two processes, two lines; the child's starts from zero"
