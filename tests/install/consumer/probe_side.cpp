// An instrumented program built against an installed kron: without a board, probes record nothing.
// It uses every kind of probe (trace, named scope and event, phase, histogram, virtual counter), so that the
// whole header is compiled at the consumer's standard (install_test.sh: g++'s default, no -std flag).
#include <kron/kron.hpp>
int main() {
  kron::trace(1, 42);
  {
    KRON_SCOPE("consumer");
    KRON_EVENT("value", 7);
  }
  kron::phase(2);
  static kron::histogram h("consumer latency");
  kron::record_latency(h, 100);
  kron::vcount(3, 1);
  return kron::attached() ? 1 : 0;
}
