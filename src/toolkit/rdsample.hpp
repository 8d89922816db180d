// mk_rdsample (003 3.5) for a PCI toolkit board's local memory: the samples the memory holds, as the raw
// MultiKron II stream (20/84-byte samples back to back, 000 Table B2) that `kron expand --input-format mk2`
// and `kron rpt --input-format mk2` read.
//
// Sources: 003 1.3 and 2.7 (simple buffer: loading starts at word 0 and stops at 3FFFFF; circular buffer:
// the pointer wraps to 0 "overwriting the oldest Samples"; the 24-bit pointer's top two bits count the
// wraps; "The memory address pointer indicates the next available memory location"), 003 3.5 (mk_rdsample
// -s start_addr, default 0; -e end_addr, default the memory address pointer).
//
// What is read (docs/models-mk1-pcib.md "Reading board memory"):
//   simple buffer, or circular with wrap count 0: words START (default 0) up to END (default the pointer);
//   circular with wrap count 1-3: the whole memory oldest first, from the pointer round to the pointer
//     (-s/-e, when given, are memory words on that ring: from START forward, past 3FFFFF to 0, up to END).
// Samples are 5 or 21 words, so they start on word boundaries. Where the start is not known to be a sample
// boundary (after a wrap, or an explicit START other than 0) the first whole sample is found: the first
// of the next 21 words from which samples decode back to back to the end (at least one of them whole)
// and the first two are in time order; the words before it (the tail of an overwritten sample) are skipped and counted.
// A sample cut by END (or still being stored) is dropped and counted. Anything else that does not decode is refused.
// These choices are where 003 is silent: ERRATUM E100 (the first whole sample), E101 (--wrapped after
// four wraps), E102 (the cut tail); docs/models-mk1-pcib.md "Reading board memory" has the full rules.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/pcib/image.hpp"

namespace kron::toolkit {

struct RdsampleOptions {
  std::optional<std::uint32_t> start, end;  // memory word numbers (mk_rdsample -s, -e)
  bool wrapped = false;                     // circular buffer that wrapped a multiple of 4 times (wrap count reads 0)
};

struct RdsampleResult {
  std::vector<std::uint8_t> stream;  // the raw MultiKron II samples, oldest first
  std::uint64_t trace = 0, resource = 0;
  std::uint32_t first_word = 0, words = 0;  // the memory read: first word and how many (ring order)
  bool circular = false, unwrapped = false, full = false;
  unsigned wraps = 0;              // the pointer's wrap count
  std::uint64_t skipped_head = 0;  // bytes of an overwritten (or cut) sample before the first whole one
  std::uint64_t cut_tail = 0;      // bytes of a sample cut by END
  std::string describe() const;    // one line: what was read and what was skipped
};

// Throws InputError (file, offset) when the memory does not hold samples, or a word is not in the dump.
RdsampleResult rdsample(const pcib::MemoryDump& m, const RdsampleOptions& o = {});

}  // namespace kron::toolkit
