#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/model/check.sh [--model FILE] [--mutant NAME] [--expect-fail[=TEXT]]
#                       [--keep DIR] [-DNAME=VALUE...]
#
# Check a spin model of the wait/wake protocol exhaustively: spin -a, cc
# pan.c, run pan, read its verdict.  The model is swait.pml (the single-head
# protocol) unless --model names another file next to this script
# (group.pml: swait_wait_any's groups; post.pml: wakes signal handlers
# post to a head's lock holder).
#
#   (no option)       the real protocol, default configuration (3 waiters,
#                     2 wakers, see swait.pml); exit 0 iff pan reports
#                     "errors: 0" after a complete search.
#   --mutant NAME     the model variant of seeded bug NAME, a name listed
#                     in tests/mutants/mutants.txt (with the model file
#                     and the violation expected): spin -DMUTANT_NAME.
#                     Without --expect-fail the verdict is the same as
#                     for the real model (exit 0 iff no error).
#   --expect-fail     invert: exit 0 iff pan reports at least one error.
#   --expect-fail=TEXT  and pan's first error line contains TEXT (which
#                     property caught it, e.g. "departed" for (b)).
#   --keep DIR        build and run in DIR and keep it (pan, the trail).
#   --model FILE      the model file (default swait.pml).
#   -DNAME=VALUE      passed to spin: model parameters (NW, NK, TIMEOUTS,
#                     SPURIOUS, RETRY, WAKES; see swait.pml).
#
# Exit: 0 as expected, 1 not as expected, 2 could not run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
model=swait.pml
mutant=
expect=pass
keep=
defs=
pattern=

usage() {
	sed -n '4,29p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--model) [ $# -ge 2 ] || usage; model=$2; shift 2 ;;
	--mutant) [ $# -ge 2 ] || usage; mutant=$2; shift 2 ;;
	--mutant=*) mutant=${1#--mutant=}; shift ;;
	--expect-fail) expect=fail; shift ;;
	--expect-fail=*) expect=fail; pattern=${1#--expect-fail=}; shift ;;
	--keep) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
	-D*) defs="$defs $1"; shift ;;
	-h|--help) usage ;;
	*) echo "check.sh: unknown argument: $1" >&2; usage ;;
	esac
done

if [ -n "$mutant" ]; then
	# The one list of seeded bugs: tests/mutants/mutants.txt.
	grep -q "^$mutant[[:space:]]*|" "$here/../mutants/mutants.txt" ||
		{ echo "check.sh: unknown mutant: $mutant" >&2; exit 2; }
	defs="$defs -DMUTANT_$(echo "$mutant" | tr '[:lower:]' '[:upper:]')"
fi

for tool in spin cc; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "check.sh: $tool not found" >&2; exit 2; }
done

if [ -n "$keep" ]; then
	mkdir -p "$keep"
	dir=$(cd "$keep" && pwd)
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/swait-model.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
	trap 'exit 2' HUP INT TERM
fi

# pan: safety properties only (assertions, invalid end states); states
# stored collapsed (lossless); a memory bound well under the machine's;
# a search depth bound far above the model's (a truncated search fails).
MEMLIM=${SWAIT_MODEL_MEMLIM:-6144}
PANFLAGS="-DSAFETY -DCOLLAPSE -DMEMLIM=$MEMLIM"

case $model in
*/*|'') echo "check.sh: --model takes a file name next to check.sh" >&2
	exit 2 ;;
esac
[ -f "$here/$model" ] || { echo "check.sh: no model $model" >&2; exit 2; }
echo "model: spin -a$defs $model"
cd "$dir"
cp "$here/$model" "$model"
# shellcheck disable=SC2086
spin -a $defs "$model" >spin.log 2>&1 ||
	{ cat spin.log; echo "check.sh: spin -a failed" >&2; exit 2; }
# A seeded bug's variant stops at its first error, usually within a few
# thousand states: there -O2 (3.3 s of cc for ~0.1 s of search) and a
# 2^26-slot hash table (0.5 s and 512 MB to clear) cost more than the
# search.  A small table only lengthens chains; the search is as complete.
# The full searches: -O3 for this very CPU (pan runs where it is built)
# searches 9 % faster than -O2 (model-enosys, 22 M states: 31.1 s -> 28.6 s
# of user time).
if [ "$expect" = fail ]; then
	opt=-O0 hash=-w20
else
	opt="-O3 -march=native" hash=-w26
fi
# shellcheck disable=SC2086
cc $opt -w $PANFLAGS -o pan pan.c >cc.log 2>&1 ||
	{ cat cc.log; echo "check.sh: cc pan.c failed" >&2; exit 2; }

start=$(date +%s)
./pan -m200000 $hash >pan.out 2>&1 || true
end=$(date +%s)

errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | tail -n 1)
if [ -z "$errors" ]; then
	cat pan.out
	echo "check.sh: no verdict from pan" >&2
	exit 2
fi
complete=yes
if grep -q -e 'Search not completed' -e 'max search depth too small' \
	-e 'out of memory' -e 'MEMLIM' pan.out; then
	complete=no
fi

grep -e '^pan:[0-9]' -e 'State-vector' -e 'states, stored' \
	-e 'transitions' -e 'elapsed time' -e 'total actual memory' \
	pan.out | sed 's/^/  /'
echo "  wall time $((end - start)) s, complete search: $complete"

if [ "$errors" -gt 0 ] && [ -f "$model.trail" ]; then
	# The counterexample, short: where every process stands at its end.
	# shellcheck disable=SC2086
	spin -t -p $defs "$model" >trail.txt 2>&1 || true
	{
		grep -e 'Error' -e 'trail ends' trail.txt
		sed -n '/^#processes/,$p' trail.txt | grep -e 'proc .*('
	} | head -n 12 | sed 's/^/  trail: /' || true
	echo "  replay: spin -t -p$defs $model (check.sh --keep DIR keeps it)"
fi

case $expect in
pass)
	if [ "$errors" -eq 0 ] && [ $complete = yes ]; then
		echo "model: PASS (errors: 0)"
		exit 0
	fi
	echo "model: FAIL (errors: $errors, complete search: $complete)"
	exit 1 ;;
fail)
	first=$(grep -m 1 '^pan:[0-9]' pan.out || true)
	if [ "$errors" -gt 0 ] && [ -n "$pattern" ] &&
	   ! printf '%s\n' "$first" | grep -qF -- "$pattern"; then
		echo "model: FAIL (caught, but not by a violation mentioning '$pattern')"
		exit 1
	fi
	if [ "$errors" -gt 0 ]; then
		echo "model: PASS (mutant caught, errors: $errors)"
		exit 0
	fi
	echo "model: FAIL (mutant not caught, complete search: $complete)"
	exit 1 ;;
esac
