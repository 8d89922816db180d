// The `kron sim` script interpreter and sample printer. Language and output: script.hpp.
#include "sim/script.hpp"
#include "kron/core/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <istream>
#include <ostream>

#include "kron/core/error.hpp"

namespace kron::sim {
namespace {
// A script number's base: 16 after a "0x" prefix (removed from `s`), else 10.
struct Token {
  std::string_view text;
  unsigned column;  // 1-based
};

std::vector<Token> tokenize(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<unsigned>(start + 1)});
  }
  return out;
}

struct Syntax {
  const std::string& file;
  unsigned line;
  [[noreturn]] void fail(unsigned column, const std::string& what) const {
    throw InputError::at_line(file, line, column, what);
  }
  // An address: a number, or a name the device gives (Device::address_named).
  std::uint64_t address(const Token& t, const Device* names) const {
    if (names && !parse_number(t.text))
      if (const auto a = names->address_named(t.text)) return *a;
    return number(t);
  }
  std::uint64_t number(const Token& t, std::uint64_t max = ~std::uint64_t{0}) const {
    bool too_large = false;
    const auto v = text::parse_uint(t.text, ~std::uint64_t{0}, &too_large);
    if (too_large) fail(t.column, fmt::format("number '{}' does not fit in 64 bits", t.text));
    if (!v) fail(t.column, fmt::format("'{}' is not a number (decimal or 0x-hex)", t.text));
    if (*v > max) fail(t.column, fmt::format("{} out of range 0-{}", t.text, max));
    return *v;
  }
  bool choice(const Token& t, std::string_view off, std::string_view on) const {
    if (t.text == on) return true;
    if (t.text != off) fail(t.column, fmt::format("expected {} or {}, got '{}'", off, on, t.text));
    return false;
  }
};

struct Signature {
  std::string_view name;
  Op op;
  unsigned min_args, max_args;
  std::string_view usage;
};
constexpr Signature kSignatures[] = {
    {"clocks", Op::Clocks, 1, 2, "clocks node=HZ ts=HZ"},
    {"reset", Op::Reset, 0, 0, "reset"},
    {"cpu", Op::Cpu, 1, 1, "cpu N"},
    {"testmode", Op::TestMode, 1, 1, "testmode on|off"},
    {"waitstates", Op::WaitStates, 1, 1, "waitstates 0|1"},
    {"netrdy", Op::NetRdy, 1, 1, "netrdy 0|1"},
    {"ext", Op::Ext, 2, 2, "ext C 0|1"},
    {"write", Op::Write, 2, 2, "write ADDR DATA"},
    {"read", Op::Read, 1, 1, "read ADDR"},
    {"expect", Op::Expect, 2, 3, "expect ADDR VALUE [MASK]"},
    {"tick", Op::Tick, 1, 1, "tick N"},
    {"drain", Op::Drain, 0, 0, "drain"},
};

void parse_clock(const Syntax& syn, const Token& t, Command& c) {
  const auto eq = t.text.find('=');
  const std::string_view key = t.text.substr(0, eq);
  const unsigned slot = key == "node" ? 0 : key == "ts" ? 1 : 2;
  if (eq == std::string_view::npos || slot == 2)
    syn.fail(t.column, fmt::format("expected node=HZ or ts=HZ, got '{}'", t.text));
  if (c.num[slot] != 0) syn.fail(t.column, fmt::format("{} given twice", key));
  const Token value{t.text.substr(eq + 1), static_cast<unsigned>(t.column + eq + 1)};
  c.num[slot] = syn.number(value);
  if (c.num[slot] == 0) syn.fail(value.column, "a clock frequency must be greater than 0 Hz");
}

std::string flag_names(std::uint8_t flags) {
  std::string s;
  const auto add = [&](std::uint8_t bit, const char* n) {
    if (!(flags & bit)) return;
    if (!s.empty()) s += ',';
    s += n;
  };
  add(kFlagFifoOverrun, "fifo");
  add(kFlagShadowOverrun, "shadow");
  add(kFlagReadError, "read");
  return s.empty() ? "-" : s;
}

}  // namespace

