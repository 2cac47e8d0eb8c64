// The examples' main: runs the program and turns an exception (bad arguments, missing data, an
// ember error) into its message on stderr and exit status 2, leaving 0 and 1 to the program (1: a
// goal the run did not reach).
#pragma once
#include <cstdio>
#include <exception>

namespace examples {

template <class Program>
int guarded_main(Program program) {
  try {
    return program();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

}  // namespace examples
