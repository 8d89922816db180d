// kron top's full screen (ncurses): draws the lines of a frame (top/model.hpp layout()) and reads the keys.
// Only the kron command links ncurses; the model and the plain and JSON frames know nothing of it.
#pragma once
#include <memory>
#include <string>

#include "top/model.hpp"

namespace kron::tools {

// What the keys set (docs/tools.md "kron top").
struct TopControls {
  top::SortKey sort = top::SortKey::Rate;
  bool totals = false;   // t: scopes over the whole watch
  bool paused = false;   // p or space: the screen keeps its frame (the watch goes on)
  bool editing = false;  // /: typing the filter
  bool quit = false;     // q
  std::string filter;
};

class TopScreen {
 public:
  // The terminal on standard input and output; nullptr (and *why) when it cannot be used (TERM unknown).
  static std::unique_ptr<TopScreen> open(std::string* why);
  ~TopScreen();  // gives the terminal back
  TopScreen(const TopScreen&) = delete;
  TopScreen& operator=(const TopScreen&) = delete;
  // Reads the keys typed since the last call (never waits); true when the screen must be drawn again.
  bool keys(TopControls& c);
  // Draws `f` (or says the terminal is too small) with the keys' line at the bottom.
  void draw(const top::Frame& f, const TopControls& c);
  // Waits for a key (up to `ms`); true when one came.
  bool wait_key(int ms);

 private:
  TopScreen() = default;
  struct Term;
  Term* term_ = nullptr;
};

}  // namespace kron::tools
