# ember_find_part_packages(<setting> <found_var> <package>...): finds the packages that an optional
# part of the build (the tests, the benchmarks) needs. <setting> is the part's EMBER_BUILD_* value:
# ON requires every package (find_package REQUIRED, a configure error where one is missing); AUTO
# looks quietly, and <found_var> is set OFF where one is missing (the part then leaves itself out).
# A macro: find_package's variables (TORCH_LIBRARIES, benchmark_FOUND, ...) stay in the caller's
# scope.
macro(ember_find_part_packages _ember_setting _ember_found_var)
  set(${_ember_found_var} ON)
  foreach(_ember_package ${ARGN})
    if("${_ember_setting}" STREQUAL "ON")
      find_package(${_ember_package} REQUIRED)
    else()
      find_package(${_ember_package} QUIET)
      if(NOT ${_ember_package}_FOUND)
        set(${_ember_found_var} OFF)
      endif()
    endif()
  endforeach()
endmacro()
