# ember_torch_pch(<target>...): the targets' translation units start from one precompiled
# <torch/torch.h>. Parsing libtorch's headers is most of such a unit's compile time (~25 s of CPU
# at -O3 on the 2-core CI machine, ~7 s from the precompiled header, which costs ~45 s once), and
# the suite and the study have some thirty of them. The header is compiled once, by
# ember_torch_pch_anchor (an executable, so that its flags, -fPIE included, are the other
# executables'; GCC ignores a header compiled with other flags: -Winvalid-pch says so). A source
# of these targets that does not include libtorch keeps its own includes: set
# SKIP_PRECOMPILE_HEADERS on it. Call it where Torch was found (TORCH_LIBRARIES).
#
# ccache caches a unit compiled with a precompiled header only under the sloppiness
# pch_defines,time_macros; with ccache as the launcher, these targets' compilations set it.
#
# A header precompiled at one optimisation level must not be loaded at another: GCC 12 compiling an
# -O3 unit from an -O1 header crashed in its IPA pass. The suite's units are -O1 (tests/), the
# benchmarks' -O3, so the benchmarks have their own anchor, named with EMBER_PCH_SUFFIX
# (bench/CMakeLists.txt sets it); an anchor takes the options of the directory that first asks.
function(ember_torch_pch)
  set(anchor ember_torch_pch_anchor${EMBER_PCH_SUFFIX})
  if(NOT TARGET ${anchor})
    _ember_pch_anchor(${anchor} torch_pch.cpp <torch/torch.h>)
    target_link_libraries(${anchor} PRIVATE ${TORCH_LIBRARIES})
  endif()
  _ember_pch_reuse(${anchor} ${ARGN})
endfunction()

# _ember_pch_anchor(<anchor> <source in cmake/> <header>): the executable, left out of `all`, that
# compiles the precompiled <header>; _ember_pch_reuse(<anchor> <target>...): the targets reuse it.
function(_ember_pch_anchor anchor source header)
  add_executable(${anchor} EXCLUDE_FROM_ALL ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${source})
  target_precompile_headers(${anchor} PRIVATE ${header})
  _ember_pch_launcher(${anchor})
endfunction()

function(_ember_pch_reuse anchor)
  foreach(target ${ARGN})
    target_precompile_headers(${target} REUSE_FROM ${anchor})
    _ember_pch_launcher(${target})
  endforeach()
endfunction()

function(_ember_pch_launcher target)
  set(launcher "${CMAKE_CXX_COMPILER_LAUNCHER}")
  if(NOT launcher)
    return()
  endif()
  list(GET launcher 0 program)
  get_filename_component(program "${program}" NAME)
  if(program STREQUAL "ccache")
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros;${launcher}")
  endif()
endfunction()
