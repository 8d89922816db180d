// The Experimenter's Toolkit test programs (003 section 3.4). Sources: selftest.hpp; the board's map
// and defaults: 003 Tables 1 and 2; the chip's registers: 000 Table B4.
#include "toolkit/selftest.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ostream>
#include <random>
#include <vector>

#include "kron/format/classic.hpp"

namespace kron::toolkit {
namespace {

// 003 Table 1 offsets.
constexpr std::uint32_t kChip = 0x1000, kSoftwareReset = 0x1200, kConfig = 0x1204, kPointer = 0x1208,
                        kMemory = 0x1000000;
constexpr std::uint32_t kMemoryWords = 1u << 22;
// 003 Table 2 bits and the recommended default.
constexpr std::uint32_t kDefault = 0x003201, kLocal = 1u << 9, kDisState = 1u << 16;
// 003 "Default Configuration": NODECLK 40 MHz, Timestamp clock 10 MHz.
constexpr std::uint64_t kNodeHz = 40'000'000, kTsHz = 10'000'000;
// MultiKron II word addresses (000 Table B4).
constexpr unsigned kCsr = 1, kTimestamp = 2, kFilter = 4, kEnable = 8, kMode = 10, kSource = 32, kIncrement = 80,
                   kTrace = 96, kResource = 112;
constexpr std::uint32_t chip(unsigned word) { return kChip + 4 * word; }
constexpr std::uint32_t word_offset(std::uint32_t w) { return kMemory + 4 * w; }

std::uint32_t rd32(sim::Device& b, std::uint32_t off) { return static_cast<std::uint32_t>(b.read(off)); }

// What the toolkit's initialization routine does: board reset, default configuration, chip software
// reset, sampling enabled for every filter level.
void init_board(sim::Device& b, std::uint32_t config = kDefault) {
  b.write(kSoftwareReset, 0);
  b.write(kConfig, config);
  b.write(chip(0), 0);
  b.write(chip(kFilter), 0xffff);
  b.write(chip(kCsr), 1u | 1u << 2);  // 000 Table B1 bits 0, 2: enable sampling, wait on overrun (no loss)
}

// 003 2.7: "disable the FIFO state machine via the DIS_STATE control bit ... then disable LOCAL mode ...
// and write the new value into the memory address pointer, then re-enable LOCAL mode and enable the FIFO
// state machine".
void set_pointer(sim::Device& b, std::uint32_t value) {
  const std::uint32_t config = rd32(b, kConfig) & 0x00ffffff;
  b.write(kConfig, config | kDisState);
  b.write(kConfig, (config | kDisState) & ~kLocal);
  b.write(kPointer, value);
  b.write(kConfig, config | kDisState);
  b.write(kConfig, config);
}

std::vector<std::uint8_t> read_memory(sim::Device& b, std::uint32_t from, std::uint32_t to) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t w = from; w < to; ++w) {
    const std::uint32_t v = rd32(b, word_offset(w));
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));  // ERRATUM E70
  }
  return out;
}

std::string hex_bytes(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    s += fmt::format("{}{:02x}", i == 0 ? "" : (i % 4 ? "" : " "), bytes[i]);
  return s;
}

std::uint64_t mem_pass(sim::Device& b, std::uint32_t start, std::uint32_t count, std::ostream* out) {
  const std::uint32_t patterns[] = {0, 0xffffffffu, 0x55555555u, 0xaaaaaaaau};
  std::uint64_t errors = 0;
  for (int p = 0; p < 5; ++p) {
    // Pass 0: each word's own address (catches address-line faults); then the four fixed patterns.
    const auto value = [&](std::uint32_t w) { return p == 0 ? w * 0x01010101u ^ 0x00a5a5a5u : patterns[p - 1]; };
    for (std::uint32_t w = start; w < start + count; ++w) b.write(word_offset(w), value(w));
    for (std::uint32_t w = start; w < start + count; ++w) {
      const std::uint32_t got = rd32(b, word_offset(w));
      if (got != value(w)) {
        if (out && errors < 10)
          *out << fmt::format("mk_mem_test: word 0x{:06x}: wrote 0x{:08x}, read 0x{:08x}\n", w, value(w), got);
        ++errors;
      }
    }
  }
  return errors;
}

bool check(bool ok, std::uint64_t& errors, std::ostream& out, const std::string& what) {
  if (!ok) {
    ++errors;
    out << "ERROR: " << what << '\n';
  }
  return ok;
}

}  // namespace

