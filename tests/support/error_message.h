// The message of the error a call is expected to throw, for tests that then check its text.
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

namespace ember_test {

/// The message of the E that f throws; a test failure and "" when f throws nothing or something
/// other than an E.
template <class E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

}  // namespace ember_test
