# ember_gtest_pch(<target>...): the test targets' translation units start from one precompiled
# <gtest/gtest.h> (cmake/torch_pch.cmake's helpers). Parsing it costs ~1.3 s of CPU per unit at
# -O3, and the suite has some 100 units without libtorch: ember_add_test gives each target this
# header (its TORCH_PCH targets take libtorch's in its place). Measured on every fifth of those
# units (21, alternating): 116.1 -> 89.5 s of CPU (user+sys), for ~5 s once for the header. The
# header is compiled by ember_gtest_pch_anchor, an executable with ember_add_test's flags and
# definitions (GCC ignores a header compiled with other flags: -Winvalid-pch says so).
# Like ember_torch_pch, one anchor per optimisation level (EMBER_PCH_SUFFIX).
function(ember_gtest_pch)
  set(anchor ember_gtest_pch_anchor${EMBER_PCH_SUFFIX})
  if(NOT TARGET ${anchor})
    _ember_pch_anchor(${anchor} gtest_pch.cpp <gtest/gtest.h>)
    target_link_libraries(${anchor} PRIVATE GTest::gtest)
    target_compile_definitions(${anchor} PRIVATE EMBER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  endif()
  _ember_pch_reuse(${anchor} ${ARGN})
endfunction()
