// A C++ program with no kron code for the function hooks' test: its functions must show demangled (namespaces,
// templates, const methods, overloads), and exceptions thrown through them must leave the scopes paired.
#include <cstdio>
#include <stdexcept>

namespace geo {
template <class T>
struct Box {
  T w, h;
  __attribute__((noinline)) T area() const { return w * h; }
};
__attribute__((noinline)) double scale(double v, double by) { return v * by; }
__attribute__((noinline)) int scale(int v, int by) { return v * by; }
}  // namespace geo

__attribute__((noinline)) static int fails(int k) {
  if (k % 2) throw std::runtime_error("odd");
  return k;
}
__attribute__((noinline)) static int through(int k) { return fails(k) + 1; }

int main() {
  geo::Box<int> b{3, 4};
  geo::Box<double> d{1.5, 2.0};
  long sum = 0;
  int caught = 0;
  for (int i = 0; i < 10; ++i) {
    sum += b.area() + static_cast<long>(d.area()) + geo::scale(i, 2) + static_cast<long>(geo::scale(1.0 * i, 0.5));
    try {
      sum += through(i);
    } catch (const std::exception&) {
      ++caught;
    }
  }
  std::printf("sum %ld caught %d\n", sum, caught);
  return 0;
}
