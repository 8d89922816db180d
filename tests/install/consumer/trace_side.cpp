// Uses the trace side of an installed kron: a MultiKron II Trace sample is 20 bytes (000 Table B2).
#include <kron/format/classic.hpp>
int main() {
  kron::Sample s;
  return kron::classic::encode(kron::classic::Chip::Mk2, s).size() == 20 ? 0 : 1;
}
