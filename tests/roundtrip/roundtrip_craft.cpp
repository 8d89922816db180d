// The round-trip matrix's crafted samples (tests/roundtrip/roundtrip_test.py): samples with every field at
// its extremes, written as records (include/kron/core/record.hpp, trace format 1.4's phased layout, ERRATUM
// E180) onto a board's lane or into a trace file, and each written sample printed as one JSON line, so that
// the harness can compare what every path gives back with what went in.
//
//   roundtrip_craft board EXPECTED        attached to a board (kron record -- / kron run --board): writes the
//                                         samples into this thread's lane and names ids 1 and the board's
//                                         last name slot; a marker sample (data kMarker) claims the lane first
//   roundtrip_craft file OUT RANK WORLD EXPECTED
//                                         a trace file (tracefile::Writer, records appended as they are) with
//                                         the samples and names 1 and 65534; WORLD > 0: rank RANK's file of
//                                         an MPI world (kron merge's input); WORLD 0: a plain file that does
//                                         not promise time order (the readers' reorder window runs)
//   roundtrip_craft dump FILE             the file's clock_hz, then every sample of a trace file
//                                         (tracefile::Reader), one JSON line each
//
// The lane's source, thread and cpu are the system's; crafted records are written into the lane's block
// as the probe's own slow path puts them (src/probe/probe.cpp put()), through the thread's lane state.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kron/board_ops.hpp"
#include "kron/core/record.hpp"
#include "kron/core/sample.hpp"
#include "kron/format/trace_file.hpp"
#include "kron/kron.hpp"

