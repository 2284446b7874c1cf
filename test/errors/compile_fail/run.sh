#!/usr/bin/env bash
# test/errors/compile_fail/run.sh CXX INCLUDE_DIR [EXTRA_FLAGS...]
#
# Each *.cpp here is a launch (or a kernel) that must NOT compile. Its first line,
# "// expect: TEXT", names the static_assert text the compiler's output must contain, so a case
# passes only when it fails for its own reason. ok_control.cpp ("// expect: OK") must compile:
# it proves the harness itself (compiler, flags, include path) works. CXX may be several words
# ("ccache c++"). Prints one line per case; exits non-zero if any case is wrong.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 CXX INCLUDE_DIR [EXTRA_FLAGS...]" >&2
  exit 2
fi
read -r -a cxx <<<"$1"
inc=$2
shift 2
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
cases=0
for src in "$dir"/*.cpp; do
  name=$(basename "$src")
  first=$(head -n 1 "$src")
  case "$first" in
    "// expect: "*) expect=${first#// expect: } ;;
    *) echo "FAIL $name: its first line must be '// expect: TEXT'"; status=1; continue ;;
  esac
  cases=$((cases + 1))
  out=$("${cxx[@]}" -std=c++20 -fsyntax-only -I"$inc" "$@" "$src" 2>&1)
  rc=$?
  if [ "${expect%% *}" = "OK" ]; then
    if [ $rc -eq 0 ]; then
      echo "ok   $name compiles"
    else
      echo "FAIL $name should compile:"
      echo "$out" | grep -m 5 -i "error"
      status=1
    fi
  elif [ $rc -eq 0 ]; then
    echo "FAIL $name compiled, but must not ($expect)"
    status=1
  elif grep -qF -- "$expect" <<<"$out"; then
    echo "ok   $name does not compile: $expect"
  else
    echo "FAIL $name failed to compile without saying '$expect':"
    echo "$out" | grep -m 5 -i "error"
    status=1
  fi
done
if [ $cases -lt 2 ]; then
  echo "FAIL: no cases found in $dir"
  status=1
fi
exit $status
