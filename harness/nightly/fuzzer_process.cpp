#include "harness/nightly/fuzzer_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <regex>
#include <sstream>
#include <thread>

#include "core/errors.h"

extern char** environ;

namespace kprop {

FuzzerStats parse_fuzzer_log(const std::string& text) {
  // "#52413: cov: 1809 ft: 6231 corp: 310 exec/s 1747 oom/timeout/crash: 0/0/2 time: 31s ..."
  // (fork mode) or "#52413\tNEW    cov: 1809 ft: 6231 corp: 310/20Kb ... exec/s: 1747 ..."
  static const std::regex line(R"(^#(\d+)[:\t ].*cov: \d+)");
  // (a word of its own: "dft_time: 0" is not the time)
  static const std::regex number(R"((?:^| )(cov|ft|corp|exec/s|time):? (\d+))");
  static const std::regex faults(R"(oom/timeout/crash: (\d+)/(\d+)/(\d+))");
  FuzzerStats s;
  std::istringstream in(text);
  std::string l, last;
  while (std::getline(in, l))
    if (std::regex_search(l, line)) last = l;
  if (last.empty()) return s;
  s.executions = std::stoll(last.substr(1));
  for (std::sregex_iterator it(last.begin(), last.end(), number), end; it != end; ++it) {
    const std::string key = (*it)[1];
    const int64_t v = std::stoll((*it)[2]);
    if (key == "cov") s.coverage = v;
    else if (key == "ft") s.features = v;
    else if (key == "corp") s.corpus = v;
    else if (key == "exec/s") s.exec_per_second = v;
    else if (key == "time") s.seconds = v;
  }
  std::smatch m;
  if (std::regex_search(last, m, faults)) {
    s.ooms = std::stoll(m[1]);
    s.timeouts = std::stoll(m[2]);
    s.crashes = std::stoll(m[3]);
  }
  return s;
}

FuzzerProcess::FuzzerProcess(FuzzerLaunch launch) : launch_(std::move(launch)) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!launch_.environment.count(entry.substr(0, entry.find('=')))) env_text.push_back(entry);
  }
  for (const auto& [k, v] : launch_.environment) env_text.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  argv.push_back(launch_.binary.data());
  for (auto& a : launch_.arguments) argv.push_back(a.data());
  argv.push_back(nullptr);

  // fork and exec rather than posix_spawn: the child asks to be killed when kprop dies
  // (PR_SET_PDEATHSIG), so a nightly run killed with SIGKILL leaves no fuzzer running.
  // Between fork and exec only async-signal-safe calls: kprop has threads.
  const int log = open(launch_.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0)
    throw FileError(fmt::format("{}: cannot be written: {}", launch_.log, std::strerror(errno)));
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // kprop died before the line above
    setpgid(0, 0);  // its own process group: stopping it stops the jobs it forks too
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(log, 1);
    dup2(log, 2);
    execve(launch_.binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  const int error = errno;
  close(log);
  if (pid_ < 0)
    throw FileError(fmt::format("{}: cannot be started: {}", launch_.binary, std::strerror(error)));
  setpgid(pid_, pid_);  // also here, so that stop() never races the child's own call
}

FuzzerProcess::~FuzzerProcess() { stop(2); }

bool FuzzerProcess::running() {
  if (pid_ < 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return false;
}

void FuzzerProcess::stop(double grace_seconds) {
  if (!running()) return;
  kill(-pid_, SIGINT);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (pid_ < 0) return;
  kill(-pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  exit_code_ = 128 + SIGKILL;
  pid_ = -1;
}

}  // namespace kprop
