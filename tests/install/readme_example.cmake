# The README's library example is examples/downstream/fit_mlp.cpp verbatim, the program the
# install.downstream_* tests build and run, so the README shows code that compiles and learns.
# Run as: cmake -DSOURCE=<ember's source> -P readme_example.cmake
cmake_minimum_required(VERSION 3.25)
file(READ ${SOURCE}/README.md readme)
file(READ ${SOURCE}/examples/downstream/fit_mlp.cpp program)
string(FIND "${readme}" "```cpp\n${program}```\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not show examples/downstream/fit_mlp.cpp as it is: copy the "
                      "file into the README's ```cpp block under 'Using the library'")
endif()
