#!/bin/sh
# SPDX-License-Identifier: MIT
#
# abi-time.sh SWAIT_RUN PRELOAD PROGRAM - PROGRAM (abi-time.c) under
# swait-run --stats.  Its own checks must pass, and the preload's stats
# line must count every timed wait and every signal it made on libswait,
# and the one condvar it handed to glibc: W, S and F equal the numbers it
# prints, so each entry it bound ran on libswait, none on glibc.  (A preload without the ABI's own timedwait or clockwait still
# passes the program's checks, glibc's being correct, and fails here.)
set -eu
here=$(dirname "$0")
. "$here/run-stats.sh"
run_stats abi-time "$1" "$2" "$3"

stats='^swait-preload: pid [0-9]*: [0-9]* waits, [0-9]* signals, [0-9]* broadcasts, [0-9]* fallback$'
n=$(grep -c "$stats" "$dir/err" || true)
if [ "$n" != 1 ]; then
	echo "abi-time: expected one swait-preload line on stderr, got $n:" >&2
	cat "$dir/err" >&2
	exit 1
fi
line=$(grep "$stats" "$dir/err")
w=$(echo "$line" | sed 's/.*: \([0-9]*\) waits, .*/\1/')
s=$(echo "$line" | sed 's/.* waits, \([0-9]*\) signals, .*/\1/')
f=$(echo "$line" | sed 's/.* broadcasts, \([0-9]*\) fallback$/\1/')
made='^abi-time: [0-9]* timed waits, [0-9]* signals, [0-9]* fallback$'
if ! grep -q "$made" "$dir/out"; then
	echo "abi-time: the program did not say how many waits it made" >&2
	exit 1
fi
want_w=$(grep "$made" "$dir/out" | sed 's/^abi-time: \([0-9]*\) .*/\1/')
want_s=$(grep "$made" "$dir/out" | sed 's/.* waits, \([0-9]*\) signals, .*/\1/')
want_f=$(grep "$made" "$dir/out" | sed 's/.* signals, \([0-9]*\) fallback$/\1/')
echo "$line"
if [ "$w" != "$want_w" ] || [ "$s" != "$want_s" ] || [ "$f" != "$want_f" ]; then
	echo "abi-time: the preload counted $w waits, $s signals, $f fallback;" \
		"the program made $want_w, $want_s, $want_f" >&2
	exit 1
fi
echo "abi-time: all $w waits and $s signals ran on libswait, $f condvar on glibc"
