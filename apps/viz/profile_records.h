// What `ember train --profile` writes into <run>/profile/ (trace.json, trace.kernels.json,
// graphs/realize-<n>.{ops,kernels,fused}.dot), as `ember viz` serves it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ember::viz {

/// The run's kernel table (trace.kernels.json: engine's write_kernel_table), or null when the run
/// was not profiled. Throws IOError naming the file when it is unreadable, not JSON or nested
/// deeper than kMaxJsonDepth (viz/json_file.h).
nlohmann::json run_kernels(const std::filesystem::path& run_dir);

/// The realizes whose graphs the run wrote, the most kernels first (the training step leads):
/// [{name ("realize-00128"), kernels (clusters in its fused graph), ops (nodes)}].
nlohmann::json run_graphs(const std::filesystem::path& run_dir);

/// Whether `name` is a graph's name as run_graphs lists it and `kind` one of ops, kernels, fused:
/// only such names become file names.
bool valid_graph(const std::string& name, const std::string& kind);

/// Whether Graphviz's dot is on PATH (render_svg can draw).
bool have_dot();

/// Graphviz's drawing of a DOT file: the SVG, or why there is none.
struct Rendered {
  std::string svg;
  std::string error;      ///< empty when svg holds the drawing
  bool installed = true;  ///< false: no dot on PATH (error says so)
};
/// Runs Graphviz's `dot -Tsvg` (looked up on PATH at each call) on a DOT file. A dot that is not
/// installed, exits non-zero or prints no SVG gives the reason in `error` (dot's own message).
Rendered render_svg(const std::filesystem::path& dot_file);

}  // namespace ember::viz
