// kron expand (003 mk_expand): one sample a line, human readable.
//
// Source: 003 section 3.5 "Using mk_expand": -c counters of resource samples, -e elapsed time instead of
// the timestamp, -h a heading, -r/-s/-t/-u with d, o or x the radix of counters, source address,
// timestamp and user data (hexadecimal by default), -x the header's bits separated. Header layouts:
// 000 Table B2 (MultiKron II), 001 Table 5 (MultiKron).
// Columns: header byte (or its bits with -x), timestamp, source identification, user data; for kron
// trace files also cpu, filter level ("group", "-" unknown) and thread, which the classic header cannot
// hold; with -c the sixteen counters of a Resource sample.
// A named probe's sample (kron files) ends its line with what it is (event, begin, end), its name, its
// value and its site ("file:line function"), from the recording's names.
// ERRATUM E47: "elapsed time" is in timestamp ticks since the first sample shown, in the -t radix.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kron/core/sample.hpp"
#include "kron/format/classic.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::analysis {

enum class Radix : std::uint8_t { Hex, Dec, Oct };
// 'x', 'd' or 'o'; throws std::invalid_argument otherwise.
Radix parse_radix(const std::string& s);

struct ExpandOptions {
  bool counters = false;     // -c
  bool elapsed = false;      // -e
  bool heading = false;      // -h
  bool header_bits = false;  // -x
  Radix counter_radix = Radix::Hex, source_radix = Radix::Hex, ts_radix = Radix::Hex, data_radix = Radix::Hex;
};

class Expander {
 public:
  // `chip` fixes the header layout and field widths; `kron_fields` adds cpu, group and thread
  // (kron trace files: 64-bit timestamps and data).
  Expander(const ExpandOptions& opt, classic::Chip chip, bool kron_fields, std::uint64_t ts_mask);
  void heading(std::string& out) const;
  // The recording's names, for named probes' samples (kept by reference; null: ids only).
  void set_names(const tracefile::NameTable* names) { names_ = names; }
  // Appends one line for `s`.
  void line(const Sample& s, std::string& out);
  // Writes one line for `s` at p, which has room for kMaxLine characters; returns the end of the line.
  // One line is at most 2 + 3 x 64 digits + 3 kron fields + 16 x 22 digits and blanks, well under 1 KiB,
  // and a field may write up to 24 bytes of scratch past its start before the next field overwrites it.
  static constexpr std::size_t kMaxLine = 1024;
  char* line(const Sample& s, char* p);

 private:
  ExpandOptions opt_;
  classic::Chip chip_;
  bool kron_;
  std::uint64_t ts_mask_;
  unsigned ts_bits_, data_bits_;
  unsigned w_ts_, w_src_, w_data_, w_ctr_;
  const tracefile::NameTable* names_ = nullptr;
  bool have_first_ = false;
  std::uint64_t first_ts_ = 0;
};

}  // namespace kron::analysis
