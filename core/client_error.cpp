#include "core/client_error.hpp"

#include <algorithm>
#include <cctype>

namespace gesso {
namespace {

constexpr std::size_t max_message_bytes = 300;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool all_of(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}

// The part before ":port", when the word ends in one.
std::string_view without_port(std::string_view word) {
  const auto colon = word.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < word.size() &&
      all_of(word.substr(colon + 1), is_digit) && word.find(':') == colon) {
    return word.substr(0, colon);
  }
  return word;
}

bool is_ipv4(std::string_view s) {
  return std::count(s.begin(), s.end(), '.') == 3 &&
         all_of(s, [](char c) { return is_digit(c) || c == '.'; });
}

bool is_ipv6(std::string_view s) {
  if (s.starts_with('[')) {
    return s.find(']') != std::string_view::npos;
  }
  return std::count(s.begin(), s.end(), ':') >= 2 &&
         all_of(s, [](char c) { return is_hex(c) || c == ':' || c == '.'; });
}

// A dotted name ending in a label of letters ("api.example.com", "svc.cluster.local"), or localhost.
bool is_host_name(std::string_view s) {
  if (s == "localhost") {
    return true;
  }
  const auto dot = s.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || (!is_alpha(s.front()) && !is_digit(s.front()))) {
    return false;
  }
  return s.size() - dot - 1 >= 2 && all_of(s.substr(dot + 1), is_alpha) &&
         all_of(s, [](char c) { return is_alpha(c) || is_digit(c) || c == '.' || c == '-'; });
}

// Long runs of letters and digits look like keys and tokens; known key prefixes always do.
bool is_key_like(std::string_view s) {
  for (const std::string_view prefix : {"sk-", "sk_", "r8_", "whsec_", "key-", "AIza"}) {
    if (s.starts_with(prefix) && s.size() > prefix.size() + 3) {
      return true;
    }
  }
  const bool tokenish = s.size() >= 24 && all_of(s, [](char c) {
                          return is_alpha(c) || is_digit(c) || c == '-' || c == '_' || c == '*' || c == '.';
                        });
  return tokenish && std::any_of(s.begin(), s.end(), is_digit) && std::any_of(s.begin(), s.end(), is_alpha);
}

// What a word (punctuation around it already split off) becomes.
std::string_view scrub_word(std::string_view word, bool after_bearer) {
  if (word.find("://") != std::string_view::npos) {
    return "<url>";
  }
  if (after_bearer || is_key_like(word)) {
    return "<redacted>";
  }
  const std::string_view host = without_port(word);
  if (is_ipv4(host) || is_ipv6(word)) {
    return "<address>";
  }
  if (is_host_name(host)) {
    return host.size() == word.size() ? "<host>" : "<address>";
  }
  return word;
}

bool is_edge_punctuation(char c) {
  return c == ',' || c == ';' || c == '(' || c == ')' || c == '"' || c == '\'' || c == '.' || c == '!' ||
         c == '?' || c == '<' || c == '>' || c == '{' || c == '}';
}

// `text` cut at `limit` bytes without splitting a UTF-8 sequence.
std::string cut(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  text.resize(end);
  return text + "…";
}

}  // namespace

std::string scrub_message(std::string_view text) {
  text = text.substr(0, text.find_first_of("\r\n"));
  std::string out;
  bool after_bearer = false;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      out += ' ';
      ++i;
      continue;
    }
    std::size_t end = text.find_first_of(" \t", i);
    end = end == std::string_view::npos ? text.size() : end;
    std::string_view word = text.substr(i, end - i);
    std::size_t lead = 0;
    while (lead < word.size() && is_edge_punctuation(word[lead]) && word[lead] != '<') {
      ++lead;
    }
    std::size_t trail = word.size();
    while (trail > lead && (is_edge_punctuation(word[trail - 1]) || word[trail - 1] == ':')) {
      --trail;
    }
    const std::string_view core = word.substr(lead, trail - lead);
    out += word.substr(0, lead);
    out += core.empty() ? core : scrub_word(core, after_bearer);
    out += word.substr(trail);
    after_bearer = core == "Bearer" || core == "bearer";
    i = end;
  }
  return cut(std::move(out), max_message_bytes);
}

std::string client_failure_message(std::optional<std::string_view> kind, std::string_view stored) {
  const std::string_view k = kind.value_or("internal");
  if (k == "invalid_input" || k == "content_policy" || k == "canceled") {
    std::string scrubbed = scrub_message(stored);
    if (!scrubbed.empty()) {
      return scrubbed;
    }
  }
  if (k == "invalid_input") {
    return "the task's input was refused";
  }
  if (k == "content_policy") {
    return "the provider refused the prompt or an input image under its content policy";
  }
  if (k == "canceled") {
    return "the task was canceled";
  }
  if (k == "provider_unavailable") {
    return "no provider of this model could run the task; its credits were refunded";
  }
  if (k == "deadline") {
    return "the task did not finish before its deadline; its credits were refunded";
  }
  return "the task failed inside the service; its credits were refunded (quote its task id to the operator)";
}

}  // namespace gesso
