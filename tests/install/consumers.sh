#!/bin/sh
# SPDX-License-Identifier: MIT
#
# consumers.sh SRCDIR MESON
#
# Install libswait into a temporary prefix and prove that programs find and
# use it the ways users do:
#   1. cc $(pkg-config --cflags --libs swait)            shared, C and C++
#   2. cc -static $(pkg-config --static --cflags --libs)  no libswait.so
#   3. a Meson project, libswait as a subproject   (override_dependency)
#   4. the same Meson project, libswait installed  (pkg-config)
#   5. a CMake project, find_package(swait)        (swait::swait, _static),
#      from the prefix moved elsewhere (the config is relocatable)
#   6. race-free programs (README's first example among them) under
#      Helgrind and DRD, default options, against the default install
#      (annotations on wherever Valgrind's headers are)
#   7. strict ISO C and C++: the public headers with no feature test macro,
#      -std=c99/c11/c17 -pedantic-errors and C++11 to C++23 (pkg-config),
#      C_EXTENSIONS OFF (CMake, in 5)
#   8. ThreadSanitizer: consumers built with -fsanitize=thread against the
#      default (uninstrumented) install report nothing; the same binary
#      against a library without the TSan calls must report races
#   9. README's first example with README's own commands for a prefix of
#      one's own: PKG_CONFIG_PATH and an rpath, no LD_LIBRARY_PATH
# Each consumer (tests/install/consumers/) sleeps on a head until another
# thread wakes it, then waits on a completion.
#
# The library is configured afresh from SRCDIR (tests, examples, bench and
# docs off) rather than installed from the calling build directory: that one
# may be a sanitizer, race-window or mutant build, whose library a plain
# consumer cannot link or should not trust.  Takes a few seconds.
#
# SWAIT_KEEP_TMP=1 keeps the temporary directory for a look afterwards.
#
# Exits 0 when every step passed, 1 on the first failure (with the step's
# log), 77 (skip) when every step that ran passed but cmake or a C++
# compiler was missing.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 SRCDIR MESON" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
meson=$2
cons=$src/tests/install/consumers
# Tool output (readelf's labels, sort order) must not depend on the locale.
LC_ALL=C
export LC_ALL
CC=${CC:-cc}
CXX=${CXX:-c++}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/swait-install.XXXXXX")
if [ -n "${SWAIT_KEEP_TMP:-}" ]; then
	trap 'echo "kept $tmp"' EXIT	# for debugging a failure by hand
else
	trap 'rm -rf "$tmp"' EXIT
fi
trap 'exit 1' HUP INT TERM
prefix=$tmp/prefix
log=$tmp/step.log
skipped=""

# step WHAT CMD...: run CMD with its output in $log; on failure say what
# failed, show the command and the end of its output, and stop.
step() {
	what=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		echo "FAIL: $what" >&2
		echo "  command: $*" >&2
		tail -n 40 "$log" | sed 's/^/  | /' >&2
		exit 1
	fi
	echo "ok:   $what"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	skipped="$skipped
  $*"
}

