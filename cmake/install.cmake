# `cmake --install build --prefix P` installs kprop as a CMake package that other projects
# use with find_package(kprop) (examples/out_of_tree/):
#   P/bin/kprop                         the command line
#   P/lib/libkprop.so                   the harness (target kprop::harness)
#   P/include/kprop/{core,generators,kernels,harness}/*.h
#   P/lib/cmake/kprop/                  kpropConfig.cmake, its version and targets
#   P/lib/kprop/python/kprop/           the Python entry, when it was built
#                                       (PYTHONPATH=P/lib/kprop/python python3 -m kprop)
include(CMakePackageConfigHelpers)

set(KPROP_VERSION 0.1.0)
set(KPROP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kprop)

# Installed binaries find libkprop.so beside them and libtorch where it was linked from
# (a torch wheel's lib folder; nothing for Debian's, which is in the system's folders).
set_target_properties(kprop PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
                      INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(kprop_harness PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS kprop_harness kprop EXPORT kpropTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers keep their paths ("harness/engine/property.h"), as kprop's own code includes
# them. The fuzz targets' sources stay out.
foreach(dir core generators kernels harness)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kprop
          FILES_MATCHING PATTERN "*.h"
          PATTERN "targets" EXCLUDE)
endforeach()

install(EXPORT kpropTargets NAMESPACE kprop:: DESTINATION ${KPROP_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kpropConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kpropConfig.cmake INSTALL_DESTINATION ${KPROP_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kpropConfigVersion.cmake
  VERSION ${KPROP_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kpropConfig.cmake
              ${PROJECT_BINARY_DIR}/kpropConfigVersion.cmake
        DESTINATION ${KPROP_CMAKE_DIR})