namespace {
using namespace kron;
constexpr std::uint64_t kMarker = 0x4b524f4e2d4d4b52;  // "KRON-MKR": the sample that claimed the lane
constexpr std::uint64_t kAll = ~std::uint64_t{0};
constexpr std::uint32_t kMaxThread = record::kThreadMask;  // 2^22 - 1 (ERRATUM E180)

// ---- The samples --------------------------------------------------------------------------------------
// Each list cycles with its own length (pairwise coprime where it matters: 7, 3, 5, 4), so that the samples
// cover every value of every list and mix them.
constexpr std::uint16_t kPhases[] = {0, 1, 65535, 300, 32768, 2, 65534};
constexpr std::uint16_t kCpus[] = {0, 1, 1023};
constexpr std::uint8_t kFlags[] = {0,
                                   kFlagFifoOverrun,
                                   kFlagShadowOverrun,
                                   kFlagReadError,
                                   kFlagOverwritten,
                                   kFlagThreshold,
                                   kFlagScopeEnd,
                                   kFlagScopeBegin,
                                   0xff & ~kFlagNamed};
constexpr std::uint32_t kSources[] = {0, 0xffffffffu, 1, 0x80000000u, board::source_id(3, 1234)};
constexpr std::uint32_t kThreads[] = {0, 1, kMaxThread, 4242};
constexpr std::uint64_t kData[] = {0, kAll, 1, std::uint64_t{1} << 63, 0x0123456789abcdef, std::uint64_t{1} << 32};
constexpr std::uint64_t kValues[] = {0, record::kNamedValueMask, 1};

struct Crafted {
  Sample s;
  std::string name;  // a named sample's name ("" for others)
};

Sample base_sample(unsigned i, std::uint64_t ts) {
  Sample s;
  s.phase = kPhases[i % std::size(kPhases)];
  s.cpu = kCpus[i % std::size(kCpus)];
  s.group = static_cast<std::uint8_t>(i % 16);
  s.source = kSources[i % std::size(kSources)];
  s.thread = kThreads[i % std::size(kThreads)];
  s.timestamp = ts;
  return s;
}

// Counters of a Resource sample: all 0, all 2^64 - 1, or a mix of both with values between.
void fill_counters(Sample& s, unsigned k) {
  for (unsigned c = 0; c < kResourceCounters; ++c)
    s.counters[c] = k % 3 == 0 ? 0 : k % 3 == 1 ? kAll : (c % 2 ? kAll - c : std::uint64_t{c} << 59 | c);
}

// The crafted samples in writing order, timestamps strictly increasing from `t0` (the last one 2^44 ticks
// later: hours of a recording). `last_id` names the second site (65534 where the table has room).
std::vector<Crafted> crafted(std::uint64_t t0, std::uint16_t last_id) {
  std::vector<Crafted> out;
  std::uint64_t t = t0;
  unsigned i = 0;
  auto next = [&](std::uint64_t step) { return base_sample(i++, t += step); };
  for (unsigned k = 0; k < 48; ++k) {            // plain samples: every flag bit but the named one, every data word
    Sample s = next(k % 5 == 0 ? 10 : 977 * k);  // 10: one ns apart at most clocks
    s.flags = kFlags[k % std::size(kFlags)];
    s.data = kData[k % std::size(kData)];
    if (k % 3 == 2) {
      s.type = SampleType::Resource;
      fill_counters(s, k / 3);
    }
    out.push_back({s, ""});
  }
  const std::pair<std::uint16_t, const char*> sites[] = {{1, "rt_first"}, {last_id, "rt_last"}};
  for (unsigned k = 0; k < 6; ++k) {  // named: an event, then a scope's begin and end on one stream
    const auto [id, name] = sites[k % 2];
    const std::uint64_t v = kValues[k % std::size(kValues)];
    Sample e = next(1000);
    e.flags = kFlagNamed;
    e.data = record::named_data(id, v);
    out.push_back({e, name});
    Sample b = next(1000);
    b.flags = kFlagNamed | kFlagScopeBegin;
    b.data = record::named_data(id, v);
    Sample x = next(5000);
    x.source = b.source;  // the begin's stream (kron's: the thread, or the cpu for thread 0)
    x.thread = b.thread;
    x.cpu = b.cpu;
    x.flags = kFlagNamed | kFlagScopeEnd;
    x.data = b.data;
    out.push_back({b, name});
    out.push_back({x, name});
  }
  Sample last = next(std::uint64_t{1} << 44);
  last.data = kAll;
  last.flags = kFlagFifoOverrun | kFlagShadowOverrun;
  out.push_back({last, ""});
  return out;
}

// ---- Records ------------------------------------------------------------------------------------------
// A sample as the probe writes it (phased, ERRATUM E180): words of one Trace or Resource record.
std::vector<std::uint64_t> words_of(const Sample& s) {
  const auto kind = s.is_resource() ? record::RecordKind::Resource : record::RecordKind::Trace;
  std::vector<std::uint64_t> w(record::size_of(kind) / 8);
  w[0] = record::header_word(kind) | record::flag_bits(s.flags) | record::group_bits(s.group) |
         record::phase_bits(s.phase);
  w[1] = record::ids_word(s.source, s.thread) | record::ids_cpu_bits(s.cpu);
  w[2] = s.timestamp;
  w[3] = s.data;
  if (s.is_resource())
    for (unsigned c = 0; c < kResourceCounters; ++c) w[4 + c] = s.counters[c];
  return w;
}

record::NameRecord site_entry(std::uint16_t id, const char* name) {
  record::NameRecord r{};
  r.h = record::RecordHeader{record::RecordKind::Names, sizeof(record::NameRecord), 0, 0, {0}};
  r.name_kind = record::NameKind::Scope;
  r.id = id;
  r.line = id;
  std::snprintf(r.name, sizeof r.name, "%s", name);
  std::snprintf(r.function, sizeof r.function, "roundtrip_%s", name);
  std::snprintf(r.file, sizeof r.file, "roundtrip_craft.cpp");
  return r;
}

// ---- JSON lines ---------------------------------------------------------------------------------------
void print_json(std::FILE* f, const Sample& s, const std::string& name) {
  std::fprintf(f,
               "{\"type\":\"%s\",\"flags\":%u,\"group\":%u,\"cpu\":%u,\"phase\":%u,\"source\":%" PRIu32
               ",\"thread\":%" PRIu32 ",\"timestamp\":%" PRIu64 ",\"data\":%" PRIu64 ",\"name\":\"%s\",\"counters\":[",
               s.is_resource() ? "resource" : "trace", unsigned{s.flags}, unsigned{s.group}, unsigned{s.cpu},
               unsigned{s.phase}, s.source, s.thread, s.timestamp, s.data, name.c_str());
  for (unsigned c = 0; s.is_resource() && c < kResourceCounters; ++c)
    std::fprintf(f, "%s%" PRIu64, c ? "," : "", s.counters[c]);
  std::fprintf(f, "]}\n");
}

void print_all(const char* path, const std::vector<Crafted>& v) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    std::exit(1);
  }
  for (const auto& c : v) print_json(f, c.s, c.name);
  std::fclose(f);
}

