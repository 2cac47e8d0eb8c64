// `ember viz` (apps/viz): paths from a request stay inside the runs folder (`..`, its %2e%2e
// spelling, absolute paths and symlinks out get 403, missing files 404), the API reads the
// records as written, `ember viz` listens on 127.0.0.1 only unless told otherwise (the kernel's
// socket table says so), and `ember train --profile` writes what the page reads.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../support/child_process.h"
#include "../support/train_args.h"
#ifdef EMBER_HAVE_ONNX
#include "../onnx/model_builder.h"
#endif
#include "ember/support/read_file.h"
#include "viz/confine.h"
#include "viz/json_file.h"
#include "viz/profile_records.h"
#include "viz/server.h"

namespace {

namespace fs = std::filesystem;
using ember::viz::confine;
using nlohmann::json;
using Status = ember::viz::Confined::Status;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string slurp(const fs::path& p) { return ember::support::read_file(p.string()); }

// A status code and body, from one raw HTTP/1.1 request: the target goes out byte for byte (no
// client library normalises or re-encodes it).
struct Reply {
  int status = 0;
  std::string head, body;
};
Reply get(int port, const std::string& target, const std::string& host = "127.0.0.1") {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return {};
  }
  const std::string req =
      "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) return {};
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fd);
  Reply r;
  std::sscanf(all.c_str(), "HTTP/1.1 %d", &r.status);
  const size_t body = all.find("\r\n\r\n");
  if (body != std::string::npos) r.body = all.substr(body + 4);
  r.head = all.substr(0, body);
  return r;
}

// A runs folder with one hand-written run `a`, a file outside it, and symlinks out and in.
class Viz : public ::testing::Test {
 protected:
  void SetUp() override {
    base = ember_test::shared_temp_dir("ember-viz");
    root = base / "runs";
    write(root / "a" / "run.json", R"({"config": {"envs": 2}, "provenance": {"started_at": "x"}})");
    // Two complete epochs (an evaluation in the first only) and a line still being written.
    write(root / "a" / "epochs.jsonl",
          "{\"epoch\":0,\"transitions\":64,\"eval_mean\":-120.5,\"train_return_mean\":-90,"
          "\"collect_s\":0.5,\"update_s\":1.5,\"eval_s\":0.25}\n"
          "{\"epoch\":1,\"transitions\":128,\"eval_mean\":null,\"train_return_mean\":-80.25,"
          "\"collect_s\":0.75,\"update_s\":1,\"eval_s\":0}\n"
          "{\"epoch\":2,\"transi");
    write(base / "outside" / "secret.txt", "secret");
    write(base / "runs-sibling" / "secret.txt", "secret");
    fs::create_directory_symlink(base / "outside", root / "escape");
    fs::create_directory_symlink("../runs-sibling", root / "sibling");
    fs::create_directory_symlink(root / "a", root / "inside");
    root = fs::canonical(root);
  }
  void TearDown() override { fs::remove_all(base); }
  fs::path base, root;
};

TEST_F(Viz, ConfineKeepsPathsInsideTheRunsFolder) {
  EXPECT_EQ(confine(root, "a/run.json").status, Status::Ok);
  EXPECT_EQ(confine(root, "a/run.json").path, root / "a" / "run.json");
  EXPECT_EQ(confine(root, "inside/run.json").status, Status::Ok);  // a link that stays inside
  EXPECT_EQ(confine(root, "a/missing.json").status, Status::NotFound);
  for (const char* bad :
       {"", "..", "../outside/secret.txt", "a/../a/run.json", "a/../../outside", "/etc/passwd",
        "//etc/passwd", "escape/secret.txt", "escape", "sibling/secret.txt"})
    EXPECT_EQ(confine(root, bad).status, Status::Forbidden) << bad;
  EXPECT_EQ(confine(root, std::string("a/run.json\0x", 12)).status, Status::Forbidden);
}

