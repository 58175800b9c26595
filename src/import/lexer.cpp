#include "import/lexer.h"

#include <cctype>
#include <cstring>

namespace tcsync::shell {

std::vector<Command> lex(uint32_t file, const std::string& text, Diagnostics& d) {
  std::vector<Command> out;
  Command cur;
  Word w;
  bool in_word = false, skip_rest = false;
  uint32_t line = 1, col = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto here = [&] { return SourceLoc{file, line, col}; };
  auto adv = [&] {
    if (text[i] == '\n')
      ++line, col = 1;
    else
      ++col;
    ++i;
  };
  auto start = [&] {
    if (!in_word) w = Word{}, w.loc = here(), in_word = true;
  };
  auto end_word = [&] {
    if (in_word && !skip_rest) cur.push_back(std::move(w));
    in_word = false;
  };
  auto end_cmd = [&] {
    end_word();
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
    skip_rest = false;
  };
  while (i < n) {
    char c = text[i];
    if (c == '\\' && i + 1 < n && (text[i + 1] == '\n' || (text[i + 1] == '\r' && i + 2 < n && text[i + 2] == '\n'))) {
      while (text[i] != '\n') adv();
      adv();
      continue;
    }
    if (c == '\n') {
      adv();
      end_cmd();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      adv();
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < n && text[i] != '\n') adv();
      continue;
    }
    if (c == '\'' || c == '"') {
      start();
      SourceLoc qloc = here();
      adv();
      bool closed = false;
      while (i < n && text[i] != '\n') {
        char x = text[i];
        if (x == c) {
          adv();
          closed = true;
          break;
        }
        if (c == '"' && x == '\\' && i + 1 < n && std::strchr("\"\\$`", text[i + 1])) {
          adv();
          w.text += text[i];
          adv();
          continue;
        }
        if (c == '"' && (x == '$' || x == '`')) w.expands = true;
        w.text += x;
        adv();
      }
      if (!closed) {
        d.error(qloc, std::string("unterminated ") + (c == '"' ? "double" : "single") + " quote");
        cur.clear();
        in_word = false;
        skip_rest = true;
      }
      continue;
    }
    if (c == '\\') {
      start();
      adv();
      if (i < n && text[i] != '\n') {
        w.text += text[i];
        adv();
      }
      continue;
    }
    if (c == '$' || c == '`') {
      start();
      w.expands = true;
      w.text += c;
      adv();
      continue;
    }
    if (std::strchr(";&|<>", c)) {
      Word op;
      op.op = true;
      // "2>": the digits before a redirection are its file descriptor.
      bool fd = c == '>' && in_word && !w.text.empty() && !w.expands &&
                w.text.find_first_not_of("0123456789") == std::string::npos;
      if (fd) {
        op.loc = w.loc;
        op.text = w.text;
        in_word = false;
      } else {
        end_word();
        op.loc = here();
      }
      op.text += c;
      adv();
      auto next_is = [&](char x) { return i < n && text[i] == x; };
      if ((c == '&' || c == '|' || c == '>') && next_is(c))
        op.text += c, adv();
      else if (c == '&' && next_is('>'))
        op.text += '>', adv();
      if (op.text.back() == '>' && next_is('&')) {
        op.text += '&', adv();
        while (i < n && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '-'))
          op.text += text[i], adv();
      }
      if (op.text == ";" || op.text == "&&") {
        end_cmd();
      } else if (op.text == "||") {
        end_word();
        if (!skip_rest) cur.push_back(std::move(op));  // says the command may fail
        skip_rest = true;                              // `tc ... || true`: the fallback is not imported
      } else if (!skip_rest) {
        cur.push_back(std::move(op));
      }
      continue;
    }
    start();
    w.text += c;
    adv();
  }
  end_cmd();
  return out;
}

}  // namespace tcsync::shell
