#include "server/engines/providers/provider.hpp"

#include "core/base64.hpp"

namespace gesso::engines {

std::string_view failure_kind_name(failure_kind kind) {
  switch (kind) {
    case failure_kind::invalid_input:
      return "invalid_input";
    case failure_kind::content_policy:
      return "content_policy";
    case failure_kind::provider_unavailable:
      return "provider_unavailable";
    case failure_kind::deadline:
      return "deadline";
    case failure_kind::canceled:
      return "canceled";
    case failure_kind::internal:
      return "internal";
  }
  return "internal";
}

std::string_view provider_input::mime() const {
  switch (format) {
    case image_format::png:
      return "image/png";
    case image_format::jpeg:
      return "image/jpeg";
    case image_format::webp:
      return "image/webp";
  }
  return "application/octet-stream";
}

std::string provider_input::data_url() const {
  return "data:" + std::string(mime()) + ";base64," + encode_base64(bytes);
}

provider_step provider_step::done(std::vector<provider_output> outputs) {
  provider_step s;
  s.what = kind::done;
  s.outputs = std::move(outputs);
  return s;
}

provider_step provider_step::pending(std::string job, std::chrono::milliseconds delay, int progress) {
  provider_step s;
  s.what = kind::pending;
  s.job = std::move(job);
  s.delay = delay;
  s.progress = progress;
  return s;
}

provider_step provider_step::retry(std::string message, std::chrono::milliseconds delay) {
  provider_step s;
  s.what = kind::retry;
  s.failure = failure_kind::provider_unavailable;
  s.message = std::move(message);
  s.delay = delay;
  return s;
}

provider_step provider_step::failed(failure_kind kind, std::string message) {
  provider_step s;
  s.what = kind::failed;
  s.failure = kind;
  s.message = std::move(message);
  return s;
}

}  // namespace gesso::engines
