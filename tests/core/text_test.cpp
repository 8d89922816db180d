// include/kron/core/text.hpp: the command line as a POSIX shell reads it back (ERRATUM E148), the form the
// trace file's header and the board hold the recorded command in.
#include "kron/core/text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

using kron::text::shell_command;
using kron::text::shell_quote;

TEST(ShellQuote, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(shell_quote("pigz"), "pigz");
  EXPECT_EQ(shell_quote("-p"), "-p");
  EXPECT_EQ(shell_quote("/usr/bin/x_1.2+3,a=b:c@d%"), "/usr/bin/x_1.2+3,a=b:c@d%");
}

TEST(ShellQuote, WordsAShellWouldSplitOrExpandAreSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("pigz -c in > out.gz"), "'pigz -c in > out.gz'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote("*"), "'*'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("\n"), "'\n'");
}

TEST(ShellQuote, CommandReadsBackAsTypedThroughAShell) {
  const std::vector<std::string> argv{"sh", "-c", "printf '%s|' \"$@\"", "x", "a b", "", "it's", "$HOME", "*"};
  const std::string cmd = shell_command(argv);
  EXPECT_EQ(cmd, "sh -c 'printf '\\''%s|'\\'' \"$@\"' x 'a b' '' 'it'\\''s' '$HOME' '*'");
  // The shell gives the program back exactly the words it was given ($0 = x, then the rest).
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(::pclose(p), 0);
  EXPECT_EQ(out, "a b||it's|$HOME|*|");
}