# needs_libswait_so BINARY: whether BINARY has libswait.so in DT_NEEDED.
needs_libswait_so() {
	readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*\[libswait\.so'
}

# run_linked WHAT BINARY: BINARY needs libswait.so.0, the loader finds the
# one in the prefix, and it runs.
run_linked() {
	needs_libswait_so "$2" || fail "$1: $2 does not link libswait.so"
	found=$(LD_LIBRARY_PATH=$libdir ldd "$2" |
		sed -n 's/.*libswait\.so\.0 => \([^ ]*\).*/\1/p')
	case $found in
	"$libdir"/*) ;;
	*) fail "$1: the loader found libswait.so.0 at '$found', not in $libdir" ;;
	esac
	step "$1: runs" env LD_LIBRARY_PATH="$libdir" "$2"
}

# run_static WHAT BINARY: BINARY does not need libswait.so, and runs.
run_static() {
	needs_libswait_so "$2" && fail "$1: $2 still needs libswait.so"
	nm "$2" | grep -q ' T swait_wake_one$' ||
		fail "$1: $2 does not contain libswait's code"
	step "$1: runs without libswait.so" env LD_LIBRARY_PATH= "$2"
}

have_cxx=false
if command -v "$CXX" >/dev/null 2>&1; then
	have_cxx=true
fi

# --- the library, installed into $prefix --------------------------------
step "configure libswait with --prefix=$prefix" \
	"$meson" setup "$tmp/lib-build" "$src" --prefix="$prefix" \
	-Dtests=disabled -Dbench=disabled -Dexamples=disabled -Ddocs=disabled
step "build libswait" ninja -C "$tmp/lib-build"
step "meson install" "$meson" install -C "$tmp/lib-build" --no-rebuild

pc=$(find "$prefix" -name swait.pc)
[ -n "$pc" ] || fail "meson install installed no swait.pc under $prefix"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in "$prefix/include/swait.h" "$prefix/include/swait/cond.h" \
	 "$libdir/libswait.so" \
	 "$libdir/libswait.so.0" "$libdir/libswait.a" \
	 "$libdir/cmake/swait/swaitConfig.cmake" \
	 "$libdir/cmake/swait/swaitConfigVersion.cmake"; do
	[ -e "$f" ] || fail "meson install did not install $f"
done
echo "ok:   installed header, libraries, swait.pc and the CMake config"

PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR 2>/dev/null || true
cd "$tmp"

# --- 1, 2: pkg-config ---------------------------------------------------
cflags=$(pkg-config --cflags swait) || fail "pkg-config --cflags swait"
libs=$(pkg-config --libs swait) || fail "pkg-config --libs swait"
slibs=$(pkg-config --static --libs swait) ||
	fail "pkg-config --static --libs swait"
case "$cflags $libs" in
*"$prefix"*) ;;
*) fail "pkg-config found a swait.pc outside $prefix: $cflags $libs" ;;
esac

# shellcheck disable=SC2086 # word splitting of pkg-config output intended
step "pkg-config: cc consumer.c (shared)" \
	"$CC" -std=c11 -Wall -Wextra -pedantic-errors -Werror -pthread \
	-o consumer-pc "$cons/consumer.c" $cflags $libs
run_linked "pkg-config shared" ./consumer-pc

# --- 7: strict ISO C and C++, no feature test macro ---------------------
# strict.c defines none; <swait.h> must supply what it uses of POSIX.
# <swait/kernel.h> is for kernel code, which is GNU C (-std=gnu11, empty
# structs, statement expressions): it is checked in the gnu modes without
# -pedantic, and in C++ (it also calls clock_gettime(), which strict ISO C
# hides).
for std in c99 c11 c17; do
	# shellcheck disable=SC2086
	step "strict: cc -std=$std -pedantic-errors strict.c" \
		"$CC" -std=$std -Wall -Wextra -pedantic-errors -Werror -pthread \
		-o strict-$std "$cons/strict.c" $cflags $libs
	run_linked "strict $std" ./strict-$std
done
printf '#include <swait/kernel.h>\nint main(void) { return 0; }\n' > kernel.c
for std in gnu99 gnu11 gnu17; do
	# shellcheck disable=SC2086
	step "gnu: cc -std=$std <swait/kernel.h>" \
		"$CC" -std=$std -Wall -Wextra -Werror -fsyntax-only kernel.c \
		$cflags
done
if $have_cxx; then
	for std in c++11 c++14 c++17 c++20 c++23; do
		# shellcheck disable=SC2086
		step "strict: c++ -std=$std -pedantic-errors strict.c" \
			"$CXX" -std=$std -Wall -Wextra -pedantic-errors -Werror \
			-pthread -o strict-$std -x c++ "$cons/strict.c" \
			-x none $cflags $libs
		run_linked "strict $std" ./strict-$std
		# shellcheck disable=SC2086
		step "c++ -std=$std <swait/kernel.h>" \
			"$CXX" -std=$std -Wall -Wextra -Werror -fsyntax-only \
			-x c++ kernel.c $cflags
	done
fi

# -static links everything statically, so the link proves that
# pkg-config --static names all that libswait.a needs.
# shellcheck disable=SC2086
step "pkg-config: cc consumer_cond.c (<swait/cond.h>)" \
	"$CC" -std=c11 -Wall -Wextra -pedantic-errors -Werror -pthread \
	-o consumer-cond "$cons/consumer_cond.c" $cflags $libs
run_linked "pkg-config condvar face" ./consumer-cond

# The preload and its launcher, installed: an unmodified pthread program
# runs under the installed swait-run, whose stats line shows its waits ran
# on libswait (the installed preload finds libswait.so by its runpath).
if [ -e "$libdir/libswait-preload.so" ]; then
	[ -x "$prefix/bin/swait-run" ] ||
		fail "meson install installed the preload but not bin/swait-run"
	step "cc consumer_cond.c -DUSE_PTHREAD (plain pthread)" \
		"$CC" -std=c11 -Wall -Wextra -Werror -pthread -DUSE_PTHREAD \
		-o consumer-pthread "$cons/consumer_cond.c"
	step "swait-run --stats ./consumer-pthread" \
		sh -c "env -u LD_LIBRARY_PATH '$prefix/bin/swait-run' --stats ./consumer-pthread 2> stats.txt"
	grep -q '^swait-preload: pid [0-9]*: [1-9][0-9]* waits' stats.txt ||
		fail "swait-run: no waits on libswait: $(cat stats.txt)"
	echo "ok:   $(cat stats.txt)"
else
	skip "no libswait-preload.so on this CPU (preload/meson.build)"
fi

step "pkg-config --static: cc -static consumer.c" \
	"$CC" -std=c11 -Wall -Wextra -pedantic-errors -Werror -static \
	-o consumer-static "$cons/consumer.c" $cflags $slibs
run_static "pkg-config static" ./consumer-static

# --- 6: Helgrind and DRD on a race-free consumer, default install -------
# The library's annotations are in by default wherever <valgrind/*.h> was
# found at build time, so a clean program must stay clean: any report
# fails, and one with a libswait frame is the library's.
if command -v valgrind >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	step "pkg-config: cc consumer_vg.c" \
		"$CC" -std=c11 -Wall -Wextra -pedantic-errors -Werror -pthread \
		-g -o consumer-vg "$cons/consumer_vg.c" $cflags $libs
	# shellcheck disable=SC2086
	step "pkg-config: cc examples/first.c (README's first example)" \
		"$CC" -std=c11 -Wall -Wextra -pedantic-errors -Werror -pthread \
		-g -o first-vg "$src/examples/first.c" $cflags $libs
	for prog in consumer-vg first-vg; do
		for tool in helgrind drd; do
			if ! env LD_LIBRARY_PATH="$libdir" valgrind --tool=$tool \
				--error-exitcode=66 ./$prog >"$log" 2>&1; then
				if grep -q 'libswait' "$log"; then
					echo "FAIL: $tool reports from inside libswait:" >&2
				else
					echo "FAIL: $tool reports on $prog:" >&2
				fi
				sed 's/^/  | /' "$log" | tail -n 60 >&2
				exit 1
			fi
			echo "ok:   $tool: no report on $prog (default install)"
		done
	done
else
	skip "Helgrind/DRD consumer: valgrind not found"
fi

# --- 8: ThreadSanitizer consumers of the default install ----------------
# Built with -fsanitize=thread against the installed, uninstrumented
# library: TSan sees none of its atomics, only the __tsan_release/
# __tsan_acquire calls the library makes when the program brought the TSan
# runtime (lib/annotate.h).  consumer_tsan.c hands plain data over by
# completions and swait_wait_any alone; consumer_vg.c keeps its state under
# a mutex (swait_event_mutex) and completes a completion on main's stack;
# first.c is README's example.  Any report fails.
# tsan_run WHAT BINARY LIBDIR: BINARY against LIBDIR's libswait.so.0; the
# report, if any, is left in $log.
tsan_run() {
	env LD_LIBRARY_PATH="$3" TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
		"$2" >"$log" 2>&1
}
printf 'int main(void) { return 0; }\n' > tsan-probe.c
if "$CC" -fsanitize=thread -o tsan-probe tsan-probe.c >/dev/null 2>&1 &&
	./tsan-probe >/dev/null 2>&1; then
	for prog in "$cons/consumer_tsan.c" "$cons/consumer_vg.c" \
		    "$src/examples/first.c"; do
		name=$(basename "$prog" .c)
		# shellcheck disable=SC2086
		step "tsan: cc -fsanitize=thread $name.c" \
			"$CC" -std=c11 -Wall -Wextra -Werror -pthread -g -O1 \
			-fsanitize=thread -o "tsan-$name" "$prog" $cflags $libs
		if ! tsan_run "$name" "./tsan-$name" "$libdir" ||
			grep -q 'ThreadSanitizer' "$log"; then
			echo "FAIL: ThreadSanitizer reports on $name.c against the default install:" >&2
			sed 's/^/  | /' "$log" | tail -n 60 >&2
			exit 1
		fi
		echo "ok:   tsan: no report on $name.c (default install)"
	done
	# The control: the same consumer_tsan binary, with the library built
	# without the TSan calls, must be reported (else the test above
	# proves nothing).
	step "tsan control: libswait without the TSan calls" \
		"$meson" configure "$tmp/lib-build" -Dc_args=-DSWAIT_TSAN_HOOKS=0
	step "tsan control: build" ninja -C "$tmp/lib-build"
	if tsan_run consumer_tsan ./tsan-consumer_tsan "$tmp/lib-build/lib" ||
		! grep -q 'WARNING: ThreadSanitizer: data race' "$log"; then
		echo "FAIL: tsan control: no race reported without the library's TSan calls:" >&2
		sed 's/^/  | /' "$log" | tail -n 30 >&2
		exit 1
	fi
	echo "ok:   tsan control: $(grep -c 'WARNING: ThreadSanitizer' "$log") races reported without the TSan calls"
	step "tsan control: back to the default library" \
		"$meson" configure "$tmp/lib-build" -Dc_args=
	step "tsan control: rebuild" ninja -C "$tmp/lib-build"
else
	skip "ThreadSanitizer consumers: $CC -fsanitize=thread does not build or run (Debian: libtsan in gcc)"
fi

if $have_cxx; then
	# shellcheck disable=SC2086
	step "pkg-config: c++ -std=c++11 consumer.cpp" \
		"$CXX" -std=c++11 -Wall -Wextra -pedantic-errors -Werror \
		-pthread -o consumer-cxx "$cons/consumer.cpp" $cflags $libs
	run_linked "pkg-config C++" ./consumer-cxx
else
	skip "C++ consumers: no C++ compiler ($CXX)"
fi

# --- 3, 4: Meson --------------------------------------------------------
# meson_project DIR: the consumer project, laid out in DIR.
meson_project() {
	mkdir -p "$1"
	cp "$cons/meson/meson.build" "$cons/consumer.c" "$cons/consumer.cpp" "$1"
}

# Subproject: subprojects/swait is a symlink to the source tree, made here
# so that the repository holds no link to itself.  --force-fallback-for
# makes Meson use it even where a libswait is installed system-wide.
meson_project "$tmp/msub"
mkdir "$tmp/msub/subprojects"
ln -s "$src" "$tmp/msub/subprojects/swait"
step "meson subproject: configure" \
	"$meson" setup "$tmp/msub-build" "$tmp/msub" --force-fallback-for=swait \
	-Dswait:tests=disabled -Dswait:bench=disabled \
	-Dswait:examples=disabled -Dswait:docs=disabled
step "meson subproject: build" ninja -C "$tmp/msub-build"
[ -e "$tmp/msub-build/subprojects/swait/lib/libswait.so.0" ] ||
	fail "meson subproject: libswait was not built as a subproject"
# The build rpath points at the subproject's library: no LD_LIBRARY_PATH.
step "meson subproject: consumer runs" env LD_LIBRARY_PATH= \
	"$tmp/msub-build/consumer"
if $have_cxx; then
	[ -x "$tmp/msub-build/consumer-cxx" ] ||
		fail "meson subproject: consumer-cxx was not built"
	step "meson subproject: consumer-cxx runs" env LD_LIBRARY_PATH= \
		"$tmp/msub-build/consumer-cxx"
fi

# Installed: no subprojects/ and no fallback, so dependency('swait') can
# only come from the swait.pc in the prefix.
meson_project "$tmp/minst"
step "meson installed dependency: configure" \
	"$meson" setup "$tmp/minst-build" "$tmp/minst" --wrap-mode=nofallback
step "meson installed dependency: build" ninja -C "$tmp/minst-build"
grep -q -- "-I$prefix/include" "$tmp/minst-build/build.ninja" ||
	fail "meson installed dependency: swait.pc in $prefix was not used"
run_linked "meson installed dependency" "$tmp/minst-build/consumer"
if $have_cxx; then
	run_linked "meson installed dependency C++" \
		"$tmp/minst-build/consumer-cxx"
fi

# --- 9: README's first example, README's commands for a prefix of one's own
# The library's build reconfigured as README says (prefix, libdir=lib),
# installed, and the example built with PKG_CONFIG_PATH and the rpath
# README prints; it runs with no LD_LIBRARY_PATH.
home=$tmp/home
step "README: meson configure -Dprefix=\$HOME/swait -Dlibdir=lib" \
	"$meson" configure "$tmp/lib-build" -Dprefix="$home/swait" -Dlibdir=lib
step "README: meson install" "$meson" install -C "$tmp/lib-build"
cp "$src/examples/first.c" example.c
step "README: cc example.c with PKG_CONFIG_PATH and -Wl,-rpath" \
	env PKG_CONFIG_PATH="$home/swait/lib/pkgconfig" sh -c \
	'cc example.c -o example $(pkg-config --cflags --libs swait) -Wl,-rpath,$(pkg-config --variable=libdir swait)'
step "README: ./example prints worker: go" \
	sh -c "env -u LD_LIBRARY_PATH ./example | grep -qx 'worker: go'"
found=$(env -u LD_LIBRARY_PATH ldd ./example |
	sed -n 's/.*libswait\.so\.0 => \([^ ]*\).*/\1/p')
[ "$found" = "$home/swait/lib/libswait.so.0" ] ||
	fail "README: the example found libswait.so.0 at '$found'"
echo "ok:   README: the example runs on $found"

# --- 5: CMake -----------------------------------------------------------
# The package config computes its paths from its own location, so it must
# work from a moved prefix (a packager's DESTDIR staging tree).  swait.pc
# holds absolute paths, which is why this comes last.
mv "$prefix" "$tmp/moved"
prefix=$tmp/moved
libdir=$prefix${libdir#"$tmp/prefix"}
if command -v cmake >/dev/null 2>&1; then
	mkdir "$tmp/cm"
	cp "$cons/cmake/CMakeLists.txt" "$cons/consumer.c" \
		"$cons/consumer.cpp" "$cons/strict.c" "$tmp/cm"
	cp "$cons/strict.c" "$tmp/cm/strict.cpp"
	step "cmake: configure with find_package(swait)" \
		cmake -S "$tmp/cm" -B "$tmp/cm-build" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
	grep -q "swait [0-9.]* from $libdir/cmake/swait" "$log" ||
		fail "cmake: swait was not found in $libdir/cmake/swait:
$(cat "$log")"
	step "cmake: build" cmake --build "$tmp/cm-build"
	run_linked "cmake swait::swait" "$tmp/cm-build/consumer"
	run_static "cmake swait::swait_static" "$tmp/cm-build/consumer-static"
	# C_EXTENSIONS OFF: CMake must have said -std=c99, not -std=gnu99.
	grep -q -- '-std=c99' "$tmp/cm-build/CMakeFiles/strict-c99.dir/flags.make" ||
		fail "cmake: strict-c99 was not built with -std=c99"
	for std in 99 11 17; do
		run_linked "cmake strict C$std, C_EXTENSIONS OFF" \
			"$tmp/cm-build/strict-c$std"
	done
	if $have_cxx; then
		run_linked "cmake C++" "$tmp/cm-build/consumer-cxx"
		for std in 11 14 17 20 23; do
			run_linked "cmake strict C++$std, CXX_EXTENSIONS OFF" \
				"$tmp/cm-build/strict-cxx$std"
		done
	fi
else
	skip "CMake consumer: cmake not found (apt-get install cmake)"
fi

if [ -n "$skipped" ]; then
	echo "every step that ran passed; skipped:$skipped"
	exit 77
fi
echo "all consumers built and ran"
