# The libraries a program that uses ember links: shared, versioned (libember.so.0 with its SONAME)
# and made of the layers' own objects, so the layer targets (static, one per layer, the arrows the
# build checks) stay what the ember command and the tests link.
#   ember::ember  libember.so      tensors, autograd, jit, nn, optim, io, dist (MPI when built)
#   ember::rl     libember_rl.so   the env layer (LunarLander on Box2D) and PPO; needs ember::ember
#   ember::onnx   libember_onnx.so the ONNX frontend, when it is built (its own component: it brings
#                                  libonnx and libprotobuf, which the rest does not need)
# Each carries the public include directory, C++20 and its link dependencies. The same names exist
# after find_package(ember) (cmake/install.cmake) and in a project that adds ember with
# add_subdirectory or FetchContent.

# ember_shared_library(TARGET EXPORT_NAME OUTPUT_NAME LAYERS...): a shared library of the layers'
# objects, refusing undefined symbols at link time (a library complete in itself). Installed, it
# finds its siblings (libember_rl.so needs libember.so.0) in its own directory ($ORIGIN): a
# program's RUNPATH does not extend to its libraries' dependencies, and the prefix may be moved.
function(ember_shared_library target export_name output_name)
  set(objects "")
  foreach(layer ${ARGN})
    list(APPEND objects $<TARGET_OBJECTS:${layer}>)
  endforeach()
  add_library(${target} SHARED ${objects})
  add_library(ember::${export_name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output_name} EXPORT_NAME ${export_name}
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib INSTALL_RPATH "$ORIGIN")
  target_include_directories(${target} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} INTERFACE cxx_std_20)
  target_link_options(${target} PRIVATE LINKER:--no-undefined)
endfunction()

ember_shared_library(ember_library ember ember ember_support ember_ir ember_schedule ember_codegen
                     ember_runtime ember_search ember_engine ember_tensor ember_io ember_nn ember_optim
                     ember_dist)
target_link_libraries(ember_library PUBLIC Threads::Threads PRIVATE ${CMAKE_DL_LIBS} SQLite::SQLite3)
if(EMBER_HAVE_MPI)
  target_link_libraries(ember_library PRIVATE MPI::MPI_C)
endif()
if(EMBER_HAVE_OPENCL)
  target_link_libraries(ember_library PRIVATE OpenCL::OpenCL)
endif()

ember_shared_library(ember_rl_library rl ember_rl ember_rl_env ember_rl)
target_link_libraries(ember_rl_library PUBLIC ember_library nlohmann_json::nlohmann_json
                      PRIVATE box2d::box2d PNG::PNG)

if(EMBER_HAVE_ONNX)
  ember_shared_library(ember_onnx_library onnx ember_onnx ember_onnx)
  target_link_libraries(ember_onnx_library PUBLIC ember_library
                        PRIVATE onnx onnx_proto protobuf::libprotobuf)
endif()
