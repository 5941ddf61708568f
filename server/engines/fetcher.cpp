#include "server/engines/fetcher.hpp"

#include "core/base64.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <optional>

namespace gesso::engines {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// What one request/response exchange gave.
struct exchange_result {
  unsigned status = 0;
  std::string location = {};
  std::string body = {};
  std::string error = {};  ///< set when there is no usable response
};

std::string describe(const boost::system::error_code& ec, std::size_t max_bytes) {
  if (ec == http::error::body_limit) {
    return "the image is larger than " + std::to_string(max_bytes) + " bytes";
  }
  return ec.message();
}

template <class Stream>
asio::awaitable<exchange_result> request_over(Stream* stream, const std::string* host,
                                              const std::string* target, std::size_t max_bytes) {
  exchange_result r;
  http::request<http::empty_body> req(http::verb::get, *target, 11);
  req.set(http::field::host, *host);
  req.set(http::field::user_agent, "gesso-fetcher/1");
  req.set(http::field::accept, "image/png, image/jpeg, image/webp");
  req.set(http::field::connection, "close");
  auto [wec, wn] = co_await http::async_write(*stream, req, as_tuple_awaitable);
  if (wec) {
    r.error = "sending the request failed: " + wec.message();
    co_return r;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(max_bytes);
  auto [rec, rn] = co_await http::async_read(*stream, buffer, parser, as_tuple_awaitable);
  if (rec && !(rec == http::error::end_of_stream && parser.is_done())) {
    r.error = describe(rec, max_bytes);
    co_return r;
  }
  r.status = parser.get().result_int();
  r.location = std::string(parser.get()[http::field::location]);
  r.body = std::move(parser.get().body());
  co_return r;
}

asio::awaitable<exchange_result> exchange_once(std::string host, std::string port, std::string target,
                                               bool tls, std::size_t max_bytes) {
  const auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto [ec, endpoints] = co_await resolver.async_resolve(host, port, as_tuple_awaitable);
  if (ec) {
    co_return exchange_result{.error = "cannot resolve " + host + ": " + ec.message()};
  }
  beast::tcp_stream tcp(executor);
  auto [cec, connected] = co_await tcp.async_connect(endpoints, as_tuple_awaitable);
  if (cec) {
    co_return exchange_result{.error = "cannot connect to " + host + ": " + cec.message()};
  }
  if (!tls) {
    exchange_result r = co_await request_over(&tcp, &host, &target, max_bytes);
    co_return r;
  }
  asio::ssl::context context(asio::ssl::context::tls_client);
  context.set_default_verify_paths();
  context.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp), context);
  stream.set_verify_callback(asio::ssl::host_name_verification(host));
  SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, as_tuple_awaitable);
  if (hec) {
    co_return exchange_result{.error = "TLS with " + host + " failed: " + hec.message()};
  }
  exchange_result r = co_await request_over(&stream, &host, &target, max_bytes);
  co_return r;
}

checked<std::string> fetch_http(std::string_view text, const fetch_limits& limits) {
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  boost::urls::url current(boost::urls::parse_absolute_uri(text).value());
  for (int hop = 0;; ++hop) {
    const bool tls = current.scheme_id() == boost::urls::scheme::https;
    if (!tls && current.scheme_id() != boost::urls::scheme::http) {
      return refusal{"redirected to a URL that is not http or https"};
    }
    const std::string host(current.encoded_host_name());
    const std::string port = current.has_port() ? std::string(current.port()) : (tls ? "443" : "80");
    std::string target(current.encoded_resource());
    if (target.empty() || target.front() != '/') {
      target.insert(0, "/");
    }
    asio::io_context ioc;
    std::optional<exchange_result> result;
    asio::co_spawn(ioc, exchange_once(host, port, target, tls, limits.max_bytes),
                   [&result](std::exception_ptr error, exchange_result r) {
                     if (error) {
                       r.error = "the fetch failed unexpectedly";
                     }
                     result = std::move(r);
                   });
    const auto left = deadline - std::chrono::steady_clock::now();
    ioc.run_for(std::max<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(1)));
    if (!result) {
      return refusal{"fetching " + host + " took longer than " + std::to_string(limits.timeout.count()) +
                     " ms"};
    }
    if (!result->error.empty()) {
      return refusal{result->error};
    }
    if (result->status >= 300 && result->status < 400 && !result->location.empty()) {
      if (hop >= limits.max_redirects) {
        return refusal{"more than " + std::to_string(limits.max_redirects) + " redirects"};
      }
      const auto next = boost::urls::parse_uri_reference(result->location);
      if (!next) {
        return refusal{"redirected to an invalid URL"};
      }
      boost::urls::url resolved;
      if (!boost::urls::resolve(current, *next, resolved)) {
        return refusal{"redirected to an invalid URL"};
      }
      current = resolved;
      continue;
    }
    if (result->status != 200) {
      return refusal{host + " answered HTTP " + std::to_string(result->status)};
    }
    return checked<std::string>(boost::system::in_place_value, std::move(result->body));
  }
}

}  // namespace

checked<std::string> fetch_input(std::string_view url, const fetch_limits& limits) {
  if (url.size() >= 5 && (url.substr(0, 5) == "data:" || url.substr(0, 5) == "DATA:")) {
    const auto comma = url.find(',');
    auto bytes = comma == std::string_view::npos ? std::nullopt : decode_base64(url.substr(comma + 1));
    if (!bytes) {
      return refusal{"the data: URL is not valid base64"};
    }
    if (bytes->size() > limits.max_bytes) {
      return refusal{"the image is larger than " + std::to_string(limits.max_bytes) + " bytes"};
    }
    return checked<std::string>(boost::system::in_place_value, std::move(*bytes));
  }
  if (!boost::urls::parse_absolute_uri(url)) {
    return refusal{"not a valid URL"};
  }
  return fetch_http(url, limits);
}

}  // namespace gesso::engines
