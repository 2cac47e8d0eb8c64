# `make deb`: a Debian package of the install (cmake/install.cmake) under /usr, made by CPack:
# ember_<version>_amd64.deb. dpkg-shlibdeps declares the shared libraries the binaries need
# (libbox2d2, libpng16-16, libsqlite3-0, libprotobuf and libonnx when the ONNX frontend is built,
# ocl-icd-libopencl1 when the opencl device is, libstdc++6, libc6); the rest is declared here: kernels are compiled at run time by a C compiler
# against the C library's headers (README, "Using ember in your own project"), and the rl headers
# include nlohmann/json.hpp.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ember)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "lazy, fusing, code-generating tensor library with autograd, and a PPO agent")
set(CPACK_PACKAGE_DESCRIPTION
    "ember builds a graph of tensor operations, fuses it into kernels, generates C for them and\n"
    "compiles them at run time. The package holds the ember command (train, eval, env, inspect,\n"
    "tune, onnx), the shared libraries libember, libember_rl and libember_onnx, their headers, a\n"
    "CMake package (find_package(ember)) and pkg-config files.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "ember maintainers <ember@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# shlibs and the ldconfig trigger for libember.so.0 and its siblings.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gcc | clang | c-compiler, libc6-dev, nlohmann-json3-dev (>= 3.10)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, cmake, pkg-config")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
