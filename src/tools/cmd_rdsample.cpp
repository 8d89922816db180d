// kron rdsample --board NAME [-f FILE] [-s START] [-e END] [-v]: 003's mk_rdsample. Takes the samples
// on a board (also after the program crashed) into a kron trace file, default mk.dat, without changing
// the board. START/END select samples by index in time order (ERRATUM E27: the board has lanes, not
// one word-addressed memory); END defaults to the memory address pointer (every sample held). The work is
// recorder::snapshot_to_file (src/recorder/record_session.hpp); this file parses and prints.
//
// kron rdsample --pci-memory DUMP [--pointer P] [--config C | --simple | --circular] [--wrapped]
//               [-f FILE] [-s WORD] [-e WORD] [-v]: mk_rdsample for a PCI toolkit board's local memory
// (003 3.5): a memory image (the board model's `memimage`, which carries the Memory Address Pointer and
// the Configuration Register) or a raw dump of words from 0 (`memdump`, with --pointer) to the raw
// MultiKron II stream FILE (default mk.dat) that `kron expand|rpt --input-format mk2` read. -s/-e are
// memory word numbers, as mk_rdsample's start_addr/end_addr. Rules: src/toolkit/rdsample.hpp.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "kron/core/error.hpp"
#include "kron/format/mapped_file.hpp"
#include "models/pcib/registers.hpp"
#include "recorder/record_session.hpp"
#include "toolkit/rdsample.hpp"
#include "tools/atomic_file.hpp"
#include "tools/command.hpp"

