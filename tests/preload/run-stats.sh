# SPDX-License-Identifier: MIT
#
# Sourced by abi-time.sh and pshared.sh (which set here, their directory):
# run_stats NAME SWAIT_RUN PRELOAD PROGRAM runs PROGRAM under the preload
# with --stats (with-preload.sh), shows its stdout and keeps it in
# $dir/out, its stderr (where the stats lines go) in $dir/err; exits 77
# if the program skipped, and 1, with its stderr, if it failed.
run_stats() {
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	rc=0
	"$here/with-preload.sh" "$2" "$3" --stats "$4" \
		>"$dir/out" 2>"$dir/err" || rc=$?
	cat "$dir/out"
	[ "$rc" != 77 ] || exit 77
	if [ "$rc" != 0 ]; then
		cat "$dir/err" >&2
		echo "$1: the program failed (status $rc)" >&2
		exit 1
	fi
}
