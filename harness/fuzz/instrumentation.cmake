# Flags of the fuzz build (KPROP_FUZZ=ON, with clang): every object of kprop is compiled
# with the sanitizers and libFuzzer's coverage instrumentation; libtorch is not (it is
# prebuilt), and code from its headers gets no coverage counters, so the fuzzer's
# coverage follows kprop's kernels, emulations and properties: their branches and tiles.
#
# OSS-Fuzz and ClusterFuzzLite pass their own flags (build.sh): CMAKE_CXX_FLAGS=$CXXFLAGS
# with the sanitizer of the build, KPROP_FUZZ_SANITIZE="" and
# KPROP_FUZZING_ENGINE=$LIB_FUZZING_ENGINE.
set(KPROP_FUZZ_SANITIZE
    "-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
    CACHE STRING "sanitizers and instrumentation of every object (empty: CMAKE_CXX_FLAGS has them)")
set(KPROP_FUZZING_ENGINE "-fsanitize=fuzzer" CACHE STRING
    "link flag of the fuzzing engine (OSS-Fuzz: $LIB_FUZZING_ENGINE)")

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KPROP_FUZZ=ON needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
endif()

# Ninja compiles every object from the top of the build folder, so the ignorelist can be
# named relative to it: the same flag in every clone, and ccache reuses the objects of the
# last clone's fuzz build (it does not rewrite this flag's absolute path, and every fuzz
# object missed). Other generators get the absolute path.
set(kprop_ignorelist_file ${CMAKE_CURRENT_LIST_DIR}/coverage_ignorelist.txt)
set(kprop_ignorelist ${kprop_ignorelist_file})
if(CMAKE_GENERATOR MATCHES "Ninja")
  file(RELATIVE_PATH kprop_ignorelist ${CMAKE_BINARY_DIR} ${kprop_ignorelist_file})
endif()
# ccache hashes no file a flag names: have it hash the ignorelist's content.
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(INSERT CMAKE_CXX_COMPILER_LAUNCHER 3 CCACHE_EXTRA_FILES=${kprop_ignorelist_file})
endif()
separate_arguments(kprop_fuzz_sanitize UNIX_COMMAND "${KPROP_FUZZ_SANITIZE}")
add_compile_options(${kprop_fuzz_sanitize} -fsanitize-coverage-ignorelist=${kprop_ignorelist})
add_link_options(${kprop_fuzz_sanitize})
# Line tables are enough for symbolized stack traces and keep the build fast.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -gline-tables-only -DNDEBUG")
