// Files the readers must refuse without blocking, growing or guessing: FIFOs and devices, files of
// other programs (PyTorch checkpoints, archives, compressed files) named for what they are,
// headers that declare more than the file backs; outputs that are not regular files; failed
// writes that leave nothing behind; staging files removed on a signal; messages safe to print.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include "io/file_magic.h"
#include "sparseflow/build.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/io.h"
#include "sparseflow/process.h"
#include "sparseflow/statistics.h"
#include "support/file_checks.h"
#include "support/mapped_file.h"
#include "support/quote.h"
#include "support/temp_paths.h"
#include "unit/io/io_test_helpers.h"

namespace sparseflow::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::ScratchDir;

const std::string kWest = testing::dataPath("suitesparse/LAGraph/data/west0067.mtx");

void put(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---- messages -------------------------------------------------------------------------------

TEST(Quote, EscapesWhatATerminalOrADecoderWouldActOn) {
  EXPECT_EQ(support::quoted("abc"), "'abc'");
  EXPECT_EQ(support::quoted("\x1b[31mred"), "'\\x1b[31mred'");  // ESC: a terminal escape
  EXPECT_EQ(support::quoted("a\nb\tc\x7f"), "'a\\x0ab\\x09c\\x7f'");
  EXPECT_EQ(support::quoted("it's \\"), "'it\\x27s \\x5c'");
  EXPECT_EQ(support::quoted("\xff\xfe ok"), "'\\xff\\xfe ok'");     // not UTF-8
  EXPECT_EQ(support::quoted("\xc0\xaf"), "'\\xc0\\xaf'");           // overlong '/'
  EXPECT_EQ(support::quoted("\xed\xa0\x80"), "'\\xed\\xa0\\x80'");  // a surrogate
  EXPECT_EQ(support::quoted("\xc2\x9b"
                            "2J"),
            "'\\xc2\\x9b2J'");                                          // C1 CSI
  EXPECT_EQ(support::quoted("x\xe2\x80\xaey"), "'x\\xe2\\x80\\xaey'");  // right-to-left override
  EXPECT_EQ(support::quoted("gewicht_\xc3\xa4\xe2\x82\xac"), "'gewicht_\xc3\xa4\xe2\x82\xac'");
  EXPECT_EQ(support::quoted(std::string(100, 'x'), 10), "'xxxxxxxxxx...'");
  // A character cut by the limit is left out whole, never split into invalid UTF-8.
  EXPECT_EQ(support::quoted("ab\xe2\x82\xac", 3), "'ab...'");
}

TEST(Quote, PrintableKeepsTheLayoutOfMessages) {
  EXPECT_EQ(support::printable("a.mtx:3: expected a value, found '\\x1b'\n  hint\tx"),
            "a.mtx:3: expected a value, found '\\x1b'\n  hint\tx");
  EXPECT_EQ(support::printable("raw \x1b]0;title\x07 and \xff"),
            "raw \\x1b]0;title\\x07 and \\xff");
  EXPECT_TRUE(support::isValidUtf8(support::printable("\xff\xc3\x28 \xf0\x28\x8c\xbc")));
  EXPECT_EQ(printableMessage("\x1b"), "\\x1b");  // the public face
}

TEST(Quote, ReadersQuoteFileContentSafely) {
  ScratchDir dir;
  const std::string path = dir.file("esc.mtx");
  put(path, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 \x1b[2J\xff\n");
  const std::string message = expectError([&] { read(path); }, ErrorCode::kParseError,
                                          {"esc.mtx:3:", "found '\\x1b[2J\\xff'"});
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
}

TEST(Quote, NamesAndParserMessagesFromHeadersAreEscaped) {
  const auto file = [](const std::string& header) {
    std::string out(8, '\0');
    out[0] = static_cast<char>(header.size());
    return out + header;
  };
  // A tensor name with a terminal escape (JSON allows it as \u001b) and an unknown dtype.
  std::string message = expectError(
      [&] {
        Checkpoint::parse(file(R"({"w\u001b[31m":{"dtype":"Q9","shape":[],"data_offsets":[0,0]}})"),
                          "n.safetensors");
      },
      ErrorCode::kNotSupported, {"n.safetensors: tensor 'w\\x1b[31m': dtype 'Q9'"});
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  // Bytes that are not UTF-8 inside the JSON: the parser's own message quotes them.
  message = expectError([&] { Checkpoint::parse(file("{\"\xff\x1b\": 1}"), "u.safetensors"); },
                        ErrorCode::kParseError, {"u.safetensors: header is not valid JSON"});
  EXPECT_TRUE(support::isValidUtf8(message)) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

// ---- inputs that are not regular files ----------------------------------------------------------

TEST(RegularFilesOnly, AFifoIsRefusedWithoutBlocking) {
  ScratchDir dir;
  const std::string fifo = dir.file("pipe.mtx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without a writer, a blocking open would wait forever; run it aside and unblock it if need be.
  auto reading = std::async(std::launch::async, [&] {
    try {
      read(fifo);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("read succeeded");
  });
  if (reading.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the open return
    reading.wait();
    if (writer >= 0) ::close(writer);
    FAIL() << "reading a FIFO blocked";
  }
  const std::string message = reading.get();
  EXPECT_NE(message.find("cannot read '" + fifo +
                         "': it is a FIFO (named pipe); sparseflow "
                         "reads regular files only"),
            std::string::npos)
      << message;
}

TEST(RegularFilesOnly, DevicesAndDirectoriesAreRefusedWhateverTheirName) {
  ScratchDir dir;
  for (const char* name : {"zero.mtx", "zero.npy", "zero.sft", "zero.safetensors", "zero.tns",
                           "zero.smtx", "zero.rua", "zero"}) {
    SCOPED_TRACE(name);
    fs::create_symlink("/dev/zero", dir.file(name));
    expectError([&] { read(dir.file(name)); }, ErrorCode::kIoError,
                {dir.file(name), "it is a character device; sparseflow reads regular files only"});
  }
  expectError([&] { Checkpoint::open(dir.file("zero.safetensors")); }, ErrorCode::kIoError,
              {"character device"});
  expectError([&] { readCoo(dir.path().string()); }, ErrorCode::kIoError, {"it is a directory"});
  // A link to a regular file is read through.
  fs::create_symlink(kWest, dir.file("west.mtx"));
  EXPECT_EQ(read(dir.file("west.mtx")).shape(), (std::vector<int64_t>{67, 67}));
}

// ---- files of other programs ---------------------------------------------------------------

struct Foreign {
  const char* name;
  std::string bytes;
  const char* says;
};

std::string zipWithFirstEntry(const std::string& entry) {
  std::string z = "PK\x03\x04";
  z += std::string(22, '\0');
  z += static_cast<char>(entry.size());
  z += '\0';
  z += std::string(2, '\0');  // extra field length
  z += entry;
  return z + std::string(64, '\0');
}

TEST(ForeignFiles, AreNamedForWhatTheyAreWithWhatToDo) {
  ScratchDir dir;
  std::string tar(600, '\0');
  tar.replace(0, 8, "data.mtx");
  tar.replace(257, 5, "ustar");
  const std::vector<Foreign> cases = {
      {"model.pt", zipWithFirstEntry("archive/data.pkl"),
       "is a PyTorch checkpoint (a zip archive written by torch.save)"},
      {"weights.bin", zipWithFirstEntry("model/data/0"), "is a PyTorch checkpoint"},
      {"arrays.npz", zipWithFirstEntry("w.npy"), "is a NumPy .npz archive"},
      {"a.zip", zipWithFirstEntry("readme.txt"), "is a zip archive (first entry 'readme.txt')"},
      {"old.pt",
       std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14) + "junk..",
       "is a Python pickle (protocol 2; torch.save before PyTorch 1.6"},
      {"w.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(40, '\0'), "is an HDF5 file"},
      {"m.mtx.gz", std::string("\x1f\x8b\x08\x00", 4) + "xxxxxxxx",
       "is compressed with gzip; decompress it first (gunzip -k "},
      {"m.mtx.xz",
       std::string("\xfd"
                   "7zXZ\0",
                   6) +
           "xxxx",
       "is compressed with xz"},
      {"m.mtx.zst", std::string("\x28\xb5\x2f\xfd", 4) + "xxxx", "is compressed with zstd"},
      {"m.mtx.bz2", "BZh91AY&SYxxxx", "is compressed with bzip2"},
      {"m.tar", tar, "is a tar archive"},
      {"llm.gguf", "GGUF\x03\0\0\0xxxxxxxx", "is a GGUF model file"},
      {"model.onnx", "\x08\x07\x12\x07pytorch", "is an ONNX model"},
      {"utf16.mtx", "\xff\xfe%\0%\0M\0", "is UTF-16 text"},
  };
  for (const Foreign& f : cases) {
    SCOPED_TRACE(f.name);
    const std::string path = dir.file(f.name);
    put(path, f.bytes);
    const std::string message =
        expectError([&] { read(path); }, ErrorCode::kNotSupported, {path + " " + f.says});
    EXPECT_EQ(describeForeignFile(f.bytes, path).empty(), false);
  }
  // Whatever the extension claims: a zip named .mtx, .npy, .sft or .safetensors is still a zip.
  for (const char* name : {"fake.mtx", "fake.npy", "fake.sft", "fake.safetensors", "fake.smtx"}) {
    SCOPED_TRACE(name);
    put(dir.file(name), zipWithFirstEntry("archive/data.pkl"));
    expectError([&] { read(dir.file(name)); }, ErrorCode::kNotSupported,
                {"is a PyTorch checkpoint",
                 "safetensors.torch.save_file(torch.load('" + dir.file(name) + "')"});
  }
}

TEST(ForeignFiles, ASafetensorsHeaderLengthThatLooksLikeAPickleStillReads) {
  // A header of 0x280 bytes starts the file with 80 02, a pickle's first two bytes.
  std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  header.append(0x280 - header.size(), ' ');
  std::string file = std::string("\x80\x02\0\0\0\0\0\0", 8) + header + std::string(4, '\0');
  ScratchDir dir;
  put(dir.file("w.safetensors"), file);
  EXPECT_EQ(read(dir.file("w.safetensors")).shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(describeForeignFile(file, "w.safetensors"), "");
}

TEST(ForeignFiles, OrdinaryInputsAreNotTakenForForeignOnes) {
  for (const std::string& f : testing::dataFilesWithExtension(".mtx")) {
    support::MappedFile file(testing::dataPath(f));
    EXPECT_EQ(describeForeignFile(file.data(), f), "") << f;
  }
  EXPECT_EQ(describeForeignFile("0 0 1.5\n1 1 2\n", "t.txt"), "");
  EXPECT_EQ(describeForeignFile("\x93NUMPY", "a.npy"), "");
}

// ---- sizes a header declares -------------------------------------------------------------------

TEST(DeclaredSizes, AHugeShapeInASmallTextFileIsBoundedByTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("big.mtx");
  put(path, "%%MatrixMarket matrix coordinate real general\n200000000 200000000 1\n1 1 1.0\n");
  // csr needs 2*10^8 + 1 row pointers (800 MB) for one entry of a 76-byte file: refused, named.
  expectError([&] { read(path); }, ErrorCode::kOutOfMemory,
              {path + ": a csr tensor of 200000000 x 200000000 would take 763 MiB",
               "not with the 1 entries of this 76-byte file", "over the limit of 256 MiB",
               "read it in a format that grows with its entries only (coo)",
               "ReadOptions::storageLimit; --storage-limit"});
  ReadOptions asCoo;
  asCoo.format = "coo";
  const Tensor coo = read(path, asCoo);
  EXPECT_EQ(coo.shape(), (std::vector<int64_t>{200000000, 200000000}));
  EXPECT_LT(coo.storageBytes(), 100);
  // The statistics of `sparseflow info` grow with the entries too, and stay right.
  const MatrixStatistics s = matrixStatistics(coo);
  EXPECT_EQ(s.nnz, 1);
  EXPECT_EQ(s.emptyRows, 200000000 - 1);
  EXPECT_EQ(s.emptyCols, 200000000 - 1);
  EXPECT_EQ(s.minRow, 0);
  EXPECT_EQ(s.maxRow, 1);
  // Dense is refused the same way; an explicit limit is honoured both ways.
  ReadOptions dense;
  dense.format = "dense";
  dense.storageLimit = int64_t{1} << 40;
  expectError([&] { read(path, dense); }, ErrorCode::kOutOfMemory, {"a dense tensor"});
  ReadOptions tight;
  tight.storageLimit = 1000;
  expectError([&] { read(kWest, tight); }, ErrorCode::kOutOfMemory,
              {"over the limit of 1000 bytes"});
  ReadOptions none;
  none.storageLimit = -1;
  EXPECT_EQ(read(kWest, none).shape(), (std::vector<int64_t>{67, 67}));
}

TEST(DeclaredSizes, CompressedRecordsMustHoldWhatTheirShapeNeeds) {
  // A sparseflow record declaring a dense 2^32 x 2^32 tensor whose values array is empty.
  const auto record = [](const std::string& shape, const std::string& format) {
    return nlohmann::json{
        {"version", 1},
        {"tensors",
         {{"w", {{"format", format}, {"shape", nlohmann::json::parse(shape)}, {"dtype", "F32"}}}}}}
        .dump();
  };
  const auto file = [&](const std::string& shape, const std::string& format, int64_t values) {
    nlohmann::json header = {
        {"__metadata__", {{"sparseflow", record(shape, format)}}},
        {"w.values", {{"dtype", "F32"}, {"shape", {values}}, {"data_offsets", {0, 4 * values}}}}};
    std::string text = header.dump();
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i)
      out[static_cast<size_t>(i)] = static_cast<char>(text.size() >> (8 * i));
    return out + text + std::string(static_cast<size_t>(4 * values), '\0');
  };
  EXPECT_EQ(Checkpoint::parse(file("[2, 3]", "dense", 6), "ok.safetensors").tensor("w").shape(),
            (std::vector<int64_t>{2, 3}));
  const Checkpoint wraps = Checkpoint::parse(file("[4294967296, 4294967296]", "dense", 0), "x");
  expectError([&] { wraps.tensor("w"); }, ErrorCode::kParseError,
              {"x: tensor 'w': part 0: shape [4294967296, 4294967296] in format dense declares "
               "more than 2^63 positions"});
  const Checkpoint shorter = Checkpoint::parse(file("[1000, 1000]", "dense", 4), "y");
  expectError([&] { shorter.tensor("w"); }, ErrorCode::kParseError,
              {"y: tensor 'w': byte ",
               "the values array of part 0 holds 4 elements but shape "
               "[1000,1000] in format dense needs 1000000"});
}

// ---- outputs -----------------------------------------------------------------------------------

TEST(Outputs, OnlyRegularFilesAreReplaced) {
  ScratchDir dir;
  const Tensor t = read(kWest);
  const std::string fifo = dir.file("out.sft");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expectError([&] { write(fifo, t); }, ErrorCode::kIoError,
              {"cannot write '" + fifo +
               "': it is a FIFO (named pipe); sparseflow writes "
               "regular files only"});
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  fs::create_symlink("/dev/null", dir.file("null.mtx"));
  expectError([&] { write(dir.file("null.mtx"), t); }, ErrorCode::kIoError,
              {"it is a character device"});
  fs::create_directory(dir.file("d.npy"));
  expectError([&] { write(dir.file("d.npy"), t); }, ErrorCode::kIoError, {"it is a directory"});
  expectError([&] { write(dir.file("missing/x.sft"), t); }, ErrorCode::kIoError,
              {"cannot write '" + dir.file("missing/x.sft") + "': its folder '" +
               dir.file("missing") + "': No such file or directory"});
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"d.npy", "null.mtx", "out.sft"}));
  // A dangling link is replaced like a missing file.
  fs::create_symlink(dir.file("nowhere"), dir.file("dangling.sft"));
  write(dir.file("dangling.sft"), t);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir.file("dangling.sft"))));
}

/// Runs `body` in a child process and returns its wait status.
template <typename Body>
int inChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(Outputs, AFailedWriteSaysWhyAndLeavesNothing) {
  // A full disk, simulated with a file size limit (the write fails with EFBIG, not a signal).
  ScratchDir dir;
  const std::string out = dir.file("big.npy");
  const std::string report = dir.file("report.txt");
  const int status = inChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {
      4096, 4096
    };
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message = "no error";
    try {
      std::vector<double> zeros(10000, 1.0);
      write(out, fromDense({100, 100}, zeros.data(), Format::parse("dense", 2)));
    } catch (const Error& e) {
      message = e.what();
    }
    std::ofstream(report) << message.substr(0, 3000);
  });
  ASSERT_TRUE(WIFEXITED(status));
  std::ifstream in(report);
  const std::string message((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(message.find("cannot write '" + out + "' (write failed): File too large"),
            std::string::npos)
      << message;
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"report.txt"})) << "leftovers";
  // A folder that cannot be written (as root, /sys refuses even root).
  const std::string locked = ::geteuid() == 0 ? "/sys" : dir.file("locked");
  if (::geteuid() != 0) {
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  }
  expectError([&] { write(locked + "/x.sft", read(kWest)); }, ErrorCode::kIoError,
              {"cannot write '" + locked +
               "/x.sft': cannot create a temporary file beside it: "
               "Permission denied"});
}

