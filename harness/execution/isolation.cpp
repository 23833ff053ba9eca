#include "harness/execution/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/errors.h"
#include "harness/execution/interrupt.h"
#include "harness/execution/own_executable.h"
#include "harness/storage/case_file.h"
#include "harness/storage/verdict_json.h"

extern char** environ;

namespace kprop {

namespace {

using Clock = std::chrono::steady_clock;

IsolationStats& stats() {
  static IsolationStats s;
  return s;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One worker process and the two pipes to it.
class Worker {
 public:
  ~Worker() { stop(); }

  bool running() const { return pid_ > 0; }

  // The session this worker was started for (Session::id), 0 when none runs.
  uint64_t session() const { return running() ? session_ : 0; }

  // False when an interrupt came first (the half-started worker is killed).
  bool start(const Session& session) {
    const IsolationSettings& s = session.isolation();
    const auto started = Clock::now();
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0)
      throw std::runtime_error(fmt::format("isolation: pipe: {}", strerror(errno)));
    std::vector<std::string> args = s.command;
    if (args.empty()) {
      const auto self = own_executable();
      if (self.empty()) throw std::runtime_error("isolation: cannot find kprop's own executable");
      args = {self.string()};
    }
    const std::vector<std::string> command = args;
    args.push_back("__worker");
    args.insert(args.end(), {"--device", session.settings().device, "--oracle-device",
                             session.settings().oracle_device});
    for (const auto& lib : s.libraries) args.insert(args.end(), {"--load", lib});
    for (const auto& module : s.imports) args.insert(args.end(), {"--import", module});
    for (const auto& text : session.refusals()) args.insert(args.end(), {"--refusal", text});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    // Its own process group: a terminal's Ctrl-C goes to kprop, not to the worker.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                         POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0].c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0) {
      close(to_child[1]);
      close(from_child[0]);
      throw UsageError(
          fmt::format("isolation: cannot start {}: {}", args[0], strerror(rc)));
    }
    pid_ = pid;
    to_ = to_child[1];
    from_ = from_child[0];
    buffer_.clear();
    // A write to a worker that just died must fail with EPIPE, not kill kprop.
    signal(SIGPIPE, SIG_IGN);

    std::string line;
    const Read r = read_line(line, s.start_timeout_seconds);
    if (r == Read::interrupted) {
      end(true);
      return false;
    }
    if (r != Read::line || line.find("\"ready\"") == std::string::npos) {
      // Not a finding: kprop cannot run outside implementations at all here.
      const Fault f = r == Read::line ? Fault{} : end(r != Read::eof);
      throw UsageError(fmt::format(
          "isolation: the worker ({} __worker) did not start{}{}", fmt::join(command, " "),
          f ? ": " + f.describe() : "", r == Read::line ? ": it said " + line : ""));
    }
    session_ = session.id();
    ++stats().workers_started;
    stats().start_seconds += std::chrono::duration<double>(Clock::now() - started).count();
    return true;
  }

  enum class Read { line, eof, timeout, interrupted };

  // One line from the worker within `seconds`.
  Read read_line(std::string& line, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return Read::line;
      }
      if (Session::current().cutting_short()) return Read::interrupted;
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) return Read::timeout;
      pollfd p{from_, POLLIN, 0};
      const int n = poll(&p, 1, static_cast<int>(std::min(left * 1000.0 + 1, 1e9)));
      if (n < 0 && errno == EINTR) continue;  // a signal: the session decides
      if (n < 0) return Read::eof;
      if (n == 0) continue;  // the deadline is checked above
      char chunk[65536];
      const ssize_t got = read(from_, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return Read::eof;
      buffer_.append(chunk, static_cast<size_t>(got));
    }
  }

  bool send(const std::string& line) { return write_all(to_, line); }

  // Ends the worker (killing it first when `kill_it`) and says how it ended.
  Fault end(bool kill_it) {
    if (pid_ <= 0) return {};
    if (kill_it) kill(pid_, SIGKILL);
    close(to_);
    close(from_);
    int status = 0;
    pid_t r;
    do r = waitpid(pid_, &status, 0);
    while (r < 0 && errno == EINTR);
    pid_ = -1;
    to_ = from_ = -1;
    if (r < 0) return {Fault::Kind::crashed, "an unknown signal"};
    if (WIFSIGNALED(status)) return {Fault::Kind::crashed, signal_name(WTERMSIG(status))};
    if (WIFEXITED(status)) return {Fault::Kind::exited, std::to_string(WEXITSTATUS(status))};
    return {Fault::Kind::crashed, "an unknown signal"};
  }

  // End of input: the worker exits on its own.
  void stop() {
    if (pid_ <= 0) return;
    close(to_);
    to_ = -1;
    // It exits at once on end of input; one that does not is killed.
    for (int i = 0; i < 100 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) usleep(10000);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    close(from_);
    pid_ = -1;
    from_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
  uint64_t session_ = 0;
};