TEST_F(Viz, RequestsOutsideTheRunsFolderAreRefused) {
  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const Reply ok = get(port, "/files/a/run.json");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, slurp(root / "a" / "run.json"));
  EXPECT_EQ(get(port, "/files/inside/run.json").status, 200);
  EXPECT_EQ(get(port, "/files/a/run.json", "localhost:" + std::to_string(port)).status, 200);
  // Another site's name (DNS rebinding) is refused.
  EXPECT_EQ(get(port, "/files/a/run.json", "evil.example:" + std::to_string(port)).status, 403);
  EXPECT_EQ(get(port, "/files/a/missing.json").status, 404);
  EXPECT_EQ(get(port, "/api/epochs?run=missing").status, 404);
  for (const char* bad :
       {"/files/../outside/secret.txt", "/files/a/../../outside/secret.txt",
        "/files/%2e%2e/outside/secret.txt", "/files/%2E%2E%2Foutside%2Fsecret.txt",
        "/files/a/%2e%2e/%2e%2e/outside/secret.txt", "/files//etc/passwd", "/files/%2Fetc%2Fpasswd",
        "/files/escape/secret.txt", "/files/sibling/secret.txt", "/api/epochs?run=..",
        "/api/epochs?run=%2e%2e", "/api/epochs?run=%2Fetc", "/api/epochs?run=escape",
        "/api/kernels?run=../outside", "/api/trace?run=%2e%2e%2foutside"}) {
    const Reply r = get(port, bad);
    EXPECT_TRUE(r.status == 403 || r.status == 404) << bad << ": " << r.status;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << bad;
  }
  server.stop();
  serving.join();
}

TEST_F(Viz, TheApiReadsTheRecordsAsWritten) {
  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const json runs = json::parse(get(port, "/api/runs").body);
  std::vector<std::string> ids;
  for (const json& r : runs) ids.push_back(r["id"]);
  EXPECT_EQ(ids, std::vector<std::string>({"a"}));  // links are not followed into a second entry
  EXPECT_EQ(runs[0]["epochs"], 2);
  EXPECT_EQ(runs[0]["config"]["envs"], 2);
  const json epochs = json::parse(get(port, "/api/epochs?run=a").body);
  ASSERT_EQ(epochs.size(), 2u);  // the torn third line is left out
  EXPECT_EQ(epochs[0]["eval_mean"], -120.5);
  EXPECT_TRUE(epochs[1]["eval_mean"].is_null());
  EXPECT_EQ(epochs[1]["train_return_mean"], -80.25);
  EXPECT_EQ(epochs[0]["update_s"], 1.5);
  EXPECT_EQ(json::parse(get(port, "/api/kernels?run=a").body), nullptr);  // not profiled
  EXPECT_EQ(get(port, "/api/graph?run=a&name=../x&kind=fused").status, 400);
  EXPECT_EQ(get(port, "/").status, 200);
  server.stop();
  serving.join();
}

// The listening sockets of a port in /proc/net/tcp and tcp6: "<local address>:<port>" of each
// row in state 0A (LISTEN), addresses in the kernel's hex.
std::vector<std::string> listeners(int port) {
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  std::vector<std::string> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::istringstream row(line);
      std::string slot, local, remote, state;
      row >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want)
        out.push_back(local);
    }
  }
  return out;
}

TEST_F(Viz, ADefaultRunListensOnLoopbackOnly) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execl(EMBER_CLI_PATH, EMBER_CLI_PATH, "viz", "--runs", root.c_str(), "--port", "0",
          static_cast<char*>(nullptr));
    _exit(98);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  const size_t at = line.find("http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << line;
  const int port = std::stoi(line.substr(at + 17));
  EXPECT_GT(port, 0);
  EXPECT_EQ(listeners(port), std::vector<std::string>({"0100007F:" + [&] {
              char h[8];
              std::snprintf(h, sizeof h, "%04X", port);
              return std::string(h);
            }()}));
  EXPECT_EQ(get(port, "/files/a/run.json").status, 200);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  close(out[0]);
}

// `ember train --out OUT --profile` with a tiny run's settings, and `extra`.
ember_test::ChildResult train_profiled(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      EMBER_CLI_PATH,    "train", "--out",       out.string(), "--profile",         "--envs", "2",
      "--steps-per-env", "32",    "--minibatch", "64",         "--max-transitions", "64"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (const std::string& s : ember_test::short_train_args(8, 20)) argv.push_back(s);
  ember_test::ChildOptions o;
  o.timeout_s = 120;
  return ember_test::run_child(argv, o);
}

