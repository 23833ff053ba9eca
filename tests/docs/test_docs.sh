#!/usr/bin/env bash
# The docs check (check_docs.py) on kprop's own README.md and docs/, and on a fixture page
# that holds one of each thing it must catch, so that a check which passes everything
# fails here.
#   test_docs.sh KPROP SOURCE_DIR [PYTHON PYTHON_DIR]
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"
here=$(cd "$(dirname "$0")" && pwd)
check=("${3:-python3}" "$here/check_docs.py" "$1")

expect 0 "[0-9]+ command lines parsed, .* in [0-9]+ Markdown files: all hold" "${check[@]}" "$2" "${@:3}"

expect 1 "[0-9]+ command lines parsed, .*: [0-9]+ problem\(s\)" "${check[@]}" "$here/fixture" "${@:3}"
also "README.md:11: kprop check causal_conv1d --max-shrinks 9: The following arguments? (was|were) not expected: .*--max-shrinks.*"
also "README.md:14: kprop check causal_conv1d --impl tiled --casez 5: The following arguments? (was|were) not expected: .*--casez.*"
[ $# -ge 4 ] && also "README.md:16: repro --outfile: not an option of python3 -m kprop repro"
also "README.md:19: kprop replay --bogus: not an option of replay"
also "README.md:21: link #no-such-heading: no heading #no-such-heading in README.md"
also "README.md:21: link docs/gone.md: no such file"
also "kprop check --shrink-seconds: in no page of README.md or docs/"
never "README.md:(7|8|9): .*"
never "README.md:21: link #a-heading: .*"
finish
