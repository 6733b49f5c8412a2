#!/bin/sh
# SPDX-License-Identifier: MIT
#
# programs.sh SWAIT_RUN CXX_PROGRAM - unmodified programs under swait-run:
# Debian's pigz and zstd binaries compress and decompress a corpus with
# output byte-identical to the same binary without the preload, and the
# preload's statistics line shows that their condvar waits ran on libswait
# (W > 0); then a C++20 program of std::condition_variable's uses.
# Exit 77 (skip) without pigz or zstd.
set -eu
run=$1
cxx=$2
for p in pigz zstd cmp; do
	command -v "$p" >/dev/null 2>&1 || { echo "programs: $p missing (bash .ci/deps)"; exit 77; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# A corpus of about 20 MB that compresses unevenly (so the threads' blocks finish
# out of order): text, repeated runs and incompressible bytes.
i=0
while [ $i -lt 6 ]; do
	seq 1 100000 | sed "s/^/line $i of the corpus: /"
	head -c 400000 /dev/urandom | od -An -tx1
	i=$((i + 1))
done > "$dir/corpus"
ls -l "$dir/corpus" | awk '{ print "corpus: " $5 " bytes" }'

# waits STATS_FILE: W of the one stats line, or fail.
waits() {
	lines=$(grep -c '^swait-preload: pid [0-9]*: [0-9]* waits, [0-9]* signals, [0-9]* broadcasts, [0-9]* fallback$' "$1" || true)
	if [ "$lines" != 1 ]; then
		echo "programs: expected one swait-preload line in $1, got $lines:" >&2
		cat "$1" >&2
		exit 1
	fi
	sed -n 's/^swait-preload: pid [0-9]*: \([0-9]*\) waits.*/\1/p' "$1"
}

# check NAME COMPRESS... : compress with and without the preload, compare,
# decompress the preloaded output under the preload, compare to the corpus.
check() {
	name=$1
	shift
	"$@" < "$dir/corpus" > "$dir/$name.plain"
	"$run" --stats "$@" < "$dir/corpus" > "$dir/$name.swait" 2> "$dir/$name.stats"
	cmp "$dir/$name.plain" "$dir/$name.swait"
	w=$(waits "$dir/$name.stats")
	echo "$name: output identical, $(cat "$dir/$name.stats")"
	[ "$w" -gt 0 ] || { echo "$name: no wait ran on libswait" >&2; exit 1; }
}
check pigz pigz -p 8 -c
check zstd zstd -T8 -q -c
# Decompression: pigz uses threads for its check, zstd's is single-threaded.
"$run" --stats pigz -d -c < "$dir/pigz.swait" > "$dir/pigz.out" 2> "$dir/pigz.dstats"
cmp "$dir/corpus" "$dir/pigz.out"
echo "pigz -d: round trip identical, $(cat "$dir/pigz.dstats")"
"$run" zstd -d -q -c < "$dir/zstd.swait" > "$dir/zstd.out"
cmp "$dir/corpus" "$dir/zstd.out"
echo "zstd -d: round trip identical"

# The C++20 program, under the preload.
"$run" --stats "$cxx" 2> "$dir/cxx.stats" || { cat "$dir/cxx.stats" >&2; exit 1; }
w=$(waits "$dir/cxx.stats")
echo "cxx: $(cat "$dir/cxx.stats")"
[ "$w" -gt 0 ] || { echo "cxx: no wait ran on libswait" >&2; exit 1; }

# One line per process: a shell (which leaves by _exit(), running no
# destructor) and the pigz it forks and execs each print their own.
"$run" --stats sh -c 'pigz -c < /dev/null > /dev/null; exit 0' 2> "$dir/sh.stats"
n=$(grep -c '^swait-preload: pid ' "$dir/sh.stats" || true)
pids=$(sed -n 's/^swait-preload: pid \([0-9]*\):.*/\1/p' "$dir/sh.stats" | sort -u | wc -l)
if [ "$n" != 2 ] || [ "$pids" != 2 ]; then
	echo "sh: expected two stats lines of two processes, got:" >&2
	cat "$dir/sh.stats" >&2
	exit 1
fi
echo "sh + pigz: two processes, two lines"

# The launcher's exit statuses (swait-run(1)): 2 for a usage error, 127
# without the preload, else the program's own; --help on stdout.
status() { set +e; "$@" >/dev/null 2>&1; echo $?; set -e; }
for args in "" "--bogus true" "--stats"; do
	# shellcheck disable=SC2086
	st=$(status "$run" $args)
	[ "$st" = 2 ] || { echo "swait-run $args: exit $st, not 2" >&2; exit 1; }
done
st=$(status "$run" sh -c 'exit 3')
[ "$st" = 3 ] || { echo "swait-run sh -c 'exit 3': exit $st" >&2; exit 1; }
st=$(status "$run" --stats -- sh -c 'exit 5')
[ "$st" = 5 ] || { echo "swait-run --stats -- sh -c 'exit 5': exit $st" >&2; exit 1; }
sed 's|^preload=.*|preload=/nonexistent/libswait-preload.so|' "$run" > "$dir/run-nopreload"
st=$(status sh "$dir/run-nopreload" true)
[ "$st" = 127 ] || { echo "swait-run without its preload: exit $st, not 127" >&2; exit 1; }
"$run" --help | grep -q '^usage: swait-run '
"$run" --version | grep -q '^swait-run '
echo "swait-run: exit statuses 2, 127 and the program's own"