std::uint64_t mem_test(sim::Device& b, std::uint32_t start, std::uint32_t count, std::ostream& out) {
  if (start > kMemoryWords || count > kMemoryWords - start)
    throw sim::ConfigError(fmt::format("mk_mem_test: words {} + {} exceed the 4M-word local memory", start, count));
  const std::uint64_t errors = mem_pass(b, start, count, &out);
  out << fmt::format("mk_mem_test: words 0x{:06x}-0x{:06x}, 5 patterns: {} error(s)\n", start,
                     start + count - (count ? 1 : 0), errors);
  return errors;
}

std::uint64_t basic_test(sim::Device& b, std::ostream& out) {
  std::uint64_t errors = 0;
  init_board(b);
  // Source Address Register round trip.
  for (std::uint32_t v : {0u, 0xffffffffu, 0x55555555u, 0xaaaaaaaau, 0x12345678u}) {
    b.write(chip(kSource), v);
    const std::uint32_t got = rd32(b, chip(kSource));
    check(got == v, errors, out, fmt::format("Source Address Register 0: wrote 0x{:08x}, read 0x{:08x}", v, got));
  }
  out << "test_mk: Source Address Register round trip done\n";
  // A resource sample.
  const std::uint32_t p0 = rd32(b, kPointer);
  b.write(chip(kResource), 0xc0ffee);
  b.drain();
  const std::uint32_t p1 = rd32(b, kPointer);
  check(p1 - p0 == 21, errors, out,
        fmt::format("resource sample: pointer 0x{:06x} -> 0x{:06x}, expected 21 words", p0, p1));
  Sample s;
  const auto bytes = read_memory(b, p0, p0 + 21);
  const auto r = classic::decode(classic::Chip::Mk2, bytes, s);
  check(r.status == classic::DecodeStatus::Ok && s.type == SampleType::Resource && s.data == 0xc0ffee &&
            s.source == 0x12345678 && s.cpu == 0,
        errors, out, "resource sample in memory does not carry what was written: " + hex_bytes(bytes));
  out << fmt::format("test_mk: resource sample at word 0x{:06x}: {}\n", p0, hex_bytes(bytes));
  // The first 2048 memory locations.
  errors += mem_pass(b, 0, 2048, &out);
  out << "test_mk: memory words 0-2047 written and read\n";
  // The timestamp over a 10 second wait (simulated: the model jumps 400 million node clocks at once).
  const std::uint32_t t0 = rd32(b, chip(kTimestamp));
  b.tick(10 * kNodeHz);
  const std::uint32_t t1 = rd32(b, chip(kTimestamp));
  const std::uint32_t ticks = t1 - t0;
  out << fmt::format("test_mk: timestamp low 32 bits 0x{:08x}, after 10 s 0x{:08x}: {} ticks\n", t0, t1, ticks);
  const std::uint64_t want = 10 * kTsHz;
  check(ticks >= want && ticks <= want + 4, errors, out,
        fmt::format("timestamp counted {} ticks in 10 s, expected {} (10 MHz)", ticks, want));
  out << fmt::format("test_mk: {} error(s)\n", errors);
  return errors;
}

std::uint64_t sample_test(sim::Device& b, std::ostream& out) {
  std::uint64_t errors = 0;
  init_board(b);
  b.write(chip(kSource + 0), 0x00000100);
  b.write(chip(kSource + 1), 0x00000101);
  for (const bool resource : {false, true}) {
    for (unsigned cpu = 0; cpu < 2; ++cpu) {
      b.write(kConfig, (kDefault & ~0xffu) | (1u << cpu));  // CPU_ID line
      const std::uint32_t p0 = rd32(b, kPointer);
      const std::uint64_t data = (resource ? 0x2000 : 0x1000) + cpu;
      b.write(chip(resource ? kResource : kTrace), data);
      b.drain();
      const std::uint32_t p1 = rd32(b, kPointer);
      const std::uint32_t words = resource ? 21 : 5;
      const auto bytes = read_memory(b, p0, p0 + words);
      out << fmt::format("mk_sample_test: {} sample, CPU ID {}, {} bytes, memory address pointer 0x{:06x}:\n  {}\n",
                         resource ? "resource" : "trace", cpu, bytes.size(), p1, hex_bytes(bytes));
      Sample s;
      const auto r = classic::decode(classic::Chip::Mk2, bytes, s);
      check(p1 - p0 == words, errors, out, fmt::format("pointer advanced {} words, expected {}", p1 - p0, words));
      check(r.status == classic::DecodeStatus::Ok && s.is_resource() == resource && s.cpu == cpu &&
                s.source == 0x100 + cpu && s.data == data,
            errors, out, "the sample in memory does not carry what was written");
    }
  }
  out << fmt::format("mk_sample_test: {} error(s)\n", errors);
  return errors;
}

