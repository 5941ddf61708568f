// Fuzzes request framing as the frontend reads it: the Beast parser fed through a buffer of bounded
// size (as server/api/http_server.cpp reads), and the framing rules of server/api/http_framing.hpp applied to
// every header. Invariants: the buffer never holds more than its limit, and a header the framing rules
// accept is framed by the parser exactly as they assume (a Transfer-Encoding always means chunked),
// so no body can be read as a second request.

#include "server/api/http_framing.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <string>

using gesso::fuzz::require;
namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t buffer_limit = 4096 + 1024;  // header limit plus room for a chunk line
  const auto input = gesso::fuzz::as_text(data, size);
  std::size_t fed = 0;
  // Several requests may follow one another on a connection: parse them in turn.
  for (int request = 0; request < 8 && fed < input.size(); ++request) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(4096);
    parser.body_limit(64 * 1024);
    std::string buffer;
    bool checked = false;
    while (!parser.is_done()) {
      const std::size_t room = buffer_limit - buffer.size();
      if (room == 0 || fed == input.size()) {
        return 0;  // the server answers 400 (buffer full) or waits for bytes that do not come
      }
      const std::size_t take = std::min<std::size_t>({room, 512, input.size() - fed});
      buffer.append(input.substr(fed, take));
      fed += take;
      require(buffer.size() <= buffer_limit, "the read buffer stays within its limit");
      boost::system::error_code ec;
      const std::size_t used = parser.put(boost::asio::buffer(buffer), ec);
      buffer.erase(0, used);
      if (ec == http::error::need_more) {
        continue;
      }
      if (ec) {
        return 0;  // refused as malformed: the connection closes
      }
      if (parser.is_header_done() && !checked) {
        checked = true;
        const auto problem = gesso::api::framing_problem(parser.get());
        if (problem) {
          return 0;  // refused before the body: the connection closes
        }
        const bool has_te = parser.get().count(http::field::transfer_encoding) > 0;
        require(!has_te || parser.chunked(), "an accepted Transfer-Encoding is framed as chunked");
        require(has_te || !parser.chunked(), "no chunked body without a Transfer-Encoding");
        if (!has_te) {
          require(!parser.content_length() || parser.get().count(http::field::content_length) > 0,
                  "a length comes only from Content-Length");
        }
      }
      // Unconsumed bytes stay in the buffer for the next request on the connection.
      if (parser.is_done()) {
        fed -= buffer.size();
      }
    }
  }
  return 0;
}
