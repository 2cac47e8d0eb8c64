// What `ember train --profile` writes into <run>/profile/ (trace.json, trace.kernels.json,
// graphs/realize-<n>.{ops,kernels,fused}.dot), as `ember viz` serves it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ember::viz {

/// The run's kernel table (trace.kernels.json: engine's write_kernel_table), or null when the run
/// was not profiled.
nlohmann::json run_kernels(const std::filesystem::path& run_dir);

/// The realizes whose graphs the run wrote, the most kernels first (the training step leads):
/// [{name ("realize-00128"), kernels (clusters in its fused graph), ops (nodes)}].
nlohmann::json run_graphs(const std::filesystem::path& run_dir);

/// Whether `name` is a graph's name as run_graphs lists it and `kind` one of ops, kernels, fused:
/// only such names become file names.
bool valid_graph(const std::string& name, const std::string& kind);

/// Whether Graphviz's dot is on PATH (render_svg can draw).
bool have_dot();

/// Graphviz's `dot -Tsvg` of a DOT file, or nullopt when dot is not on PATH or fails.
std::optional<std::string> render_svg(const std::filesystem::path& dot_file);

}  // namespace ember::viz
