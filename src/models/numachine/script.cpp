// `kron sim --chip numachine`: the monitor's own script commands (docs/models-numachine.md) and the
// decoded SRAM dump. The common commands (reset, write, read, expect, tick) are the interpreter's.
#include <fmt/format.h>

#include <map>

#include "models/numachine/numachine.hpp"
#include "sim/script.hpp"

namespace kron::numachine {
namespace {

// KEY=VALUE arguments and bare flags of one command, checked against what it accepts.
struct Args {
  std::map<std::string, std::uint64_t, std::less<>> num;
  std::map<std::string, bool, std::less<>> flag;
  std::string error;

  Args(std::string_view word, const std::vector<std::string>& args, std::size_t first,
       std::initializer_list<std::pair<std::string_view, std::uint64_t>> keys,
       std::initializer_list<std::string_view> flags) {
    for (std::size_t i = first; i < args.size() && error.empty(); ++i) {
      const std::string& a = args[i];
      const auto eq = a.find('=');
      if (eq == std::string::npos) {
        bool known = false;
        for (std::string_view f : flags) known |= f == a;
        if (!known)
          error = fmt::format("{}: unknown argument '{}'", word, a);
        else if (flag.count(a))
          error = fmt::format("{}: '{}' given twice", word, a);
        else
          flag[a] = true;
        continue;
      }
      const std::string_view key = std::string_view(a).substr(0, eq);
      const std::uint64_t* max = nullptr;
      for (const auto& k : keys)
        if (k.first == key) max = &k.second;
      if (!max) {
        error = fmt::format("{}: unknown argument '{}'", word, a);
      } else if (num.count(key)) {
        error = fmt::format("{}: {} given twice", word, key);
      } else if (const auto v = sim::parse_number(std::string_view(a).substr(eq + 1)); !v) {
        error = fmt::format("{}: '{}' is not a number (decimal or 0x-hex)", word, a.substr(eq + 1));
      } else if (*v > *max) {
        error = fmt::format("{}: {} out of range 0-{}", word, a, *max);
      } else {
        num.emplace(std::string(key), *v);
      }
    }
  }
  bool need(std::string_view word, std::initializer_list<std::string_view> keys) {
    for (std::string_view k : keys)
      if (error.empty() && !num.count(k)) error = fmt::format("{}: {}= is required", word, k);
    return error.empty();
  }
  std::optional<std::uint64_t> opt(std::string_view k) const {
    const auto it = num.find(k);
    return it == num.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
  }
  bool has(std::string_view f) const { return flag.count(f) != 0; }
};

constexpr std::uint64_t kAny = ~std::uint64_t{0};
constexpr std::uint64_t kLatencyMax = sim::kMaxClock;

}  // namespace

std::optional<std::uint32_t> Numachine::address_named(std::string_view name) const {
  return numachine::address_named(name);
}

bool Numachine::command(std::string_view word, const std::vector<std::string>& args, std::string& error) {
  const auto usage = [&](std::string_view text) {
    error = fmt::format("usage: {}", text);
    return true;
  };
  const auto line = [&](const std::string& s) {
    if (on_line) on_line(s);
  };
  if (word == "readclear") {  // 004 4.3.3: "automatically reset if read from a specific address"
    const auto a = args.size() == 1 ? numachine::address_named(args[0]) : std::nullopt;
    if (!a || *a < kGpcBase || *a >= kGpcBase + kGpcs) return usage("readclear GPC0|GPC1|GPC2|GPC3");
    const std::uint32_t k = *a - kGpcBase;
    const std::uint64_t v = read(kGpcResetBase + k);
    line(fmt::format("readclear GPC{} = 0x{:08x}", k, v));
    return true;
  }
  if (word == "dwrite") {  // an explicit doubleword write (ERRATUM E81)
    if (args.size() != 2) return usage("dwrite REG VALUE");
    std::optional<std::uint64_t> a = sim::parse_number(args[0]);
    if (!a) a = numachine::address_named(args[0]);
    const auto v = sim::parse_number(args[1]);
    if (!a || *a >= kAddressLimit || !v) return usage("dwrite REG VALUE");
    write_doubleword(static_cast<std::uint32_t>(*a), *v);
    return true;
  }
  if (word == "regs") {  // every Table 4.4 register, decoded by its fields
    if (!args.empty()) return usage("regs");
    for (const RegisterInfo& r : kRegisters) line(describe(r, regs_[r.address]));
    return true;
  }
  if (word == "sram") {
    if (!args.empty()) return usage("sram");
    for (std::uint32_t a = 0; a < kSramWords; ++a)
      if (sram_[a]) line(sram_line(static_cast<std::uint16_t>(a)));
    return true;
  }
  if (word == "packet") {
    if (args.empty() || (args[0] != "send" && args[0] != "recv")) return usage("packet send|recv word=C addr=A");
    Args p(word, args, 1, {{"cmd", cmd::kMask}, {"addr", kAddressMask}}, {});
    if (p.need(word, {"cmd", "addr"}))
      packet(args[0] == "send", static_cast<std::uint16_t>(p.num["cmd"]), p.num["addr"]);
    error = p.error;
    return true;
  }
  if (word == "read-miss") {
    Args p(word, args, 0, {{"addr", kAddressMask}, {"latency", kLatencyMax}, {"mtr", 3}, {"rsr", rsr::kMask}},
           {"exclusive"});
    if (p.need(word, {"addr", "latency"})) {
      Miss m;
      m.addr = p.num["addr"];
      m.latency = p.num["latency"];
      m.exclusive = p.has("exclusive");
      if (const auto v = p.opt("mtr")) m.mtr = static_cast<std::uint8_t>(*v);
      if (const auto v = p.opt("rsr")) m.rsr = static_cast<std::uint8_t>(*v);
      read_miss(m);
    }
    error = p.error;
    return true;
  }
  if (word == "ownership-miss") {
    Args p(word, args, 0, {{"latency", kLatencyMax}, {"addr", kAddressMask}}, {"cancelled"});
    if (p.need(word, {"latency"})) ownership_miss(p.num["latency"], p.has("cancelled"), p.opt("addr"));
    error = p.error;
    return true;
  }
  if (word == "nack") {
    Args p(word, args, 0, {{"retries", kAny}, {"cycles", kLatencyMax}}, {});
    if (p.need(word, {"retries", "cycles"})) nack(p.num["retries"], p.num["cycles"]);
    error = p.error;
    return true;
  }
  if (word == "interrupt" || word == "bus-request") {
    Args p(word, args, 0, {{"latency", kLatencyMax}}, {});
    if (p.need(word, {"latency"})) {
      if (word == "interrupt")
        interrupt_request(p.num["latency"]);
      else
        bus_request(p.num["latency"]);
    }
    error = p.error;
    return true;
  }
  if (word == "inval-hit") {
    Args p(word, args, 0, {{"addr", kAddressMask}}, {});
    if (p.error.empty()) inval_hit(p.opt("addr"));
    error = p.error;
    return true;
  }
  if (word == "inval-miss") {
    if (!args.empty()) return usage("inval-miss");
    inval_miss();
    return true;
  }
  if (word == "l2") {
    if (args.empty() || (args[0] != "read" && args[0] != "write")) return usage("l2 read|write index=I [miss] [instr]");
    Args p(word, args, 1, {{"index", kSramWords - 1}}, {"miss", "instr"});
    if (p.need(word, {"index"}))
      l2_access(args[0] == "write", static_cast<std::uint32_t>(p.num["index"]), p.has("miss"), p.has("instr"));
    error = p.error;
    return true;
  }
  if (word == "pipeline") {
    if (args.size() != 2) return usage("pipeline E1 E2 (pipeline states: a name or 0-15)");
    const auto s1 = pipeline_state(args[0]), s2 = pipeline_state(args[1]);
    if (!s1 || !s2) {
      error = fmt::format("pipeline: '{}' is not a pipeline state (a name or 0-15; docs/models-numachine.md)",
                          s1 ? args[1] : args[0]);
      return true;
    }
    pipeline(*s1, *s2);
    return true;
  }
  return false;
}

// `sram ADDR count=N` and what the address holds under the current SCM mode (Table 4.7, ERRATUM E92).
std::string Numachine::sram_line(std::uint16_t addr) const {
  const std::uint32_t m = regs_[static_cast<unsigned>(Reg::SCM)];
  std::string s = fmt::format("sram 0x{:04x} count={}", addr, sram_[addr]);
  const auto mode = static_cast<SramMode>(scm::kMode.get(m));
  if (mode == SramMode::SecondaryCache) return s;
  std::uint32_t pr = 0, ar16 = 0, ar_mask = 0;
  bool has_pr = false;
  std::optional<unsigned> mtr, rsr_v;
  std::string lat;
  // The lo group: MTR in its upper two bits under muxMISS, PR[3..0] (or PR[1..0]) under muxPRlo.
  const auto lo_group = [&](std::uint32_t lo, std::uint32_t at, bool from_ar) {
    std::uint32_t bits = 0xf;
    if (scm::kMuxMiss.get(m)) {
      mtr = lo >> 2 & 3;
      bits = 0x3;
    }
    if (scm::kMuxPrLo.get(m)) {
      pr |= lo & bits;
      has_pr = true;
    } else if (from_ar) {
      ar16 |= (lo & bits) << at;
      ar_mask |= bits << at;
    }
  };
  const auto hi_group = [&](std::uint32_t hi, bool from_ar) {
    if (scm::kMuxRsr.get(m)) {
      rsr_v = hi;
    } else if (scm::kMuxPrHi.get(m)) {
      pr |= hi << 11;
      has_pr = true;
    } else if (from_ar) {
      ar16 |= hi << 11;
      ar_mask |= 0xf800;
    }
  };
  if (mode == SramMode::LatencyTimer) {
    lat = fmt::format("{}-{}", addr & 0xfff, addr & 0xfff);
    lo_group(addr >> 12, 12, false);
  } else if (mode == SramMode::LatencyCompact) {
    const Bucket b = bucket(static_cast<std::uint8_t>(addr & 0x7f));
    lat = fmt::format("{}-{}", b.lo, b.hi);
    lo_group(addr >> 7 & 0xf, 7, false);
    hi_group(addr >> 11, false);
  } else {  // MCC mode
    hi_group(addr >> 11, true);
    if (scm::kMuxPrMid.get(m)) {
      pr |= addr & 0x07f0u;
      has_pr = true;
    } else {
      ar16 |= addr & 0x07f0u;
      ar_mask |= 0x07f0;
    }
    lo_group(addr & 0xf, 0, true);
  }
  if (!lat.empty()) s += " lat=" + lat;
  if (has_pr) s += fmt::format(" pr=0x{:04x}", pr);
  if (mtr) s += fmt::format(" mtr={}", *mtr);
  if (rsr_v) s += fmt::format(" rsr={}", *rsr_v);
  if (ar_mask) {  // AR[39..32] from address bits 15..8, AR[26..19] from 7..0
    const std::uint64_t ar = std::uint64_t{ar16 >> 8 & 0xff} << 32 | std::uint64_t{ar16 & 0xff} << 19;
    s += fmt::format(" ar=0x{:010x}", ar);
  }
  return s;
}

}  // namespace kron::numachine
