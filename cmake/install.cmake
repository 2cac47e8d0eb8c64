# `cmake --install BUILD [--prefix P]` (and `make install`, `make deb`): the shared libraries
# (cmake/libraries.cmake), the public headers, the `ember` command, the CMake package
# (find_package(ember): ember::ember, ember::rl, ember::onnx) and pkg-config files (ember,
# ember-rl, ember-onnx). Nothing private: no layer archive, no header under src/, no test.
#
# The install is relocatable: the CMake package and the pkg-config files find the prefix from
# their own location, the libraries find each other in their own directory (RUNPATH $ORIGIN), and
# nothing installed holds the prefix it was installed to. The kernel
# prelude (include/ember/support/kernel_scalar.h, which every generated kernel needs) is compiled
# into libember as text (src/codegen/CMakeLists.txt), so the run-time compiler needs no header
# of ember's on disk: only the C library's (README, "Using ember in your own project").
include(CMakePackageConfigHelpers)

set(_ember_libs ember_library ember_rl_library)
if(EMBER_HAVE_ONNX)
  list(APPEND _ember_libs ember_onnx_library)
endif()
install(TARGETS ${_ember_libs} EXPORT ember_targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET ember_cli)
  install(TARGETS ember_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(_ember_header_excludes "")
if(NOT EMBER_HAVE_ONNX)
  set(_ember_header_excludes PATTERN onnx EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ember DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" ${_ember_header_excludes})

# The CMake package: <libdir>/cmake/ember/.
set(_ember_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
install(EXPORT ember_targets NAMESPACE ember:: FILE emberTargets.cmake
        DESTINATION ${_ember_cmake_dir})
set(EMBER_CONFIG_HAVE_ONNX ${EMBER_HAVE_ONNX})
configure_package_config_file(cmake/emberConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/export/emberConfig.cmake
                              INSTALL_DESTINATION ${_ember_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/export/emberConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/export/emberConfig.cmake
              ${PROJECT_BINARY_DIR}/export/emberConfigVersion.cmake
        DESTINATION ${_ember_cmake_dir})

# pkg-config files: <libdir>/pkgconfig/, their prefix relative to ${pcfiledir}.
set(_ember_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH EMBER_PC_TO_PREFIX /root/${_ember_pc_dir} /root)
string(REGEX REPLACE "/$" "" EMBER_PC_TO_PREFIX "${EMBER_PC_TO_PREFIX}")
set(_ember_pcs ember ember-rl)
if(EMBER_HAVE_ONNX)
  list(APPEND _ember_pcs ember-onnx)
endif()
foreach(pc ${_ember_pcs})
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/export/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/export/${pc}.pc DESTINATION ${_ember_pc_dir})
endforeach()
