// http-task: any provider that follows the usual pattern — submit a JSON task, get an id, poll a status,
// read an output URL or base64, read an error message — described in the catalog instead of written in
// C++ (docs/engines.md#http-task). The settings are read and checked once (http_task_spec.cpp); every
// answer that does not match them fails the task as `internal`, naming the route and the pointer.

#include "core/base64.hpp"
#include "server/engines/providers/adapters.hpp"
#include "server/engines/providers/http_task_answers.hpp"

#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <ctime>

namespace gesso::engines {
namespace json = boost::json;
using namespace std::chrono_literals;
using namespace http_task;

namespace {

// A stable seed from the task id (FNV-1a, 31 bits): the same on every attempt and every build.
std::int64_t seed_of(std::string_view task_id) {
  std::uint32_t h = 2166136261U;
  for (const char c : task_id) {
    h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
  }
  return static_cast<std::int64_t>(h & 0x7FFFFFFFU);
}

class http_task_adapter : public provider_adapter {
 public:
  http_task_adapter(const route_settings& s, const provider_client& client, const model_spec& model)
      : settings_(&s),
        client_(&client),
        spec_(parse_spec(s, model)),
        read_(spec_, "http-task " + s.label, s.poll_interval) {}

  provider_step submit(const provider_request& r) override {
    const template_values values = values_for(r);
    auto answer = send(spec_.create.pick(r.images.size()), values);
    if (!answer) {
      return no_answer("http-task " + settings_->label, answer.error());
    }
    auto checked = read_.check(*answer, "create");
    if (checked.stop) {
      return std::move(*checked.stop);
    }
    return spec_.sync ? read_.output_of(checked.body, "create") : read_.job_of(checked.body, *answer);
  }

  provider_step poll(const provider_request& r, const std::string& job) override {
    template_values values = values_for(r);
    values.named["id"] = job;
    auto answer = send(spec_.poll.pick(r.image_count), values);
    if (!answer) {
      return no_answer("http-task " + settings_->label, answer.error());
    }
    auto checked = read_.check(*answer, "poll");
    if (checked.stop) {
      return std::move(*checked.stop);
    }
    if (auto step = read_.state_of(checked.body, *answer, job)) {
      return std::move(*step);  // not done yet, or failed
    }
    if (!spec_.result) {
      return read_.output_of(checked.body, "poll");
    }
    if (auto missing = read_.capture(checked.body, values)) {
      return std::move(*missing);
    }
    // The follow-up request for the output (MiniMax: the file behind the job's file_id).
    auto result = send(*spec_.result, values);
    auto read = result ? read_.check(*result, "result") : answer_reader::checked_answer{};
    if (!result || (read.stop && read.stop->what == provider_step::kind::retry)) {
      return provider_step::pending(job, read_.next_poll(*answer));  // done there: ask again next poll
    }
    return read.stop ? std::move(*read.stop) : read_.output_of(read.body, "result");
  }

  void cancel(const std::string& job) override {
    if (spec_.cancel) {
      template_values values;
      values.named["id"] = job;
      values.named["model"] = settings_->model;
      static_cast<void>(send(*spec_.cancel, values));
    }
  }

 private:
  template_values values_for(const provider_request& r) const {
    template_values v;
    v.named["prompt"] = r.prompt;
    v.named["aspect_ratio"] = r.aspect_ratio;
    v.named["seed"] = seed_of(r.task_id);
    v.named["duration"] = r.duration_seconds;
    v.named["model"] = settings_->model;
    v.named["task_id"] = r.task_id;
    for (const auto& [name, map] : spec_.maps) {
      const auto it = map.values.find(map.by_duration ? std::to_string(r.duration_seconds) : r.aspect_ratio);
      if (it != map.values.end()) {
        v.named[name] = it->second;
      }
    }
    for (const provider_input& image : r.images) {
      v.image_urls.push_back(image.url);
      v.image_base64.push_back(encode_base64(image.bytes));
      v.image_data_urls.push_back(image.data_url());
    }
    return v;
  }

  checked<http_answer> send(const request_spec& req, const template_values& values) const {
    std::string target = render_text(req.path, values, true);
    header_list headers;
    auto all = spec_.headers;
    all.insert(all.end(), req.headers.begin(), req.headers.end());
    for (const auto& [name, value] : all) {
      std::string text = render_text(value, values, false);
      std::erase_if(text, [](char c) { return c == '\r' || c == '\n'; });  // a value cannot add a header
      headers.emplace_back(name, std::move(text));
    }
    if (spec_.auth == auth_kind::query) {
      target += (target.find('?') == std::string::npos ? "?" : "&") + spec_.auth_name + "=" +
                boost::urls::encode(settings_->api_key, boost::urls::unreserved_chars);
    } else if (spec_.auth == auth_kind::jwt_hs256) {
      headers.emplace_back("Authorization",
                           "Bearer " + kling_jwt(settings_->api_key, spec_.secret, std::time(nullptr)));
    }
    std::string body;
    if (req.body) {
      body = json::serialize(render(*req.body, values));
      headers.emplace_back("Content-Type", "application/json");
    }
    // An answer is read up to 4 MiB, or, when the route's output is base64 inside an answer, up to
    // max_output_bytes × 4/3 + 64 KiB (docs/engines.md#http-task): a URL-output route never buffers more.
    const std::size_t most =
        spec_.output == output_kind::base64 ? client_->inline_answer_bytes() : 4 * 1024 * 1024;
    return client_->send(req.method, target, std::move(headers), std::move(body), most);
  }

  const route_settings* settings_;
  const provider_client* client_;
  spec spec_;
  answer_reader read_;
};

}  // namespace

std::unique_ptr<provider_adapter> make_http_task(const route_settings& s, const provider_client& client,
                                                 const model_spec& model) {
  return std::make_unique<http_task_adapter>(s, client, model);
}

}  // namespace gesso::engines