Worker& worker() {
  static Worker w;
  return w;
}

Verdict interrupted_verdict(const Case& c) {
  Verdict v;
  v.kernel = c.kernel;
  v.impl = c.impl;
  v.property = c.property;
  v.status = Verdict::Status::skipped;
  v.message = fmt::format("not run: interrupted by {}", interrupt_name());
  return v;
}

std::string format_seconds(double s) { return fmt::format("{:g}", s); }

// An error after which the process cannot be trusted with another case: a CUDA error is
// sticky (an illegal address poisons the context, and every later call fails the same
// way, whatever its case), and Triton reports the same errors in its own words.
bool leaves_process_unfit(const Verdict& v) {
  if (v.fault.kind != Fault::Kind::raised) return false;
  for (const char* sticky : {"CUDA error", "illegal memory access", "device-side assert",
                             "unspecified launch failure"})
    if (v.fault.detail.find(sticky) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return fmt::format("signal {}", sig);
}

IsolationStats isolation_stats() { return stats(); }

void stop_isolated_worker() { worker().stop(); }

Verdict evaluate_isolated(const Case& c) {
  const Session& session = Session::current();
  const IsolationSettings& s = session.isolation();
  Worker& w = worker();
  if (w.running() && w.session() != session.id()) w.stop();  // started with other settings
  const std::string request = nlohmann::json{{"case", case_to_json(c)}}.dump() + "\n";
  // A worker that died between cases (after its last answer) is replaced once.
  for (int attempt = 0;; ++attempt) {
    if (!w.running() && !w.start(session)) return interrupted_verdict(c);
    if (w.send(request)) break;
    w.end(true);
    if (attempt > 0) throw std::runtime_error("isolation: the worker does not take cases");
  }
  ++stats().cases;
  std::string line;
  switch (w.read_line(line, s.case_timeout_seconds)) {
    case Worker::Read::line: break;
    case Worker::Read::eof: return fault_verdict(c, w.end(false));
    case Worker::Read::timeout:
      w.end(true);
      return fault_verdict(c, {Fault::Kind::timed_out, format_seconds(s.case_timeout_seconds)});
    case Worker::Read::interrupted:
      w.end(true);
      return interrupted_verdict(c);
  }
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    w.end(true);
    throw std::runtime_error("isolation: the worker answered something that is not JSON: " +
                             line.substr(0, 200));
  }
  if (answer.contains("error")) {
    const auto type = answer.value("type", "");
    const auto message = answer["error"].get<std::string>();
    if (type == "case") throw CaseError(message);
    if (type == "usage") throw UsageError(message);
    throw std::runtime_error("isolated worker: " + message);
  }
  // The worker's last answer: its process is unfit for another case (it exits).
  if (answer.value("retire", false)) {
    answer.erase("retire");
    w.end(false);
  }
  return verdict_from_json(answer);
}

int serve_isolated_cases(int in_fd, int out_fd, const std::function<Verdict(const Case&)>& evaluate) {
  // Answers go to `out_fd` alone: whatever a kernel prints lands on stderr.
  const int answers = dup(out_fd);
  dup2(STDERR_FILENO, out_fd);
  // A worker never outlives kprop.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (!write_all(answers, "{\"ready\":true}\n")) return 1;
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const auto nl = buffer.find('\n');
    if (nl == std::string::npos) {
      const ssize_t got = read(in_fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return 0;  // end of input: kprop is done with this worker
      buffer.append(chunk, static_cast<size_t>(got));
      continue;
    }
    const std::string line = buffer.substr(0, nl);
    buffer.erase(0, nl + 1);
    nlohmann::json answer;
    bool unfit = false;
    try {
      const Case c = case_from_json(nlohmann::json::parse(line).at("case"), "case");
      const Verdict v = evaluate(c);
      answer = verdict_to_json(v);
      unfit = leaves_process_unfit(v);
      if (unfit) answer["retire"] = true;
    } catch (const CaseError& e) {
      answer = {{"error", e.what()}, {"type", "case"}};
    } catch (const UsageError& e) {
      answer = {{"error", e.what()}, {"type", "usage"}};
    } catch (const std::exception& e) {
      answer = {{"error", e.what()}, {"type", "other"}};
    }
    if (!write_all(answers, answer.dump() + "\n")) return 1;
    // kprop ends this worker on that answer and starts a fresh one for the next case.
    if (unfit) return 0;
  }
}

}  // namespace kprop
