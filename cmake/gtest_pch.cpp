// The target that compiles the precompiled <gtest/gtest.h> of cmake/gtest_pch.cmake: its header
// is what the test units reuse; the program does nothing.
int main() { return 0; }
