#!/usr/bin/env bash
# The Python float64 references (python/kprop/references.py), which `kprop repro` writes
# into its scripts, are held to the C++ oracles by kprop itself: each is registered as
# pyref::<kernel> and checked in float64 against the C++ reference, every option the
# kernel's schema draws, within float64's derived bounds.
#   test_references.sh PYTHON PYTHON_DIR SOURCE_DIR
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
. "$(dirname "$0")/python_entry.sh" "$1" "$2" "$3"

kernels=$("$1" -c "from kprop.references import REFERENCES; print(' '.join(REFERENCES))")
[ -n "$kernels" ] || fail "no references listed"
for kernel in $kernels; do
  expect 0 "PASS: no new counterexample in 60 cases" "${py[@]}" check "$kernel" --impl "pyref::$kernel" \
    --import pyref_ops --dtype float64 --property vs_reference --cases 60 --seed 1 --no-corpus
done
finish