// A tiny `ember train --profile`: its kernel table counts the trace's launches program by
// program, and its graphs include each realize's fused graph.
TEST_F(Viz, TrainProfileWritesTheKernelTableTraceAndGraphs) {
  const ember_test::ChildResult r = train_profiled(root / "p", {"--passes", "1"});
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path prof = root / "p" / "profile";
  const json trace = json::parse(slurp(prof / "trace.json"));
  const json table = json::parse(slurp(prof / "trace.kernels.json"));
  std::map<std::string, int64_t> launches;  // by program id, from the trace
  for (const json& e : trace["traceEvents"])
    if (e.value("cat", "") == "kernel") launches[e["args"]["program"]]++;
  ASSERT_FALSE(launches.empty());
  ASSERT_EQ(table["kernels"].size(), launches.size());
  for (const json& k : table["kernels"]) {
    EXPECT_EQ(k["launches"], launches[k["program"]]) << k["name"];
    EXPECT_FALSE(k["source"].get<std::string>().empty()) << k["name"];
  }
  size_t fused = 0;
  for (const auto& e : fs::directory_iterator(prof / "graphs"))
    fused += e.path().filename().string().ends_with(".fused.dot");
  EXPECT_GT(fused, 0u);
  EXPECT_NE(r.output.find("profile:    "), std::string::npos) << r.output;
}

// A --profile run refused because its --out holds another run writes nothing into that run.
TEST_F(Viz, TrainProfileLeavesAnotherRunsDirectoryAlone) {
  const ember_test::ChildResult r = train_profiled(root / "a", {});
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("is not empty"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(root / "a" / "profile"));
}

// Graphviz's dot draws the Graphs view where it is installed (scripts/install-deps.sh's test set
// installs it; CMake found it: EMBER_HAVE_DOT); a missing or failing dot gives its reason, and
// the API answers the page with it (the page then lays the DOT out itself).
TEST_F(Viz, GraphvizDrawsGraphsAndAFailingDotSaysWhy) {
  const fs::path graphs = root / "a" / "profile" / "graphs";
  write(graphs / "realize-00000.fused.dot",
        "digraph ops {\n  subgraph cluster_k0 {\n    label=\"0: E_4\";\n"
        "    n0 [label=\"ADD\", shape=ellipse];\n    n1 [label=\"MUL\", shape=ellipse];\n  }\n"
        "  n2 [label=\"BUFFER\", shape=box];\n  n2 -> n1;\n  n1 -> n0;\n}\n");
  const fs::path dot = graphs / "realize-00000.fused.dot";
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  const fs::path fake = base / "fake-bin", empty = base / "empty-bin";
  write(fake / "dot", "#!/bin/sh\necho 'Error: <stdin>: syntax error in line 7' >&2\nexit 1\n");
  fs::permissions(fake / "dot", fs::perms(0755));
  fs::create_directories(empty);
  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const std::string svg_url = "/api/graph?run=a&name=realize-00000&kind=fused&format=svg";

  setenv("PATH", fake.c_str(), 1);
  ember::viz::Rendered r = ember::viz::render_svg(dot);
  EXPECT_TRUE(r.svg.empty());
  EXPECT_TRUE(r.installed);
  EXPECT_NE(r.error.find("syntax error in line 7"), std::string::npos) << r.error;
  Reply reply = get(port, svg_url);
  EXPECT_EQ(reply.status, 500);
  EXPECT_NE(reply.body.find("syntax error in line 7"), std::string::npos) << reply.body;

  setenv("PATH", empty.c_str(), 1);
  r = ember::viz::render_svg(dot);
  EXPECT_FALSE(r.installed);
  EXPECT_NE(r.error.find("not installed"), std::string::npos) << r.error;
  EXPECT_EQ(get(port, svg_url).status, 404);
  EXPECT_EQ(json::parse(get(port, "/api/info").body)["graphviz"], false);
  setenv("PATH", path.c_str(), 1);
  // The in-page layout's input stays served whatever dot does.
  EXPECT_EQ(get(port, "/api/graph?run=a&name=realize-00000&kind=fused&format=dot").body,
            slurp(dot));

#ifdef EMBER_HAVE_DOT
  r = ember::viz::render_svg(dot);
  ASSERT_EQ(r.error, "");
  EXPECT_NE(r.svg.find("<svg"), std::string::npos);
  reply = get(port, svg_url);
  EXPECT_EQ(reply.status, 200);
  size_t clusters = 0, nodes = 0;
  for (size_t at = 0; (at = reply.body.find("class=\"cluster\"", at)) != std::string::npos; at++)
    clusters++;
  for (size_t at = 0; (at = reply.body.find("class=\"node\"", at)) != std::string::npos; at++)
    nodes++;
  EXPECT_EQ(clusters, 1u);  // the kernel's box
  EXPECT_EQ(nodes, 3u);
  EXPECT_EQ(json::parse(get(port, "/api/info").body)["graphviz"], true);
#else
  std::printf("Graphviz's dot was not found when configured: its drawing is not checked\n");
#endif
  server.stop();
  serving.join();
}

