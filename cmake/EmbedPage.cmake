# Run as a script (cmake -P) at build time: embeds kron rpt --html's script and style sheet, kept as files of
# their own (src/analysis/html_page.js, html_page.css), into a header as raw string literals.
# -DJS=... -DCSS=... -DOUT=...
file(READ "${JS}" js)
file(READ "${CSS}" css)
foreach(part js css)
  string(FIND "${${part}}" ")KRONPAGE\"" bad)
  if(NOT bad EQUAL -1)
    message(FATAL_ERROR "${part}: holds the raw string's delimiter )KRONPAGE\"")
  endif()
endforeach()
set(text "// Generated from src/analysis/html_page.js and html_page.css by cmake/EmbedPage.cmake: do not edit.\n")
string(APPEND text "#pragma once\nnamespace kron::analysis {\n")
string(APPEND text "inline constexpr const char* kPageScript = R\"KRONPAGE(${js})KRONPAGE\";\n")
string(APPEND text "inline constexpr const char* kPageStyle = R\"KRONPAGE(${css})KRONPAGE\";\n")
string(APPEND text "}  // namespace kron::analysis\n")
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
