#!/usr/bin/env bash
# Runs one bad-input case (a *.case file) against the scin binary:
#   run_case.sh SCIN CASE
# A case file holds comment lines (#) and:
#   setup: ARGS   optional scin command lines run first (must succeed), repeatable
#   args:  ARGS   the command line under test (shell quoting, e.g. --algo ",")
#   error: TEXT   the one line expected on stderr after "scin: error: "
# @DIR@ is this folder (input files live in files/), @TMP@ a fresh temporary
# folder that is also the working directory. The command must exit with status 2
# (a bad-input error: not a crash, not an internal error), print exactly one line
# and nothing on stdout, within 60 s.
set -u
scin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
case_file=$2
dir=$(cd "$(dirname "$case_file")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
subst() { local s=${1//@DIR@/$dir}; printf '%s' "${s//@TMP@/$tmp}"; }

expect=$(subst "$(sed -n 's/^error: //p' "$case_file")")
args=$(subst "$(sed -n 's/^args: //p' "$case_file")")
[ -n "$args" ] && [ -n "$expect" ] || { echo "$case_file: needs an 'args:' and an 'error:' line"; exit 1; }

while IFS= read -r setup; do
  eval "set -- $(subst "$setup")"
  if ! (cd "$tmp" && timeout 120 "$scin" "$@" >/dev/null 2>&1 </dev/null); then
    echo "setup failed: scin $(subst "$setup")"; exit 1
  fi
done < <(sed -n 's/^setup: //p' "$case_file")

eval "set -- $args"
out=$(cd "$tmp" && timeout 60 "$scin" "$@" 2>"$tmp/.stderr" </dev/null)
status=$?
err=$(cat "$tmp/.stderr")
fail=0
[ "$status" -eq 2 ] || { echo "exit status $status, expected 2 (bad input)"; fail=1; }
[ -z "$out" ] || { echo "unexpected stdout (input must be validated before any output):"; echo "$out" | head -5; fail=1; }
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "expected one line on stderr, got:"; echo "$err" | head -5; fail=1; }
[ "$err" = "scin: error: $expect" ] || { printf 'expected: scin: error: %s\n     got: %s\n' "$expect" "$err"; fail=1; }
[ $fail -eq 0 ] && echo "ok: scin $args"
exit $fail
