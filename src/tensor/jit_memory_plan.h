// A capture's memory plan (tensor/jit_capture.cpp): the intermediates a replay writes before it
// reads them, and that no one outside the capture holds, share memory where their lives (first
// write to last use, in launch order) do not overlap. The PPO training step's intermediates took
// one buffer each, 82.6 MB in all, more than the L3 of the machines it runs on.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/jit_capture.h"

namespace ember::detail::jit {

/// Gives the shareable Fixed bindings (made in the capture, written, first used as an output,
/// never a copy's buffer) shared buffers, greedily in order of first use; returns the bytes of
/// memory the Fixed intermediates take afterwards.
int64_t share_intermediates(const std::vector<CapturedLaunch>& launches,
                            std::vector<Binding>& bindings);

}  // namespace ember::detail::jit
