#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of kprop's libFuzzer targets.
#
# Follows OSS-Fuzz's build.sh conventions: the compiler and flags come from $CC, $CXX,
# $CFLAGS, $CXXFLAGS and $LIB_FUZZING_ENGINE; scratch files go to $WORK; everything the
# fleet runs goes to $OUT:
#
#   $OUT/fuzz_<kernel>-<impl>            one copy of the kernel's target per implementation
#                                        (the name selects it: harness/fuzz/fuzz_target.h)
#   $OUT/fuzz_case_file                  the case-file parser
#   $OUT/<target>_seed_corpus.zip        seeds: corpus/ encoded as fuzzer inputs, or the
#                                        case files themselves for fuzz_case_file
#   $OUT/<target>.options                libFuzzer flags and sanitizer options
#   $OUT/fuzz_case_file.dict             JSON dictionary of the case-file format
#   $OUT/kprop_corpus/                   corpus/: identities the targets already know
#   $OUT/lib/                            libtorch and every other non-glibc shared library
#                                        the targets load (the runner image has none of
#                                        them); the targets find them through RPATH
#                                        $ORIGIN/lib
#
# Local test with the variables OSS-Fuzz sets (docs/clusterfuzzlite.md, "Run it
# locally"):
#   CC=clang-14 CXX=clang++-14 CFLAGS="..." CXXFLAGS="..." LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
#   SRC=/tmp/cfl-src WORK=/tmp/cfl-work OUT=/tmp/cfl-out bash .clusterfuzzlite/build.sh
#
# Optional: KPROP_SOURCE (source tree; default: the current folder if it is kprop's,
# else $SRC/kprop), KPROP_BUILD_JOBS (default: all cores), KPROP_IMPLS_<kernel>
# (space-separated implementations to ship instead of all of the kernel's).

# OSS-Fuzz runs `bash -eux build.sh`; set the options here too, for `bash build.sh`.
set -euo pipefail

src=${KPROP_SOURCE:-}
if [ -z "$src" ]; then
  if [ -f harness/fuzz/CMakeLists.txt ]; then src=$PWD; else src=$SRC/kprop; fi
fi
src=$(cd "$src" && pwd)
build=$WORK/kprop-build
jobs=${KPROP_BUILD_JOBS:-$(nproc)}
mkdir -p "$OUT" "$WORK"