// `depth` arrays inside each other, as {"x": [[...]]}.
std::string nested(int depth) {
  return "{\"x\":" + std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']') + "}";
}

TEST(VizJson, NestingDeeperThanTheLimitIsAnErrorBeforeParsing) {
  using ember::viz::kMaxJsonDepth;
  using ember::viz::parse_json;
  EXPECT_TRUE(parse_json(nested(kMaxJsonDepth - 1), "f").ok());  // the object is one level
  const auto deep = parse_json(nested(kMaxJsonDepth), "f.json");
  EXPECT_EQ(deep.error, "f.json: nested deeper than 256 levels");
  EXPECT_FALSE(parse_json(nested(200000), "f").ok());
  // Brackets inside strings (escaped quotes too) are not nesting.
  const auto text = parse_json("{\"s\": \"\\\"" + std::string(1000, '[') + "\"}", "f");
  ASSERT_TRUE(text.ok()) << text.error;
  EXPECT_EQ(text.value["s"].get<std::string>().size(), 1001u);
  EXPECT_NE(parse_json("{", "f.json").error.find("f.json: not JSON"), std::string::npos);
}

// Every JSON file viz reads from the runs folder nested 200000 deep (nlohmann::json would
// recurse on it and overflow the stack): each request names the file and the server goes on.
TEST_F(Viz, DeeplyNestedRecordsAreErrorsAndTheServerKeepsRunning) {
  const std::string deep = nested(200000);
  write(root / "deep" / "onnx-profile.json", deep);
  write(root / "deeprun" / "run.json", deep);
  write(root / "b" / "run.json", "{}");
  write(root / "b" / "epochs.jsonl", deep + "\n{\"epoch\":0}\n");
  write(root / "b" / "profile" / "trace.kernels.json", deep);
  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const Reply list = get(port, "/api/onnx");
  ASSERT_EQ(list.status, 200) << list.head;
  const json onnx = json::parse(list.body);
  ASSERT_EQ(onnx.size(), 1u) << onnx;
  EXPECT_EQ(onnx[0]["id"], "deep");
  EXPECT_NE(onnx[0]["error"].get<std::string>().find("onnx-profile.json: nested deeper than 256"),
            std::string::npos);
  const Reply one = get(port, "/api/onnx/profile?id=deep");
  EXPECT_EQ(one.status, 500);
  EXPECT_NE(json::parse(one.body)["error"].get<std::string>().find("nested deeper than 256"),
            std::string::npos);
  const json runs = json::parse(get(port, "/api/runs").body);
  bool listed = false;
  for (const json& r : runs)
    if (r["id"] == "deeprun") {
      listed = true;
      EXPECT_NE(r["error"].get<std::string>().find("run.json: nested deeper"), std::string::npos);
    }
  EXPECT_TRUE(listed) << runs;
  EXPECT_EQ(json::parse(get(port, "/api/epochs?run=b").body).size(), 1u);  // the deep line left out
  const Reply kernels = get(port, "/api/kernels?run=b");
  EXPECT_EQ(kernels.status, 500);
  EXPECT_NE(json::parse(kernels.body)["error"].get<std::string>().find("trace.kernels.json"),
            std::string::npos);
  EXPECT_EQ(kernels.head.find("EXCEPTION_WHAT"), std::string::npos) << kernels.head;
  EXPECT_EQ(get(port, "/").status, 200);
  server.stop();
  serving.join();
}