namespace kron::tools {
namespace {
struct Args {
  std::string board, file = "mk.dat";
  std::uint64_t start = 0, end = ~std::uint64_t{0};
  bool verbose = false;
  // --pci-memory
  std::string dump;
  std::optional<std::uint32_t> pointer, config;
  bool simple = false, circular = false, wrapped = false;
  CLI::Option *start_opt = nullptr, *end_opt = nullptr;
};

int run_pci(const Args& a) {
  std::optional<std::uint32_t> config = a.config;
  try {
    // ERRATUM E130: a regular file (a FIFO or a device such as /dev/zero is refused), no larger than the
    // largest image: the header and the 4M-word memory.
    const MappedFile file(a.dump, MappedFile::Require::Regular);
    constexpr std::uint64_t kMaxDump = pcib::kImageHeaderSize + 4ull * pcib::kMemoryWords;
    if (file.size() > kMaxDump)
      throw InputError::at_offset(a.dump, kMaxDump,
                                  fmt::format("the file is {} bytes, more than {} (a memory image of the whole 4M-word "
                                              "local memory, the limit)",
                                              file.size(), kMaxDump));
    const std::span<const std::uint8_t> bytes = file.bytes();
    pcib::MemoryDump m = pcib::parse_memory_dump(a.dump, bytes, a.pointer, config);
    if (a.simple) m.config |= pcib::cfg::kWrapB;
    if (a.circular) m.config &= ~pcib::cfg::kWrapB;
    toolkit::RdsampleOptions o;
    // With --pci-memory, -s and -e are memory words (22 bits): checked whole here, never cut to 32 bits.
    for (const auto& [opt, value] : {std::pair{a.start_opt, a.start}, std::pair{a.end_opt, a.end}})
      if (*opt && value > pcib::kMemoryWords)
        throw InputError::at_offset(
            fmt::format("{} {}", opt->get_name(), value), 0,
            fmt::format("out of range 0-{} (memory words of the 4M-word local memory)", pcib::kMemoryWords));
    if (*a.start_opt) o.start = static_cast<std::uint32_t>(a.start);
    if (*a.end_opt) o.end = static_cast<std::uint32_t>(a.end);
    o.wrapped = a.wrapped;
    if (a.verbose)
      fmt::print(stderr, "kron rdsample: {}: {}, Memory Address Pointer 0x{:06x}, Configuration Register 0x{:06x}\n",
                 a.dump, m.image ? "board memory image" : "raw memory dump", m.pointer, m.config);
    const auto r = toolkit::rdsample(m, o);
    write_file_atomically(a.file, [&](std::FILE* f) {
      if (!r.stream.empty() && std::fwrite(r.stream.data(), 1, r.stream.size(), f) != r.stream.size())
        throw std::runtime_error(a.file + ": write failed");
    });
    file.check();
    fmt::print("kron rdsample: {} to {}: {}\n", a.dump, a.file, r.describe());
  } catch (const InputError& e) {
    fmt::print(stderr, "kron rdsample: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::runtime_error& e) {
    fmt::print(stderr, "kron rdsample: {}\n", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

int run(const Args& a) {
  if (!a.dump.empty()) return run_pci(a);
  if (a.board.empty()) {
    fmt::print(stderr, "kron rdsample: give --board NAME (a live board) or --pci-memory FILE (a PCI board's memory)\n");
    return kExitBadInput;
  }
  auto r = recorder::BoardReader::open(a.board);
  recorder::SnapshotOptions o;
  o.start = a.start;
  o.end = a.end;
  o.program = r.program();  // the program's command, as kron record / kron run left it on the board
  if (a.verbose)
    o.on_lane = [](const recorder::LaneView& v, std::uint64_t n) {
      fmt::print(stderr, "kron rdsample: lane {} (pid {} tid {}): {} samples\n", v.index, v.pid, v.tid, n);
    };
  recorder::SnapshotResult res;  // into a temporary file, renamed over -f at the end (a failure leaves it as it was)
  write_named_file_atomically(a.file, [&](const std::string& tmp) { res = recorder::snapshot_to_file(r, tmp, o); });
  for (const auto& p : res.problems) fmt::print(stderr, "kron rdsample: {}\n", p);
  const auto& t = res.totals;
  fmt::print("kron rdsample: {} of {} samples to {}; overruns {}, overwritten {}, torn {}\n", res.written, res.held,
             a.file, t.overruns, t.overwritten, t.torn);
  return res.problems.empty() ? kExitOk : kExitFailed;
}
KRON_COMMAND("rdsample", "take the samples on a board into a trace file (003's mk_rdsample)", 33, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* board = app.add_option("--board", a->board, "board name (the live recorder's board)");
  add_board_access_options(app);
  auto* dump = app.add_option("--pci-memory", a->dump,
                              "a PCI toolkit board's local memory: a memory image (memimage) or a raw dump from word 0 "
                              "(memdump, with --pointer); writes the raw MultiKron II stream");
  board->excludes(dump);
  app.add_option("-f", a->file, "output file")->capture_default_str();
  a->start_opt =
      app.add_option("-s", a->start, "first sample (--board: index in time order; --pci-memory: memory word)");
  a->end_opt = app.add_option("-e", a->end,
                              "stop before this sample or memory word (default: all held, the memory address pointer)");
  app.add_flag("-v", a->verbose, "progress messages");
  app.add_option("--pointer", a->pointer, "--pci-memory: Memory Address Pointer (24 bits, wrap count in bits 22-23)")
      ->needs(dump);
  auto* config = app.add_option("--config", a->config,
                                "--pci-memory: Configuration Register (default: the image's, "
                                "else 0x003201)")
                     ->needs(dump);
  auto* simple =
      app.add_flag("--simple", a->simple, "--pci-memory: the memory was a simple buffer (WRAPB = 1)")->needs(dump);
  auto* circular = app.add_flag("--circular", a->circular, "--pci-memory: the memory was a circular buffer (WRAPB = 0)")
                       ->needs(dump);
  simple->excludes(circular);
  config->excludes(simple)->excludes(circular);
  app.add_flag("--wrapped", a->wrapped,
               "--pci-memory: a circular buffer that wrapped a multiple of 4 times (its wrap count reads 0)")
      ->needs(dump);

  return [a] { return run(*a); };
});
}  // namespace
}  // namespace kron::tools
