#!/usr/bin/env bash
# Installs kprop's Debian packages, configures and builds it, then runs the main job on
# the built-in default: `kprop check causal_conv1d` (kprop's tiled kernel, 1000 cases
# over every property), which prints a summary and exits 0 when nothing fails.
#
#   scripts/setup.sh            install + build + main job
#   KPROP_JOBS=N scripts/setup.sh   build with N jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

packages=(
  build-essential cmake ninja-build ccache
  libtorch-dev librapidcheck-dev libgtest-dev googletest
  libcli11-dev nlohmann-json3-dev libfmt-dev
  clang-14 libclang-rt-14-dev
  python3-torch python3-dev pybind11-dev
  python3-pytest python3-venv python3-setuptools python3-wheel
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

echo "== configuring and building"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"${KPROP_JOBS:-$(nproc)}"

echo "== main job: kprop check causal_conv1d"
./build/kprop check causal_conv1d