// Malformed onnx-profile.json files (not JSON; fields of the wrong type) are listed with their
// error beside the good ones (a nested one too), and served as {error} bodies that name the file.
TEST_F(Viz, MalformedOnnxProfilesAreListedWithTheirErrorBesideTheGoodOnes) {
  const std::string good = R"({"model": "m.onnx", "nodes": [{"op_type": "Relu"}], "groups": []})";
  write(root / "good" / "onnx-profile.json", good);
  write(root / "two" / "f" / "onnx-profile.json", good);
  write(root / "two" / "f" / "inner" / "onnx-profile.json", good);
  write(root / "notjson" / "onnx-profile.json", "{\"model\": ");
  write(root / "types" / "onnx-profile.json", R"({"nodes": [{"op_type": 5}]})");
  write(root / "array" / "onnx-profile.json", "[1, 2]");
  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const Reply list = get(port, "/api/onnx");
  ASSERT_EQ(list.status, 200) << list.head;
  EXPECT_EQ(list.head.find("EXCEPTION_WHAT"), std::string::npos) << list.head;
  std::map<std::string, json> by_id;
  for (const json& p : json::parse(list.body)) by_id[p["id"]] = p;
  ASSERT_EQ(by_id.size(), 6u) << list.body;
  for (const char* id : {"good", "two/f", "two/f/inner"}) {
    EXPECT_EQ(by_id[id]["nodes"], 1) << id;
    EXPECT_FALSE(by_id[id].contains("error")) << id;
  }
  const auto error = [&](const char* id) { return by_id[id].value("error", std::string()); };
  EXPECT_NE(error("notjson").find("notjson/onnx-profile.json: not JSON"), std::string::npos);
  EXPECT_NE(error("types").find("types/onnx-profile.json: node 0's 'op_type' is not a string"),
            std::string::npos);
  EXPECT_NE(error("array").find("not a profile (a JSON array"), std::string::npos);
  const Reply bad = get(port, "/api/onnx/profile?id=notjson");
  EXPECT_EQ(bad.status, 500);
  EXPECT_NE(
      json::parse(bad.body)["error"].get<std::string>().find("notjson/onnx-profile.json: not JSON"),
      std::string::npos)
      << bad.body;
  const Reply types = get(port, "/api/onnx/profile?id=types");
  EXPECT_EQ(types.status, 500);
  EXPECT_NE(types.body.find("types/onnx-profile.json: node 0's 'op_type' is not a string"),
            std::string::npos)
      << types.body;
  write(root / "types" / "onnx-profile.json", R"({"nodes": "abc"})");
  EXPECT_NE(get(port, "/api/onnx/profile?id=types").body.find("'nodes' is not an array of objects"),
            std::string::npos);
  EXPECT_EQ(json::parse(get(port, "/api/onnx/profile?id=two%2Ff%2Finner").body), json::parse(good));
  const Reply empty = get(port, "/api/onnx/profile?id=");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(json::parse(empty.body)["error"], "missing ?id=");
  server.stop();
  serving.join();
}