std::optional<std::uint64_t> parse_number(std::string_view s) { return text::parse_uint(s); }

std::optional<Command> parse_line(std::string_view text, const std::string& file, unsigned line, const Device* names) {
  const std::vector<Token> tok = tokenize(text);
  if (tok.empty()) return std::nullopt;
  const Syntax syn{file, line};
  Command c;
  c.line = line;
  const Signature* sig = nullptr;
  for (const Signature& s : kSignatures)
    if (s.name == tok[0].text) sig = &s;
  if (!sig) {  // a device's own command (Device::command)
    c.word = std::string(tok[0].text);
    for (std::size_t i = 1; i < tok.size(); ++i) c.words.emplace_back(tok[i].text);
    return c;
  }
  c.op = sig->op;
  const std::size_t nargs = tok.size() - 1;
  if (nargs < sig->min_args || nargs > sig->max_args) syn.fail(tok[0].column, fmt::format("usage: {}", sig->usage));
  const auto arg = [&](std::size_t i) -> const Token& { return tok[i + 1]; };
  switch (c.op) {
    case Op::Clocks:
      c.num = {0, 0};
      for (std::size_t i = 0; i < nargs; ++i) parse_clock(syn, arg(i), c);
      break;
    case Op::Cpu: c.num = {syn.number(arg(0), kCpuLines - 1)}; break;
    case Op::TestMode: c.num = {syn.choice(arg(0), "off", "on")}; break;
    case Op::WaitStates:
    case Op::NetRdy: c.num = {syn.choice(arg(0), "0", "1")}; break;
    case Op::Ext: c.num = {syn.number(arg(0), kResourceCounters - 1), syn.choice(arg(1), "0", "1")}; break;
    case Op::Tick:  // ERRATUM E134: no model's clock goes past kMaxClock; say so before anything runs
      c.num = {syn.number(arg(0))};
      if (c.num[0] > kMaxClock)
        syn.fail(
            arg(0).column,
            fmt::format("tick {} is more than a model's clock reaches (2^62 node clocks, ERRATUM E134)", arg(0).text));
      break;
    case Op::Write:
    case Op::Read:
      c.num.push_back(syn.address(arg(0), names));
      for (std::size_t i = 1; i < nargs; ++i) c.num.push_back(syn.number(arg(i)));
      break;
    case Op::Expect:
      c.num = {syn.address(arg(0), names), syn.number(arg(1))};
      if (nargs == 3) c.mask = syn.number(arg(2));
      break;
    case Op::Reset:
    case Op::Drain:
    case Op::Other: break;
  }
  return c;
}

std::vector<Command> parse_script(std::istream& in, const std::string& file, const Device* names) {
  std::vector<Command> out;
  std::string text;
  unsigned line = 0;
  while (std::getline(in, text))
    if (auto c = parse_line(text, file, ++line, names)) out.push_back(std::move(*c));
  if (in.bad()) throw InputError::at_line(file, line + 1, 0, "read error");
  return out;
}

std::string format_sample(classic::Chip chip, const SampleOut& out) {
  Sample s;
  const classic::DecodeResult r = classic::decode(chip, out.bytes, s);
  if (r.status != classic::DecodeStatus::Ok || r.size != out.bytes.size()) {
    // Only a test-mode FIFO write can send this: a header that does not match what was sent.
    std::string hex;
    for (std::uint8_t b : out.bytes) hex += fmt::format("{:02x}", b);
    return fmt::format("sample @{} undecodable bytes={} raw={}", out.clock, out.bytes.size(), hex);
  }
  const classic::Layout& l = classic::layout(chip);
  std::string line =
      fmt::format("sample @{} type={} cpu={} ts={} src=0x{:08x} data=0x{:0{}x} flags={}", out.clock, name(s.type),
                  s.cpu, s.timestamp, s.source, s.data, 2 * l.data_bytes, flag_names(s.flags));
  if (s.is_resource()) {
    line += " counters=";
    for (unsigned i = 0; i < kResourceCounters; ++i) line += fmt::format("{}{}", i ? "," : "", s.counters[i]);
  }
  return line;
}