# --- Flags ---------------------------------------------------------------------------
# kprop is C++ only (project(kprop LANGUAGES CXX)): $CXX and $CXXFLAGS are used, $CC and
# $CFLAGS have nothing to compile.
# Debian's libtorch is built against libstdc++, and its API passes std::string and
# std::vector across the library boundary: OSS-Fuzz's default -stdlib=libc++ (in
# CXXFLAGS) would not link against it, so kprop is built with libstdc++.
cxxflags=${CXXFLAGS//-stdlib=libc++/}
# The same semantics as the local fuzz build (harness/fuzz/instrumentation.cmake uses
# RelWithDebInfo, which defines NDEBUG); the optimization and debug-info levels are
# OSS-Fuzz's (CMAKE_BUILD_TYPE=None adds none of CMake's own).
cxxflags="$cxxflags -DNDEBUG"
# libtorch and ~280 libraries it pulls in (OpenCV, FFmpeg, GDAL... through Debian's
# build) are copied to $OUT/lib. DT_RPATH rather than DT_RUNPATH (--disable-new-dtags):
# an executable's RUNPATH only serves its own direct dependencies, its RPATH also serves
# the dependencies of libtorch, which carry no search path of their own. The single quotes
# keep $ORIGIN from the shell that runs the link command.
linkflags="-Wl,--disable-new-dtags -Wl,-rpath,'\$ORIGIN/lib'"

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# ccache is used when it is installed: the top-level CMakeLists.txt looks for it.

# --- Configure and build ---------------------------------------------------------------
# KPROP_FUZZ_SANITIZE="": the sanitizer and -fsanitize=fuzzer-no-link come with $CXXFLAGS.
# KPROP_FUZZING_ENGINE: the engine's link flag (-fsanitize=fuzzer, or a library path).
cmake -S "$src" -B "$build" ${generator[@]+"${generator[@]}"} \
  -DKPROP_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$linkflags" \
  -DKPROP_FUZZ_SANITIZE="" \
  -DKPROP_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$build" -j"$jobs"

# --- Targets -------------------------------------------------------------------------
# The seed writer and the targets run here need this to exit cleanly: libtorch keeps
# caches for the life of the process, which LeakSanitizer reports as leaks. (Each
# .options file sets it for ClusterFuzz.)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# In a SANITIZER=undefined build, OSS-Fuzz's -fsanitize=unsigned-integer-overflow reports
# (without stopping) the wrap-around that kprop's hashes and random streams rely on.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}silence_unsigned_overflow=1"

# The implementations of a kernel, as its target lists them when asked for an unknown
# one ("known: reference, tiled, tiled@original (or ...").
implementations() {
  local kernel=$1 var="KPROP_IMPLS_$1" message
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  message=$(KPROP_IMPL='?' KPROP_CORPUS= "$build/fuzz_$kernel" -runs=0 2>&1 || true)
  echo "$message" | sed -n 's/.*known: \(.*\) (or .*/\1/p' | tr -d ',' | head -1
}

# The name that selects an implementation: every character that is not a letter or a
# digit becomes '_' (tiled@clamped -> fuzz_causal_conv1d-tiled_clamped).
target_name() { echo "fuzz_$1-$(echo "$2" | sed 's/[^A-Za-z0-9]/_/g')"; }

# A target's .options file (libFuzzer flags, sanitizer options). For the kernel targets:
# - max_len: an input is one property byte, an 8-byte data seed and a few choices per
#   parameter; corpus cases encode to 16-26 bytes, and bytes past the last choice are
#   never read, so longer inputs only dilute the mutations.
# - timeout: most cases take milliseconds, but a large `gradient` case of `reference`
#   took 21 s of CPU (59 s wall on a loaded machine) under ASan, and a new defect is
#   shrunk in the process before the target aborts (up to KPROP_SHRINK_SECONDS, 10 s by
#   default, per symptom). 120 s keeps both from being reported as timeouts; a real hang
#   still is one.
# - rss_limit_mb: libtorch alone maps ~1 GiB, ASan's shadow and quarantine add to it.
# - no dictionary: the bytes are a sequence of choices, not a format (generators/draw.h),
#   so there are no tokens to insert; libFuzzer's value profile and CMP tracing of the
#   choices' comparisons do that work.
write_options() {  # FILE MAX_LEN TIMEOUT [DICT]
  {
    echo "[libfuzzer]"
    if [ -n "${4:-}" ]; then echo "dict = $4"; fi
    echo "max_len = $2"
    echo "timeout = $3"
    echo "detect_leaks = 0"
    cat <<'EOF'
rss_limit_mb = 4096

[asan]
detect_leaks = 0
quarantine_size_mb = 64
malloc_context_size = 10

[ubsan]
print_stacktrace = 1
silence_unsigned_overflow = 1
EOF
  } > "$1"
}

stage=$WORK/kprop-stage
rm -rf "$stage"
mkdir -p "$stage"
targets=()

for dir in "$src"/kernels/*/; do
  kernel=$(basename "$dir")
  [ -f "$dir/info.cpp" ] || [ -f "$dir/$kernel.cpp" ] || continue  # a kernel folder
  impls=$(implementations "$kernel")
  if [ -z "$impls" ]; then
    echo "build.sh: could not list the implementations of $kernel" >&2
    exit 1
  fi
  # One seed set serves every implementation: a seed encodes a case's choices, and the
  # implementation comes from the target's name, not from the bytes.
  rm -rf "$stage/seeds-$kernel"
  "$build/kprop_fuzz_seeds" "$kernel" "$stage/seeds-$kernel" "$src/corpus"
  for impl in $impls; do
    name=$(target_name "$kernel" "$impl")
    cp "$build/fuzz_$kernel" "$OUT/$name"
    rm -f "$OUT/${name}_seed_corpus.zip"
    (cd "$stage/seeds-$kernel" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
    write_options "$OUT/$name.options" 256 120
    targets+=("$name")
  done
done

# The parser: any bytes give an error or a valid case. Seeds: the case files themselves
# (named <kernel>--<file> so that kernels' files cannot collide); dictionary: the keys and
# values of the format (.clusterfuzzlite/fuzz_case_file.dict).
mkdir -p "$stage/case_files"
for f in "$src"/corpus/*/*.json; do
  [ -f "$f" ] || continue
  cp "$f" "$stage/case_files/$(basename "$(dirname "$f")")--$(basename "$f")"
done
cp "$build/fuzz_case_file" "$OUT/fuzz_case_file"
rm -f "$OUT/fuzz_case_file_seed_corpus.zip"
(cd "$stage/case_files" && zip -q -r "$OUT/fuzz_case_file_seed_corpus.zip" .)
cp "$src/.clusterfuzzlite/fuzz_case_file.dict" "$OUT/fuzz_case_file.dict"
write_options "$OUT/fuzz_case_file.options" 8192 25 fuzz_case_file.dict
targets+=(fuzz_case_file)

# Identities the kernel targets already know: a failure showing only these is counted,
# not reported (the targets read kprop_corpus beside the binary).
rm -rf "$OUT/kprop_corpus"
cp -r "$src/corpus" "$OUT/kprop_corpus"

# --- Shared libraries ----------------------------------------------------------------
# Every library the targets load except glibc's own (which the runner has, and which must
# match its dynamic loader): libtorch, its dependencies, libstdc++ and libgcc_s (the
# builder's may be newer than the runner's). Listed from the binaries in the build folder,
# whose $ORIGIN/lib does not exist, so that ldd names the system's copies even when $OUT
# holds an earlier build.
rm -rf "$OUT/lib"
mkdir -p "$OUT/lib"
libs=$(for b in "$build"/fuzz_*; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u)
for lib in $libs; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|\
    libanl.so.*|libnsl.so.*|ld-linux*.so.*|libmvec.so.*) continue ;;
  esac
  cp -L "$lib" "$OUT/lib/"
done

# --- Check ---------------------------------------------------------------------------
# Each target starts from $OUT alone: an RPATH of $ORIGIN/lib, libtorch from $OUT/lib,
# no LD_LIBRARY_PATH, and its implementation from its name.
for t in "${targets[@]}"; do
  dynamic=$(readelf -d "$OUT/$t")
  loads=$(env -u LD_LIBRARY_PATH ldd "$OUT/$t")
  if [[ "$dynamic" != *"(RPATH)"*'[$ORIGIN/lib]'* ]]; then
    echo "build.sh: $t has no RPATH \$ORIGIN/lib" >&2
    exit 1
  fi
  if ! grep -q "libtorch_cpu[^ ]* => $OUT/lib/" <<<"$loads"; then
    echo "build.sh: $t does not load libtorch from \$OUT/lib" >&2
    exit 1
  fi
  if ! env -u LD_LIBRARY_PATH "$OUT/$t" -runs=0 >/dev/null 2>&1; then
    echo "build.sh: $t does not start" >&2
    exit 1
  fi
done
echo "build.sh: ${#targets[@]} targets in $OUT: ${targets[*]}"
echo "build.sh: $(ls "$OUT/lib" | wc -l) libraries in $OUT/lib ($(du -sh "$OUT/lib" | cut -f1))"
