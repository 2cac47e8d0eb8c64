# ember_revision_header(TARGET STEP HEADER COMMENT): TARGET's sources may include HEADER (in the
# current binary directory), which build_info.cmake writes with the source revision
# (EMBER_BUILD_REVISION) at every build, from the custom target STEP; TARGET also gets
# EMBER_VERSION defined. `ember --version` and the tune cache's key name the revision this way.
function(ember_revision_header target step header comment)
  add_custom_target(${step}
    COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/${header}
            -P ${PROJECT_SOURCE_DIR}/cmake/build_info.cmake
    BYPRODUCTS ${CMAKE_CURRENT_BINARY_DIR}/${header}
    COMMENT "${comment}")
  add_dependencies(${target} ${step})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
  target_compile_definitions(${target} PRIVATE EMBER_VERSION="${PROJECT_VERSION}")
endfunction()
