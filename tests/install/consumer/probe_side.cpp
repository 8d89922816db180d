// An instrumented program built against an installed kron: without a board, probes record nothing.
#include <kron/kron.hpp>
int main() {
  kron::trace(1, 42);
  return kron::attached() ? 1 : 0;
}
