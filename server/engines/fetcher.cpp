#include "server/engines/fetcher.hpp"

#include "core/base64.hpp"
#include "core/create_request.hpp"
#include "server/runtime/asio_helpers.hpp"

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

#include <memory>
#include <optional>

namespace gesso::engines {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

using runtime::as_tuple_awaitable;
constexpr std::size_t answer_buffer_bytes = 32 * 1024;

// What one request/response exchange gave.
struct fetched_answer {
  unsigned status = 0;
  std::string location = {};
  std::string body = {};
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string error = {};  ///< set when there is no usable response
};

std::string describe(const boost::system::error_code& ec, std::size_t max_bytes) {
  if (ec == http::error::body_limit) {
    return "the response is larger than " + std::to_string(max_bytes) + " bytes";
  }
  if (ec == http::error::buffer_overflow) {
    return "the response has a header, chunk-size line or trailer longer than " +
           std::to_string(answer_buffer_bytes) + " bytes";
  }
  return ec.message();
}

// The request line, headers and body of one exchange.
struct outgoing {
  std::string method;
  std::string host;         ///< resolved and checked; the TLS server name
  std::string host_header;  ///< host and, when the URL gives one, port (RFC 9110 §7.2)
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  fetch_policy policy;
};

template <class Stream>
asio::awaitable<fetched_answer> request_over(Stream* stream, const outgoing* out, std::size_t max_bytes) {
  fetched_answer r;
  http::request<http::string_body> req(http::string_to_verb(out->method), out->target, 11);
  req.set(http::field::host, out->host_header);
  req.set(http::field::user_agent, "gesso/1");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : out->headers) {
    req.set(name, value);
  }
  req.body() = out->body;
  req.prepare_payload();
  auto [wec, wn] = co_await http::async_write(*stream, req, as_tuple_awaitable);
  if (wec) {
    r.error = "sending the request failed: " + wec.message();
    co_return r;
  }
  // Bounded: a header block or a chunk-size line longer than this is an error, not a growing buffer.
  beast::flat_buffer buffer(answer_buffer_bytes);
  // Interim 1xx answers (100 Continue, 103 Early Hints) precede the final one: skip a few of them.
  for (int interim = 0;; ++interim) {
    http::response_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(max_bytes);
    auto [rec, rn] = co_await http::async_read(*stream, buffer, parser, as_tuple_awaitable);
    if (rec && !(rec == http::error::end_of_stream && parser.is_done())) {
      r.error = describe(rec, max_bytes);
      co_return r;
    }
    const unsigned status = parser.get().result_int();
    if (status >= 100 && status < 200 && status != 101 && interim < 8) {
      continue;
    }
    r.status = status;
    r.location = std::string(parser.get()[http::field::location]);
    for (const auto& field : parser.get()) {
      r.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    r.body = std::move(parser.get().body());
    break;
  }
  co_return r;
}

asio::awaitable<fetched_answer> fetch_once(std::shared_ptr<const outgoing> out, std::string port, bool tls,
                                           std::size_t max_bytes) {
  const std::string& host = out->host;
  const auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto [ec, endpoints] = co_await resolver.async_resolve(host, port, as_tuple_awaitable);
  if (ec) {
    co_return fetched_answer{.error = "cannot resolve " + host + ": " + ec.message()};
  }
  // Check every address the name resolved to; connect only to those that passed, so a second
  // resolution (DNS rebinding) cannot swap in another address.
  std::vector<tcp::endpoint> allowed;
  std::string refused;
  for (const auto& entry : endpoints) {
    const auto address = entry.endpoint().address();
    std::string why;
    if (address.is_v4()) {
      why = out->policy.refusal_for(address.to_v4().to_bytes());
    } else {
      why = out->policy.refusal_for(address.to_v6().to_bytes());
    }
    if (why.empty()) {
      allowed.push_back(entry.endpoint());
    } else if (refused.empty()) {
      refused = address.to_string() + ", " + why;
    }
  }
  if (allowed.empty()) {
    co_return fetched_answer{.error = "refused to connect to " + host + ": it resolves to " + refused};
  }
  beast::tcp_stream tcp(executor);
  auto [cec, connected] = co_await tcp.async_connect(allowed, as_tuple_awaitable);
  if (cec) {
    co_return fetched_answer{.error = "cannot connect to " + host + ": " + cec.message()};
  }
  if (!tls) {
    fetched_answer r = co_await request_over(&tcp, out.get(), max_bytes);
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
    co_return fetched_answer{.error = "TLS with " + host + " failed: " + hec.message()};
  }
  fetched_answer r = co_await request_over(&stream, out.get(), max_bytes);
  co_return r;
}

// One exchange with `url` before `deadline`.
checked<http_answer> request_until(const boost::urls::url_view& url, const http_call& call,
                                   std::size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                                   const fetch_policy& policy) {
  const bool tls = url.scheme_id() == boost::urls::scheme::https;
  if (!tls && url.scheme_id() != boost::urls::scheme::http) {
    return refusal{"only http and https URLs can be fetched"};
  }
  auto out = std::make_shared<outgoing>();
  out->method = call.method;
  out->host = std::string(url.encoded_host_address());
  out->host_header = std::string(url.encoded_host_and_port());
  out->target = std::string(url.encoded_resource());
  if (out->target.empty() || out->target.front() != '/') {
    out->target.insert(0, "/");
  }
  out->headers = call.headers;
  out->body = call.body;
  out->policy = policy;
  const std::string port = url.has_port() ? std::string(url.port()) : (tls ? "443" : "80");
  asio::io_context ioc;
  std::optional<fetched_answer> result;
  asio::co_spawn(ioc, fetch_once(out, port, tls, max_bytes),
                 [&result](std::exception_ptr error, fetched_answer r) {
                   if (error) {
                     r.error = "the request failed unexpectedly";
                   }
                   result = std::move(r);
                 });
  const auto left = deadline - std::chrono::steady_clock::now();
  ioc.run_for(std::max<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(1)));
  if (!result) {
    return refusal{"no answer from " + out->host + " in time"};
  }
  if (!result->error.empty()) {
    return refusal{result->error};
  }
  return http_answer{result->status, std::move(result->location), std::move(result->body),
                     std::move(result->headers)};
}

