// write_file_atomically (harness/storage/atomic_file.h): a write that fails part-way leaves the
// old file exactly as it was and no temporary file beside it; a write that succeeds
// replaces the content whole.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "harness/storage/atomic_file.h"

namespace kprop {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AtomicFile : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kprop_atomic_" + std::to_string(getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    target_ = dir_ / "case.json";
    old_ = std::string("{\"old\": true}\n");
    std::ofstream(target_, std::ios::binary) << old_;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, ignored);
    fs::remove_all(dir_, ignored);
  }
  // Files in the folder other than the target.
  std::vector<std::string> strays() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path() != target_) out.push_back(e.path().filename().string());
    return out;
  }
  fs::path dir_, target_;
  std::string old_;
};

TEST_F(AtomicFile, ReplacesTheContentWhole) {
  const std::string fresh(100000, 'n');
  write_file_atomically(target_.string(), fresh);
  EXPECT_EQ(read_all(target_), fresh);
  EXPECT_TRUE(strays().empty());
}

TEST_F(AtomicFile, CreatesMissingFolders) {
  const fs::path deep = dir_ / "a" / "b" / "c.json";
  write_file_atomically(deep.string(), "x");
  EXPECT_EQ(read_all(deep), "x");
}

// The file-size limit stops the write part-way (the process gets EFBIG, SIGXFSZ is
// ignored): a write in place would leave the first 4096 bytes of the new content.
TEST_F(AtomicFile, AWriteThatFailsPartWayLeavesTheOldFileIntact) {
  const std::string fresh(1 << 20, 'n');
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    try {
      write_file_atomically(target_.string(), fresh);
    } catch (const FileError&) {
      _exit(0);  // refused, as it should
    } catch (...) {
      _exit(4);
    }
    _exit(1);  // claimed success
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write did not report the failure";
  EXPECT_EQ(read_all(target_), old_);
  EXPECT_TRUE(strays().empty()) << "left behind: " << strays().front();
}

// A folder the process may not write into: the rename cannot happen, nothing changes.
TEST_F(AtomicFile, AFolderItCannotWriteIntoLeavesTheOldFileIntact) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(write_file_atomically(target_.string(), std::string(5000, 'n')), FileError);
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_EQ(read_all(target_), old_);
  EXPECT_TRUE(strays().empty());
}

}  // namespace
}  // namespace kprop
