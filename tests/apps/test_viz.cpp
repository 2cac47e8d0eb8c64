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
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../support/child_process.h"
#include "../support/train_args.h"
#include "viz/confine.h"
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

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A status code and body, from one raw HTTP/1.1 request: the target goes out byte for byte (no
// client library normalises or re-encodes it).
struct Reply {
  int status = 0;
  std::string body;
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

// A tiny `ember train --profile`: its kernel table counts the trace's launches program by
// program, and its graphs include each realize's fused graph.
TEST_F(Viz, TrainProfileWritesTheKernelTableTraceAndGraphs) {
  std::vector<std::string> argv = {EMBER_CLI_PATH,
                                   "train",
                                   "--out",
                                   (root / "p").string(),
                                   "--profile",
                                   "--envs",
                                   "2",
                                   "--steps-per-env",
                                   "32",
                                   "--minibatch",
                                   "64",
                                   "--passes",
                                   "1",
                                   "--max-transitions",
                                   "64"};
  for (const std::string& s : ember_test::short_train_args(8, 20)) argv.push_back(s);
  ember_test::ChildOptions o;
  o.timeout_s = 120;
  const ember_test::ChildResult r = ember_test::run_child(argv, o);
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
  std::vector<std::string> argv = {EMBER_CLI_PATH,
                                   "train",
                                   "--out",
                                   (root / "a").string(),
                                   "--profile",
                                   "--envs",
                                   "2",
                                   "--steps-per-env",
                                   "32",
                                   "--minibatch",
                                   "64",
                                   "--max-transitions",
                                   "64"};
  for (const std::string& s : ember_test::short_train_args(8, 20)) argv.push_back(s);
  ember_test::ChildOptions o;
  o.timeout_s = 120;
  const ember_test::ChildResult r = ember_test::run_child(argv, o);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("is not empty"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(root / "a" / "profile"));
}

}  // namespace