std::string format_element(std::uint64_t clock, classic::NetElement e) {
  return fmt::format("net @{} 0x{:03x} data=0x{:02x} parity={} eom={}", clock, e.bits, e.data(), e.parity() ? 1 : 0,
                     e.eom() ? 1 : 0);
}

unsigned run_script(const std::vector<Command>& commands, const std::string& file, Device& device, std::ostream& out,
                    const RunOptions& options) {
  // The observers capture this frame: remove them however the run ends (a script error throws), so a
  // device that outlives the run never calls into a dead frame.
  struct ObserverGuard {
    Device& d;
    ~ObserverGuard() {
      d.on_sample = nullptr;
      d.on_element = nullptr;
      d.on_line = nullptr;
    }
  } guard{device};
  device.on_sample = [&](const SampleOut& s) { out << format_sample(device.chip(), s) << '\n'; };
  device.on_line = [&](std::string_view line) { out << line << '\n'; };
  if (options.net_bits || options.net)
    device.on_element = [&](std::uint64_t clock, classic::NetElement e) {
      if (options.net_bits) out << format_element(clock, e) << '\n';
      if (options.net) options.net->put(static_cast<char>(e.data()));
    };
  std::uint64_t node_hz = kDefaultNodeHz, ts_hz = kDefaultTsHz;
  unsigned failures = 0;
  for (const Command& c : commands) {
    const auto address = [&](std::uint64_t a) {
      if (a >= device.address_limit())
        throw InputError::at_line(file, c.line, 0,
                                  fmt::format("address {} out of range 0-{}", a, device.address_limit() - 1));
      return static_cast<std::uint32_t>(a);
    };
    try {
      switch (c.op) {
        case Op::Clocks:
          device.set_clocks(c.num[0] ? c.num[0] : node_hz, c.num[1] ? c.num[1] : ts_hz);
          node_hz = c.num[0] ? c.num[0] : node_hz;
          ts_hz = c.num[1] ? c.num[1] : ts_hz;
          break;
        case Op::Reset: device.hardware_reset(); break;
        case Op::Cpu: device.set_cpu(static_cast<unsigned>(c.num[0])); break;
        case Op::TestMode: device.set_test_mode(c.num[0]); break;
        case Op::WaitStates: device.set_wait_states(static_cast<unsigned>(c.num[0])); break;
        case Op::NetRdy: device.set_net_ready(c.num[0]); break;
        case Op::Ext: device.set_external(static_cast<unsigned>(c.num[0]), c.num[1]); break;
        case Op::Write: device.write(address(c.num[0]), c.num[1]); break;
        case Op::Read: {
          const std::uint32_t a = address(c.num[0]);
          const std::uint64_t v = device.read(a);
          out << fmt::format("read {} = 0x{:0{}x}\n", device.address_text(a), v, device.data_digits());
          break;
        }
        case Op::Expect: {
          const std::uint32_t a = address(c.num[0]);
          const std::uint64_t got = device.read(a);
          if ((got & c.mask) != (c.num[1] & c.mask)) {
            ++failures;
            const unsigned digits = device.data_digits();
            out << fmt::format("{}:{}: expect failed: read {} = 0x{:0{}x}, expected 0x{:0{}x}", file, c.line,
                               device.address_text(a), got, digits, c.num[1], digits);
            if (c.mask != ~std::uint64_t{0}) out << fmt::format(" under mask 0x{:0{}x}", c.mask, digits);
            out << '\n';
          }
          break;
        }
        case Op::Tick: device.tick(c.num[0]); break;
        case Op::Drain: device.drain(); break;
        case Op::Other: {
          std::string error;
          if (!device.command(c.word, c.words, error))
            throw InputError::at_line(file, c.line, 0, fmt::format("unknown command '{}'", c.word));
          if (!error.empty()) throw InputError::at_line(file, c.line, 0, error);
          break;
        }
      }
    } catch (const ConfigError& e) {
      throw InputError::at_line(file, c.line, 0, e.what());
    } catch (const HangError& e) {
      throw InputError::at_line(file, c.line, 0, e.what());
    }
  }
  out.flush();
  return failures;
}

}  // namespace kron::sim
