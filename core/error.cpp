#include "core/error.hpp"

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace gesso {
namespace {

class category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "gesso"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::malformed_request:
        return "malformed request";
      case errc::invalid_json:
        return "invalid JSON";
      case errc::invalid_field:
        return "invalid field";
      case errc::unknown_model:
        return "unknown model";
      case errc::unauthorized:
        return "unauthorized";
      case errc::insufficient_credits:
        return "insufficient credits";
      case errc::forbidden:
        return "forbidden";
      case errc::range_not_satisfiable:
        return "range not satisfiable";
      case errc::not_found:
        return "not found";
      case errc::method_not_allowed:
        return "method not allowed";
      case errc::payload_too_large:
        return "payload too large";
      case errc::unsupported_media_type:
        return "unsupported media type";
      case errc::header_too_large:
        return "header too large";
      case errc::unavailable:
        return "unavailable";
      case errc::not_implemented:
        return "not implemented";
      case errc::conflict:
        return "conflict";
      case errc::unprocessable:
        return "unprocessable";
      case errc::rate_limited:
        return "rate limited";
    }
    return "unknown gesso error";
  }
};

}  // namespace

const boost::system::error_category& gesso_category() noexcept {
  static const category instance;
  return instance;
}

void throw_exception_from_error(const problem& p, const boost::source_location& loc) {
  boost::throw_with_location(std::runtime_error(p.message), loc);
}

void throw_exception_from_error(const refusal& r, const boost::source_location& loc) {
  boost::throw_with_location(std::runtime_error(r.reason), loc);
}

}  // namespace gesso