#ifdef EMBER_HAVE_ONNX
// A 4-node model (MatMul, Add, Relu, ReduceMean) profiled by `ember onnx run --profile`: the API
// lists it with the model's node count and op types, every node's kernels are found (its own or
// its fused group's), and the per-node times are non-negative and sum to the run's kernel time.
TEST_F(Viz, OnnxProfileGivesTheModelsGraphAndPerNodeTimes) {
  onnx_test::ModelBuilder b(13);
  b.input({"x", onnx_test::kF32, {4, 8}}).output({"m", onnx_test::kF32, {4}});
  std::vector<float> w(8 * 3), bias = {0.5f, -0.25f, 1.f};
  for (size_t i = 0; i < w.size(); i++) w[i] = 0.125f * static_cast<float>(i % 5) - 0.25f;
  b.initializer("W", w, {8, 3});
  b.initializer("B", bias, {3});
  b.node("MatMul", {"x", "W"}, {"y"}, "proj");
  b.node("Add", {"y", "B"}, {"z"}, "bias");
  b.node("Relu", {"z"}, {"r"}, "act");
  auto& mean = b.node("ReduceMean", {"r"}, {"m"}, "pool");
  onnx_test::ModelBuilder::attr_ints(mean, "axes", {1});
  onnx_test::ModelBuilder::attr_int(mean, "keepdims", 0);
  write(base / "model.onnx", b.bytes());
  ember_test::ChildOptions o;
  o.timeout_s = 120;
  const ember_test::ChildResult run = ember_test::run_child(
      {EMBER_CLI_PATH, "onnx", "run", (base / "model.onnx").string(), "--profile",
       (root / "models" / "tiny").string(), "--repeat", "3", "--threads", "1"},
      o);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("onnx-profile.json (4 nodes"), std::string::npos) << run.output;

  ember::viz::Server server({.runs_dir = root.string(), .host = "127.0.0.1", .port = 0});
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  const json list = json::parse(get(port, "/api/onnx").body);
  ASSERT_EQ(list.size(), 1u) << list;
  EXPECT_EQ(list[0]["id"], "models/tiny");
  EXPECT_EQ(list[0]["nodes"], 4);
  EXPECT_EQ(list[0]["op_types"], json({{"MatMul", 1}, {"Add", 1}, {"Relu", 1}, {"ReduceMean", 1}}));
  const json p = json::parse(get(port, "/api/onnx/profile?id=models%2Ftiny").body);
  EXPECT_EQ(p, json::parse(slurp(root / "models" / "tiny" / "onnx-profile.json")));
  ASSERT_EQ(p["nodes"].size(), 4u);
  const std::vector<std::string> ops = {"MatMul", "Add", "Relu", "ReduceMean"};
  std::vector<bool> grouped(4, false);
  for (const json& g : p["groups"]) {
    EXPECT_GE(g["nodes"].size(), 2u) << g;
    EXPECT_GE(g["seconds"].get<double>(), 0.0);
    EXPECT_GE(g["launches"].get<int>(), 1);
    for (const json& n : g["nodes"]) grouped[n.get<int>()] = true;
  }
  double nodes_s = 0, groups_s = 0;
  for (size_t i = 0; i < 4; i++) {
    const json& n = p["nodes"][i];
    EXPECT_EQ(n["op_type"], ops[i]);
    EXPECT_GE(n["seconds"].get<double>(), 0.0);
    // Each node's ops run in some kernel: its own launches, or its fused group's.
    EXPECT_TRUE(n["launches"].get<int>() > 0 || grouped[i]) << n;
    EXPECT_EQ(n["group"].is_null(), !grouped[i]) << n;
    nodes_s += n["seconds"].get<double>();
  }
  for (const json& g : p["groups"]) groups_s += g["seconds"].get<double>();
  const double total = p["kernel_s"];
  EXPECT_GT(total, 0.0);
  EXPECT_LE(nodes_s, total * (1 + 1e-9));
  EXPECT_NEAR(nodes_s + groups_s + p["unattributed_s"].get<double>(), total, total * 1e-9);
  // The launches in order (scripts/onnx_bench_layers.py's per-layer view): their seconds sum to
  // kernel_s, and a node's own launches are those that compute its ops alone.
  double launches_s = 0;
  std::vector<int> alone(4, 0);
  ASSERT_FALSE(p["launches"].empty());
  for (const json& l : p["launches"]) {
    launches_s += l["seconds"].get<double>();
    EXPECT_FALSE(l["kernel"].get<std::string>().empty()) << l;
    if (l["nodes"].size() == 1) alone[l["nodes"][0].get<int>()]++;
  }
  EXPECT_NEAR(launches_s, total, total * 1e-9);
  for (size_t i = 0; i < 4; i++) EXPECT_EQ(alone[i], p["nodes"][i]["launches"].get<int>()) << i;
  EXPECT_EQ(p["nodes"][0]["shapes"][0]["shape"], json({4, 3}));
  EXPECT_EQ(p["nodes"][3]["shapes"][0]["shape"], json({4}));
  EXPECT_EQ(p["runs"], 3);
  for (const char* bad : {"/api/onnx/profile?id=..", "/api/onnx/profile?id=%2e%2e",
                          "/api/onnx/profile?id=escape", "/api/onnx/profile?id=%2Fetc"})
    EXPECT_EQ(get(port, bad).status, 403) << bad;
  EXPECT_EQ(get(port, "/api/onnx/profile?id=a").status, 404);  // a run, not a profile
  EXPECT_EQ(get(port, "/api/onnx/profile").status, 400);
  server.stop();
  serving.join();
}
#endif

}  // namespace
