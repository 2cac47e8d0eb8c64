#include "runtime/device.h"

#include "ember/error.h"

namespace ember::runtime {

Device& cpu_device();
Device& interp_device();

Device& get_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  if (name == "interp") return interp_device();
  throw ValueError("unknown device '" + name + "' (known: cpu, interp)");
}

}  // namespace ember::runtime