// ---- board --------------------------------------------------------------------------------------------
// Names ids 1 and the table's last slot, written into their slots as the probe's registration writes
// them (release of the slot's header word), and the table marked used up to there.
std::uint16_t name_sites(board::Mapping& m) {
  const std::uint32_t slots = m.geometry().name_slots;
  if (slots < 2) {
    std::fprintf(stderr, "roundtrip_craft: the board has %u name slots, 2 needed\n", slots);
    std::exit(1);
  }
  const auto last = static_cast<std::uint16_t>(slots);
  for (const auto& [id, nm] : {std::pair<std::uint16_t, const char*>{1, "rt_first"}, {last, "rt_last"}}) {
    const record::NameRecord r = site_entry(id, nm);
    board::NameSlot* slot = m.name_slot(id - 1u);
    std::memcpy(slot->body, reinterpret_cast<const std::uint8_t*>(&r) + sizeof(record::RecordHeader),
                sizeof slot->body);
    slot->header.store(record::name_header_word(), std::memory_order_release);
  }
  m.header()->names_used.store(slots, std::memory_order_relaxed);
  return last;
}

// One record into this thread's lane: the probe's put() (src/probe/probe.cpp), through its lane state.
void put_record(const std::vector<std::uint64_t>& w) {
  detail::ThreadLane& t = detail::t_lane;
  const std::uint64_t slots = w.size() / record::kSlotWords;
  if (!t.lane || t.head + slots > t.limit) {
    std::fprintf(stderr, "roundtrip_craft: the lane's block has no room (use a 1 MiB --block-size)\n");
    std::exit(1);
  }
  t.lane->passed.store(++t.passed, std::memory_order_relaxed);
  std::memcpy(t.ring + (t.head & t.mask) * record::kSlotWords, w.data(), w.size() * 8);
  t.head += slots;
  t.lane->head.store(t.head, std::memory_order_release);  // publishes the record (the probe's order)
}

int board_mode(const char* expected) {
  const char* name = std::getenv(board::kEnvBoard);
  if (!kron::attached() || !name) {
    std::fprintf(stderr, "roundtrip_craft: not attached to a board (run me under kron record or kron run)\n");
    return 3;
  }
  std::string err;
  board::Mapping m = board::Mapping::open(name, &err);
  if (!m) {
    std::fprintf(stderr, "roundtrip_craft: %s\n", err.c_str());
    return 1;
  }
  const std::uint16_t last_id = name_sites(m);
  kron::trace(0, kMarker);  // claims the lane and its first block
  const std::vector<Crafted> v = crafted(detail::now() + 1000, last_id);
  for (const auto& c : v) put_record(words_of(c.s));
  print_all(expected, v);
  return 0;
}

// ---- file ---------------------------------------------------------------------------------------------
int file_mode(const char* out, std::uint32_t rank, std::uint32_t world, const char* expected) {
  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  h.start_ticks = 1'000'000;
  h.node = rank;
  h.mpi_rank = world ? rank : 0;
  h.mpi_world_size = world;
  const std::vector<Crafted> v = crafted(h.start_ticks + 1000 * (rank + 1), record::kNoNameId - 1);
  tracefile::Writer w(out, h);
  for (const auto& c : v) {
    const std::vector<std::uint64_t> words = words_of(c.s);
    w.append_records({reinterpret_cast<const std::uint8_t*>(words.data()), words.size() * 8}, 1);
  }
  h.passed_filter = v.size();
  const record::NameRecord names[] = {site_entry(1, "rt_first"), site_entry(record::kNoNameId - 1, "rt_last")};
  w.finish(h, {}, names);
  print_all(expected, v);
  return 0;
}

int dump_mode(const char* path) {
  tracefile::Reader r(path);
  tracefile::NameTable names;
  for (const auto& nr : r.names()) names.add(nr);
  std::printf("{\"clock_hz\":%" PRIu64 "}\n", r.header().clock_hz);  // the first line: the file's clock
  Sample s;
  while (r.next(s)) print_json(stdout, s, names.name_of(s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "board" && argc == 3) return board_mode(argv[2]);
    if (mode == "file" && argc == 6)
      return file_mode(argv[2], static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 0)),
                       static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 0)), argv[5]);
    if (mode == "dump" && argc == 3) return dump_mode(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roundtrip_craft: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: roundtrip_craft board EXPECTED | file OUT RANK WORLD EXPECTED | dump FILE\n");
  return 2;
}
