// kron top's full screen over ncurses (top_screen.hpp).
#include "tools/top_screen.hpp"

// Functions, not ncurses' macros (erase(), clear(), timeout() would rewrite std::string's members).
#define NCURSES_NOMACROS 1
#include <curses.h>

#include <cstdio>

namespace kron::tools {

struct TopScreen::Term {
  SCREEN* screen = nullptr;
  bool color = false;
};

namespace {
constexpr int kMinCols = 40, kMinLines = 8;  // below this the screen says it is too small
constexpr short kAlertPair = 1;

int attr_of(top::Attr a, bool color) {
  switch (a) {
    case top::Attr::Title: return A_BOLD | A_UNDERLINE;
    case top::Attr::Bold: return A_BOLD;
    case top::Attr::Alert: return A_BOLD | (color ? COLOR_PAIR(kAlertPair) : A_REVERSE);
    default: return A_NORMAL;
  }
}
}  // namespace

std::unique_ptr<TopScreen> TopScreen::open(std::string* why) {
  SCREEN* s = ::newterm(nullptr, stdout, stdin);
  if (!s) {
    *why = "the terminal cannot be used (is TERM set?)";
    return nullptr;
  }
  std::unique_ptr<TopScreen> t(new TopScreen);
  t->term_ = new Term{s, false};
  ::cbreak();  // keys one at a time; Ctrl-C still a signal (it ends the program, as under kron record)
  ::noecho();
  ::nodelay(stdscr, TRUE);
  ::keypad(stdscr, TRUE);
  ::curs_set(0);
  if (::has_colors() && ::start_color() == OK) {
    ::use_default_colors();
    t->term_->color = ::init_pair(kAlertPair, COLOR_RED, -1) == OK;
  }
  return t;
}

TopScreen::~TopScreen() {
  if (!term_) return;
  ::endwin();
  ::delscreen(term_->screen);
  delete term_;
}

bool TopScreen::keys(TopControls& c) {
  bool changed = false;
  for (int k; (k = ::getch()) != ERR;) {
    changed = true;
    if (c.editing) {  // the filter: printable characters, Backspace, Enter ends, Escape clears
      if (k == '\n' || k == KEY_ENTER)
        c.editing = false;
      else if (k == 27)
        c.editing = false, c.filter.clear();
      else if ((k == KEY_BACKSPACE || k == 127 || k == 8) && !c.filter.empty())
        c.filter.pop_back();
      else if (k >= 32 && k < 127 && c.filter.size() < 64)
        c.filter += static_cast<char>(k);
      continue;
    }
    switch (k) {
      case 'q':
      case 'Q': c.quit = true; break;
      case 'p':
      case ' ': c.paused = !c.paused; break;
      case 't': c.totals = !c.totals; break;
      case '/': c.editing = true; break;
      case 's': c.sort = static_cast<top::SortKey>((static_cast<int>(c.sort) + 1) % 6); break;
      case 'c': c.sort = top::SortKey::Rate; break;
      case 'm': c.sort = top::SortKey::Mean; break;
      case '5': c.sort = top::SortKey::P50; break;
      case '9': c.sort = top::SortKey::P99; break;
      case 'x': c.sort = top::SortKey::Max; break;
      case 'n': c.sort = top::SortKey::Name; break;
      default: break;  // KEY_RESIZE among them: drawn again at the new size
    }
  }
  return changed;
}

bool TopScreen::wait_key(int ms) {
  ::timeout(ms);
  const int k = ::getch();
  ::nodelay(stdscr, TRUE);
  if (k == ERR) return false;
  ::ungetch(k);
  return true;
}

void TopScreen::draw(const top::Frame& f, const TopControls& c) {
  ::erase();
  const int cols = COLS, lines = LINES;
  if (cols < kMinCols || lines < kMinLines) {
    ::mvaddnstr(0, 0, "terminal too small for kron top", cols);
    ::mvaddnstr(1, 0, ("(" + std::to_string(cols) + "x" + std::to_string(lines) + ", needs 40x8)").c_str(), cols);
    ::refresh();
    return;
  }
  const auto rows = top::layout(f, static_cast<unsigned>(cols), static_cast<unsigned>(lines - 1));
  for (int y = 0; y < lines - 1 && y < static_cast<int>(rows.size()); ++y) {
    int x = 0;
    for (const auto& s : rows[static_cast<std::size_t>(y)]) {
      if (x >= cols) break;
      const int a = attr_of(s.attr, term_->color);
      ::attron(a);
      ::mvaddnstr(y, x, s.text.c_str(), cols - x);
      ::attroff(a);
      x += static_cast<int>(s.text.size());
    }
  }
  std::string help = c.editing ? "filter: " + c.filter + "_  (Enter: done, Esc: clear)"
                               : std::string("q quit  s sort (c m 5 9 x n)  t totals  / filter  p pause") +
                                     (c.paused ? "   PAUSED" : "");
  ::attron(A_REVERSE);
  ::mvaddnstr(lines - 1, 0, help.c_str(), cols);
  ::attroff(A_REVERSE);
  ::refresh();
}

}  // namespace kron::tools