std::uint64_t nite_test(sim::Device& b, const NiteOptions& o, std::ostream& out) {
  std::mt19937_64 rng(o.seed);
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::uint64_t errors = 0, rounds = 0, samples = 0, words = 0;
  out << fmt::format("mk_nite_test: seed {}, {} s\n", o.seed, o.seconds);
  init_board(b);
  while ((o.max_rounds == 0 || rounds < o.max_rounds) && (rounds == 0 || elapsed() < o.seconds)) {
    ++rounds;
    // Registers: the eight Source Address Registers and the Filter Register.
    std::uint32_t source[8];
    for (unsigned i = 0; i < 8; ++i) {
      source[i] = static_cast<std::uint32_t>(rng());
      b.write(chip(kSource + i), source[i]);
    }
    for (unsigned i = 0; i < 8; ++i) {
      const std::uint32_t got = rd32(b, chip(kSource + i));
      check(got == source[i], errors, out,
            fmt::format("round {}: Source Address Register {}: wrote 0x{:08x}, read 0x{:08x}", rounds, i, source[i],
                        got));
    }
    const auto filter = static_cast<std::uint16_t>(rng() | 1);
    b.write(chip(kFilter), filter);
    check((rd32(b, chip(kFilter)) & 0xffff) == filter, errors, out, fmt::format("round {}: Filter Register", rounds));
    // Counter 5 counts software increments (000 Table B5 x010, Table B7 0011 reset and enable).
    b.write(chip(kMode), std::uint64_t{0x2} << 20);
    b.write(chip(kEnable), std::uint64_t{0x3} << 20);
    // Sampling from a random CPU, filter level, type and data; the memory read back must hold exactly the
    // samples the filter passes, in order.
    set_pointer(b, 0);
    struct Want {
      bool resource;
      unsigned cpu;
      std::uint64_t data;
      std::uint32_t count5;
    };
    std::vector<Want> want;
    std::uint32_t incs = 0;
    const unsigned n = static_cast<unsigned>(rng() % 40) + 1;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned cpu = static_cast<unsigned>(rng() % 8), level = static_cast<unsigned>(rng() % 16);
      const bool resource = rng() % 4 == 0;
      const std::uint64_t data = rng();
      for (unsigned k = static_cast<unsigned>(rng() % 3); k; --k, ++incs) b.write(chip(kIncrement + 5), 0);
      b.write(kConfig, (kDefault & ~0xffu) | (1u << cpu));
      b.write(chip((resource ? kResource : kTrace) + level), data);
      if (filter >> level & 1) want.push_back({resource, cpu, data, incs});
    }
    b.drain();
    const std::uint32_t end = rd32(b, kPointer);
    const auto bytes = read_memory(b, 0, end);
    std::size_t at = 0, k = 0;
    std::uint64_t last_ts = 0;
    while (at < bytes.size() && k < want.size()) {
      Sample s;
      const auto r = classic::decode(classic::Chip::Mk2, std::span(bytes).subspan(at), s);
      if (r.status != classic::DecodeStatus::Ok) break;
      const Want& w = want[k];
      check(s.is_resource() == w.resource && s.cpu == w.cpu && s.source == source[w.cpu] && s.data == w.data &&
                s.timestamp >= last_ts && s.flags == 0 && (!w.resource || s.counters[5] == w.count5),
            errors, out, fmt::format("round {}: sample {} in memory differs from what was written", rounds, k));
      last_ts = s.timestamp;
      at += r.size;
      ++k;
    }
    check(k == want.size() && at == bytes.size(), errors, out,
          fmt::format("round {}: {} samples in {} bytes of memory, expected {}", rounds, k, bytes.size(), want.size()));
    samples += want.size();
    // Memory: a random block of 256 words.
    const auto start = static_cast<std::uint32_t>(rng() % (kMemoryWords - 256));
    errors += mem_pass(b, start, 256, &out);
    words += 256;
  }
  out << fmt::format("mk_nite_test: {} rounds, {} samples, {} memory words in {:.1f} s: {} error(s)\n", rounds, samples,
                     words, elapsed(), errors);
  return errors;
}

}  // namespace kron::toolkit
