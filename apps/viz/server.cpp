#include "viz/server.h"

#include <httplib.h>

#include <fstream>
#include <sstream>

#include "ember/error.h"
#include "ember/support/read_file.h"
#include "viz/confine.h"
#include "viz/onnx_records.h"
#include "viz/page.h"
#include "viz/profile_records.h"
#include "viz/record_dirs.h"
#include "viz/run_records.h"

namespace ember::viz {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void send_json(httplib::Response& res, const json& j) {
  res.set_content(j.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json{{"error", message}}.dump(), "application/json");
}

// Sends the error for a path that confine() refused; true when it did.
bool refused(const Confined& c, httplib::Response& res) {
  if (c.status == Confined::Status::Ok) return false;
  if (c.status == Confined::Status::Forbidden)
    send_error(res, 403, "path outside the runs folder");
  else
    send_error(res, 404, "no such file");
  return true;
}

const char* content_type(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".json") return "application/json";
  if (ext == ".jsonl" || ext == ".dot" || ext == ".txt" || ext == ".c") return "text/plain";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  return "application/octet-stream";
}

}  // namespace

struct Server::Impl {
  ServerOptions opt;
  fs::path root;  // canonical
  httplib::Server http;
  int port = -1;

  // The directory a request's ?<param>= names, holding `file`, or an error response.
  std::optional<fs::path> record_dir(const httplib::Request& req, httplib::Response& res,
                                     const char* param, const char* file) const {
    if (req.get_param_value(param).empty()) {
      send_error(res, 400, std::string("missing ?") + param + "=");
      return std::nullopt;
    }
    const Confined c = confine(root, req.get_param_value(param));
    if (refused(c, res)) return std::nullopt;
    std::error_code ec;
    if (!fs::is_regular_file(c.path / file, ec)) {
      send_error(res, 404, std::string("not a record directory (no ") + file + ")");
      return std::nullopt;
    }
    return c.path;
  }
  // The run directory a request's ?run= names.
  std::optional<fs::path> run_dir(const httplib::Request& req, httplib::Response& res) const {
    return record_dir(req, res, "run", "run.json");
  }

  // A page of another site that makes the browser resolve its own name to this machine (DNS
  // rebinding) sends its own name as Host: only the names of this server are answered, unless
  // it listens on every address (--host 0.0.0.0 or ::), where any name may reach it.
  bool allowed_host(const httplib::Request& req) const {
    if (opt.host == "0.0.0.0" || opt.host == "::") return true;
    std::string h = req.get_header_value("Host");
    const size_t colon = h.rfind(':');
    if (colon != std::string::npos && h.find(']', colon) == std::string::npos) h.resize(colon);
    return h == "127.0.0.1" || h == "localhost" || h == "[::1]" || h == opt.host ||
           h == "[" + opt.host + "]";
  }