checked<std::string> fetch_http(std::string_view text, const fetch_limits& limits) {
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  boost::urls::url current(boost::urls::parse_uri(text).value());
  current.remove_fragment();
  const http_call call{
      .method = "GET", .url = {}, .headers = {{"Accept", "image/png, image/jpeg, image/webp"}}};
  for (int hop = 0;; ++hop) {
    auto answer = request_until(current, call, limits.max_bytes, deadline, limits.policy);
    if (!answer) {
      if (answer.error().reason.starts_with("no answer")) {
        return refusal{"fetching " + std::string(current.encoded_host_address()) + " took longer than " +
                       std::to_string(limits.timeout.count()) + " ms"};
      }
      return answer.error();
    }
    if (answer->status >= 300 && answer->status < 400 && !answer->location.empty()) {
      if (hop >= limits.max_redirects) {
        return refusal{"more than " + std::to_string(limits.max_redirects) + " redirects"};
      }
      const auto next = boost::urls::parse_uri_reference(answer->location);
      boost::urls::url resolved;
      if (!next || !boost::urls::resolve(current, *next, resolved)) {
        return refusal{"redirected to an invalid URL"};
      }
      current = resolved;
      current.remove_fragment();
      continue;
    }
    if (answer->status != 200) {
      return refusal{std::string(current.encoded_host_address()) + " answered HTTP " +
                     std::to_string(answer->status)};
    }
    return checked<std::string>(boost::system::in_place_value, std::move(answer->body));
  }
}

}  // namespace

checked<std::string> fetch_input(std::string_view url, const fetch_limits& limits) {
  if (is_data_url(url)) {
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
  if (!boost::urls::parse_uri(url)) {
    return refusal{"not a valid URL"};
  }
  return fetch_http(url, limits);
}

checked<http_answer> http_request(const http_call& call, std::size_t max_bytes,
                                  std::chrono::milliseconds timeout, const fetch_policy& policy) {
  const auto url = boost::urls::parse_absolute_uri(call.url);
  if (!url) {
    return refusal{"not a valid URL: " + call.url};
  }
  return request_until(*url, call, max_bytes, std::chrono::steady_clock::now() + timeout, policy);
}

}  // namespace gesso::engines
