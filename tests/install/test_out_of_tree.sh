#!/usr/bin/env bash
# find_package(kprop) as a user meets it: kprop installed into a fresh prefix, the
# out-of-tree example (examples/out_of_tree/) configured and built against that prefix
# alone, its GoogleTest suite run (kprop's properties on its own kernel: the correct one
# passes, the planted defect is found), and its plugin checked by the installed kprop.
#   test_out_of_tree.sh CMAKE BUILD_DIR SOURCE_DIR
set -u
cmake=$1
build=$2
source_dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../checks.sh"

prefix=$tmp/prefix
run install 0 "$cmake" --install "$build" --prefix "$prefix"
for f in bin/kprop lib/libkprop.so lib/cmake/kprop/kpropConfig.cmake lib/cmake/kprop/kpropTargets.cmake \
  include/kprop/harness/engine/runner.h include/kprop/kernels/causal_conv1d/contract.h; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done

# The example's own build: only the prefix is named. ccache, when there is one, with paths
# relative to the scratch folder so that a rerun hits its cache.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$tmp CCACHE_NOHASHDIR=1
fi
run configure 0 "$cmake" -S "$source_dir/examples/out_of_tree" -B "$tmp/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}"
run build 0 "$cmake" --build "$tmp/build" -j2
run suite 0 "$tmp/build/test_mine"
line_like suite out "\[  PASSED  \] 2 tests\."

# The installed kprop loads the example's plugin, as the README says to.
plugin=(--load "$tmp/build/libmine_kernels.so")
run cli 0 "$prefix/bin/kprop" check causal_conv1d "${plugin[@]}" --impl mine::causal_conv1d --cases 100 --no-corpus
line cli out "PASS: no new counterexample in 100 cases"
run cli_buggy 1 "$prefix/bin/kprop" check causal_conv1d "${plugin[@]}" --impl mine_buggy::causal_conv1d --no-corpus
line_like cli_buggy out "defect: causal_conv1d/mine_buggy::causal_conv1d/y.*"

finish
