#!/bin/sh
# SPDX-License-Identifier: MIT
#
# with-preload.sh SWAIT_RUN PRELOAD [--stats] PROGRAM [ARGS...] - run a
# test program of this build under libswait-preload.so, as swait-run does.
#
# Natively (and i686 on an x86-64 kernel, which meson runs without its
# wrapper) that is swait-run itself.  Under an emulator it cannot be:
# meson then sets MESON_EXE_WRAPPER (qemu-user from the cross file: armhf,
# arm64, i686 with cross/qemu-i386.ini); swait-run cannot exec a target
# binary without binfmt_misc, and given the emulator to run, its
# LD_PRELOAD would reach qemu, a host program, whose ld.so refuses the
# target's library with an error on stderr, the stats line's stream.  So
# the emulator runs PROGRAM and LD_PRELOAD is set in its guest's
# environment only (qemu's -E); the rest of the environment,
# SWAIT_PRELOAD_STATS included, reaches the guest as it is.
set -eu
run=$1
lib=$2
shift 2
stats=
if [ "${1-}" = --stats ]; then
	stats=--stats
	shift
fi
if [ -z "${MESON_EXE_WRAPPER-}" ]; then
	exec "$run" $stats "$@"
fi
case $MESON_EXE_WRAPPER in
qemu-*|*/qemu-*) ;;
*)
	echo "with-preload: the exe wrapper ($MESON_EXE_WRAPPER) is not qemu-user: no way to preload into its guest alone"
	exit 77
	;;
esac
case $lib in
*,*)
	echo "with-preload: $lib has a comma, which qemu's -E reads as a separator"
	exit 77
	;;
esac
if [ -n "$stats" ]; then
	SWAIT_PRELOAD_STATS=1
	export SWAIT_PRELOAD_STATS
fi
# MESON_EXE_WRAPPER is a command line ("qemu-arm -L /"): split on purpose.
exec $MESON_EXE_WRAPPER -E "LD_PRELOAD=$lib" "$@"
