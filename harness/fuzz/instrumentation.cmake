# Flags of the fuzz builds (KPROP_FUZZ=ON, with clang). Two of them, built side by side:
#
# - the sanitizer build (build/fuzz): every object of kprop compiled with ASan, UBSan and
#   libFuzzer's coverage instrumentation; the targets for the case-file parser and for
#   memory errors, and what the ctest fuzz label runs;
# - the speed build (build/fuzz-fast, KPROP_FUZZ_FAST=ON): no sanitizers, and coverage
#   counters only in kprop's kernels (their branches and tiles are what steer the fuzzer;
#   the harness and generators run alike for every case), no comparison tracing. What
#   `kprop nightly` and the benchmark fuzz with.
#
# libtorch is not instrumented (it is prebuilt), and code from its headers gets no
# coverage counters.
#
# OSS-Fuzz and ClusterFuzzLite pass their own flags (build.sh): CMAKE_CXX_FLAGS=$CXXFLAGS
# with the sanitizer of the build, KPROP_FUZZ_SANITIZE="" and
# KPROP_FUZZING_ENGINE=$LIB_FUZZING_ENGINE.
option(KPROP_FUZZ_FAST "The speed build: no sanitizers, coverage only in the kernels" OFF)
if(KPROP_FUZZ_FAST)
  # No comparison tracing: the kernels compare values derived from the input, never its
  # bytes, so libFuzzer's table of compared values has nothing to splice back; it was a
  # tenth of an execution.
  set(kprop_default_sanitize "-fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp")
else()
  set(kprop_default_sanitize
      "-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined")
endif()
# "default": the flags above, by KPROP_FUZZ_FAST (a cached value of its own would stay
# behind when the defaults change).
set(KPROP_FUZZ_SANITIZE "default" CACHE STRING
    "sanitizers and instrumentation of every object (default: by KPROP_FUZZ_FAST; empty: CMAKE_CXX_FLAGS has them)")
set(kprop_sanitize "${KPROP_FUZZ_SANITIZE}")
if(kprop_sanitize STREQUAL "default")
  set(kprop_sanitize "${kprop_default_sanitize}")
endif()
set(KPROP_FUZZING_ENGINE "-fsanitize=fuzzer" CACHE STRING
    "link flag of the fuzzing engine (OSS-Fuzz: $LIB_FUZZING_ENGINE)")

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KPROP_FUZZ=ON needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
endif()

# Ninja compiles every object from the top of the build folder, so the lists can be named
# relative to it: the same flag in every clone, and ccache reuses the objects of the last
# clone's fuzz build (it does not rewrite a flag's absolute path, and every fuzz object
# missed). Other generators get the absolute path.
function(kprop_list_flag file out)
  set(path ${file})
  if(CMAKE_GENERATOR MATCHES "Ninja")
    file(RELATIVE_PATH path ${CMAKE_BINARY_DIR} ${file})
  endif()
  set(${out} ${path} PARENT_SCOPE)
endfunction()
set(kprop_ignorelist_file ${CMAKE_CURRENT_LIST_DIR}/coverage_ignorelist.txt)
set(kprop_allowlist_file ${CMAKE_CURRENT_LIST_DIR}/coverage_allowlist.txt)
kprop_list_flag(${kprop_ignorelist_file} kprop_ignorelist)
set(kprop_coverage_lists -fsanitize-coverage-ignorelist=${kprop_ignorelist})
set(kprop_list_files ${kprop_ignorelist_file})
if(KPROP_FUZZ_FAST)
  kprop_list_flag(${kprop_allowlist_file} kprop_allowlist)
  list(APPEND kprop_coverage_lists -fsanitize-coverage-allowlist=${kprop_allowlist})
  list(APPEND kprop_list_files ${kprop_allowlist_file})
endif()
# Neither ninja nor ccache knows that an object depends on the files a flag names: a
# digest of their content in the flags makes an edited list rebuild what it changes (and
# only then: the same content gives the same flags in every clone, and ccache hits).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${kprop_list_files})
set(kprop_lists_content "")
foreach(f ${kprop_list_files})
  file(READ ${f} content)
  string(APPEND kprop_lists_content "${content}")
endforeach()
string(MD5 kprop_lists_digest "${kprop_lists_content}")
string(SUBSTRING ${kprop_lists_digest} 0 12 kprop_lists_digest)
list(APPEND kprop_coverage_lists -DKPROP_COVERAGE_LISTS=${kprop_lists_digest})
separate_arguments(kprop_fuzz_sanitize UNIX_COMMAND "${kprop_sanitize}")
add_compile_options(${kprop_fuzz_sanitize} ${kprop_coverage_lists})
add_link_options(${kprop_fuzz_sanitize})
# Line tables are enough for symbolized stack traces and keep the build fast.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -gline-tables-only -DNDEBUG")
