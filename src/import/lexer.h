// The shell's part of `tcsync import`: a `tc -b` batch file or a shell
// script split into commands of words, each word with its FILE:LINE:COL.
// What the words mean is the importer's (import_tc.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/diag.h"
#include "model/tc_words.h"

namespace tcsync::shell {

struct Word : TcWord {
  bool op = false;       // a shell operator: | & < > and redirections such as 2>&1
  bool expands = false;  // holds $ or ` outside single quotes: the shell would rewrite it
};
using Command = std::vector<Word>;

// Splits text into commands the way a shell (and `tc -b`) does: blanks
// separate words, quotes group, '#' starts a comment, a backslash at the end
// of a line continues it; `;` and `&&` end a command, `||` starts a fallback
// (kept as an operator word, its commands dropped: they only run when tc
// fails), other operators are kept as words.
std::vector<Command> lex(uint32_t file, const std::string& text, Diagnostics& d);

}  // namespace tcsync::shell