// ---- staging files and signals -----------------------------------------------------------------

TEST(TempPaths, RegisteredStagingPathsAreRemovedReleasedOnesKept) {
  ScratchDir dir;
  put(dir.file("a.tmp"), "a");
  put(dir.file("kept.tmp"), "k");
  fs::create_directories(dir.file("stage.tmp/sub/deeper"));
  put(dir.file("stage.tmp/x.sft"), "x");
  put(dir.file("stage.tmp/sub/deeper/y.sft"), "y");
  {
    support::TempPathRegistration a(dir.file("a.tmp"), support::TempPathRegistration::Kind::kFile);
    support::TempPathRegistration k(dir.file("kept.tmp"),
                                    support::TempPathRegistration::Kind::kFile);
    support::TempPathRegistration s(dir.file("stage.tmp"),
                                    support::TempPathRegistration::Kind::kDirectory);
    k.release();
    support::removeRegisteredTempPaths();
  }
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"kept.tmp"}));
  // Unregistered on destruction: nothing left to remove.
  put(dir.file("later.tmp"), "l");
  support::removeRegisteredTempPaths();
  EXPECT_TRUE(fs::exists(dir.file("later.tmp")));
}

TEST(TempPaths, ASignalRemovesThemAndStillEndsTheProcessWithThatSignal) {
  ScratchDir dir;
  const std::string staged = dir.file("out.sft.tmp.1.2");
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    put(staged, "partial");
    const int status = inChild([&] {
      removeTempFilesOnSignals();
      StagingPath path(staged, false);
      ::raise(sig);
      ::_exit(3);  // not reached: the signal ends the process
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    EXPECT_FALSE(fs::exists(staged));
  }
  // An ignored signal stays ignored (as under nohup): the process goes on, the file stays.
  put(staged, "partial");
  const int status = inChild([&] {
    ::signal(SIGHUP, SIG_IGN);
    removeTempFilesOnSignals();
    StagingPath path(staged, false);
    ::raise(SIGHUP);
    ::_exit(7);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
  EXPECT_TRUE(fs::exists(staged));
}

}  // namespace
}  // namespace sparseflow::io