  void routes() {
    // A record that cannot be read (reported by ember's errors or json's) is a JSON {error} body,
    // never an empty reply with the exception's text in a header.
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
          try {
            std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            send_error(res, 500, e.what());
          } catch (...) {
            send_error(res, 500, "unknown error");
          }
        });
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (allowed_host(req)) return httplib::Server::HandlerResponse::Unhandled;
      send_error(res, 403, "unknown Host: open the URL that ember viz printed");
      return httplib::Server::HandlerResponse::Handled;
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kPageHtml, "text/html; charset=utf-8");
    });
    http.Get("/page.js", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kPageJs, "text/javascript; charset=utf-8");
    });
    http.Get("/views.js", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kViewsJs, "text/javascript; charset=utf-8");
    });
    http.Get("/onnx.js", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kOnnxJs, "text/javascript; charset=utf-8");
    });
    http.Get("/api/info", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, {{"runs_dir", root.string()}, {"graphviz", have_dot()}});
    });
    http.Get("/api/runs", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, list_runs(root));
    });
    http.Get("/api/run", [this](const httplib::Request& req, httplib::Response& res) {
      if (auto d = run_dir(req, res))
        res.set_content(support::read_file((*d / "run.json").string()), "application/json");
    });
    http.Get("/api/epochs", [this](const httplib::Request& req, httplib::Response& res) {
      if (auto d = run_dir(req, res)) send_json(res, run_epochs(*d));
    });
    http.Get("/api/kernels", [this](const httplib::Request& req, httplib::Response& res) {
      if (auto d = run_dir(req, res)) send_json(res, run_kernels(*d));
    });
    http.Get("/api/graphs", [this](const httplib::Request& req, httplib::Response& res) {
      if (auto d = run_dir(req, res)) send_json(res, run_graphs(*d));
    });
    http.Get("/api/graph",
             [this](const httplib::Request& req, httplib::Response& res) { graph(req, res); });
    http.Get("/api/trace", [this](const httplib::Request& req, httplib::Response& res) {
      auto d = run_dir(req, res);
      if (!d) return;
      const Confined c = confine(root, fs::relative(*d / "profile" / "trace.json", root).string());
      if (!refused(c, res))
        res.set_content(support::read_file(c.path.string()), "application/json");
    });
    http.Get("/api/onnx", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, list_onnx_profiles(root));
    });
    http.Get("/api/onnx/profile", [this](const httplib::Request& req, httplib::Response& res) {
      if (auto d = record_dir(req, res, "id", kOnnxProfileFile)) send_json(res, onnx_profile(*d));
    });
    http.Get(R"(/files/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const Confined c = confine(root, req.matches[1].str());
      if (refused(c, res)) return;
      std::error_code ec;
      if (!fs::is_regular_file(c.path, ec)) return send_error(res, 404, "not a file");
      res.set_content(support::read_file(c.path.string()), content_type(c.path));
    });
  }

  // ?run=&name=realize-<n>&kind=ops|kernels|fused&format=dot|svg (svg: 404 without Graphviz).
  void graph(const httplib::Request& req, httplib::Response& res) const {
    auto d = run_dir(req, res);
    if (!d) return;
    const std::string name = req.get_param_value("name");
    const std::string kind = req.has_param("kind") ? req.get_param_value("kind") : "fused";
    if (!valid_graph(name, kind)) return send_error(res, 400, "bad graph name or kind");
    const fs::path file = *d / "profile" / "graphs" / (name + "." + kind + ".dot");
    const Confined c = confine(root, fs::relative(file, root).string());
    if (refused(c, res)) return;
    if (req.get_param_value("format") != "svg")
      return res.set_content(support::read_file(c.path.string()), "text/plain");
    const Rendered svg = render_svg(c.path);
    if (svg.error.empty()) return res.set_content(svg.svg, "image/svg+xml");
    send_error(res, svg.installed ? 500 : 404, svg.error + ": lay the DOT out in the page");
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  std::error_code ec;
  impl_->root = fs::canonical(impl_->opt.runs_dir, ec);
  if (ec || !fs::is_directory(impl_->root))
    throw IOError("ember viz: the runs folder '" + impl_->opt.runs_dir +
                  "' is not a directory (train a run first: ember train, or name one with --runs)");
  impl_->routes();
}

Server::~Server() = default;

int Server::bind() {
  Impl& m = *impl_;
  if (m.opt.port == 0)
    m.port = m.http.bind_to_any_port(m.opt.host);
  else
    m.port = m.http.bind_to_port(m.opt.host, m.opt.port) ? m.opt.port : -1;
  if (m.port <= 0)
    throw IOError("ember viz: cannot listen on " + m.opt.host + " port " +
                  std::to_string(m.opt.port) + " (in use, or not an address of this machine)");
  return m.port;
}

void Server::run() { impl_->http.listen_after_bind(); }
void Server::stop() { impl_->http.stop(); }

std::string Server::url() const {
  const std::string& h = impl_->opt.host;
  const std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  return "http://" + host + ":" + std::to_string(impl_->port) + "/";
}

}  // namespace ember::viz
