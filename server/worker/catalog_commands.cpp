#include "server/worker/catalog_commands.hpp"

#include "core/catalog.hpp"
#include "core/ids.hpp"
#include "core/network_policy.hpp"
#include "server/engines/engine.hpp"
#include "server/engines/providers/provider_http.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace gesso::worker {
namespace {

struct usage_error {
  std::string what;
};

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw usage_error{path + ": cannot read the file"};
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

catalog load(const std::string& path) {
  auto parsed = catalog::parse(read_file(path));
  if (!parsed) {
    throw usage_error{path + ": " + parsed.error().reason};
  }
  return *parsed;
}

// Where input images and outputs may be fetched from: GESSO_FETCH_ALLOW_NETWORKS, as for the worker.
engines::engine_environment environment() {
  engines::engine_environment env;
  if (const char* ffmpeg = std::getenv("GESSO_FFMPEG"); ffmpeg != nullptr && *ffmpeg != '\0') {
    env.ffmpeg = ffmpeg;
  }
  if (const char* allow = std::getenv("GESSO_FETCH_ALLOW_NETWORKS"); allow != nullptr && *allow != '\0') {
    auto networks = parse_networks(allow);
    if (!networks) {
      throw usage_error{"GESSO_FETCH_ALLOW_NETWORKS: " + networks.error().reason};
    }
    env.fetching = fetch_policy{std::move(*networks)};
  }
  return env;
}

int check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    throw usage_error{"catalog check takes one FILE"};
  }
  const catalog models = load(args[0]);
  const auto env = environment();
  std::size_t routes = 0;
  int problems = 0;
  for (const model_spec& m : models.models()) {
    try {
      static_cast<void>(engines::make_engine(m, env));
      routes += m.routes.empty() ? 1 : m.routes.size();
    } catch (const std::exception& e) {
      err << e.what() << '\n';
      ++problems;
    }
  }
  if (problems > 0) {
    err << args[0] << ": " << problems << " of " << models.models().size() << " models refused\n";
    return 2;
  }
  out << args[0] << ": " << models.models().size() << " models, " << routes << " routes: ok\n";
  return 0;
}

// "Authorization: [redacted]", and the key replaced wherever else it appears.
std::string redacted(std::string text, const engines::route_settings& s) {
  if (!s.api_key.empty()) {
    for (auto at = text.find(s.api_key); at != std::string::npos; at = text.find(s.api_key, at)) {
      text.replace(at, s.api_key.size(), "[redacted]");
    }
  }
  if (text.size() > 1200) {
    text = text.substr(0, 1200) + "… (" + std::to_string(text.size()) + " bytes)";
  }
  return text;
}

void print_exchanges(std::ostream& out) {
  engines::provider_client::observe_exchanges(
      [&out](const engines::route_settings& s, const engines::http_call& call,
             const checked<engines::http_answer>& answer, std::chrono::steady_clock::duration took) {
        out << "→ " << call.method << ' ' << redacted(call.url, s) << '\n';
        for (const auto& [name, value] : call.headers) {
          const bool secret = boost::algorithm::iequals(name, "authorization") ||
                              boost::algorithm::icontains(name, "key") ||
                              boost::algorithm::icontains(name, "token");
          out << "  " << name << ": " << (secret ? "[redacted]" : redacted(value, s)) << '\n';
        }
        if (!call.body.empty()) {
          out << "  " << redacted(call.body, s) << '\n';
        }
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
        if (!answer) {
          out << "← no answer after " << ms << " ms: " << redacted(answer.error().reason, s) << "\n\n";
          return;
        }
        out << "← " << answer->status << " (" << answer->body.size() << " bytes, " << ms << " ms)\n";
        const bool text = answer->body.find('\0') == std::string::npos && answer->body.size() < 64 * 1024;
        out << "  " << (text ? redacted(answer->body, s) : "(binary)") << "\n\n";
      });
}

struct try_options {
  std::string model;
  std::string prompt;
  std::string catalog_path;
  std::size_t route = 0;
  std::vector<std::string> images;
  std::string aspect_ratio;
  std::string out_dir;
};

try_options parse_try(const std::vector<std::string>& args) {
  try_options o;
  if (args.empty() || args[0].starts_with("--")) {
    throw usage_error{"catalog try takes a MODEL, then --prompt TEXT"};
  }
  o.model = args[0];
  if (const char* path = std::getenv("GESSO_CATALOG")) {
    o.catalog_path = path;
  }
  for (std::size_t i = 1; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) {
      throw usage_error{args[i] + " wants a value"};
    }
    const std::string& v = args[i + 1];
    if (args[i] == "--prompt") {
      o.prompt = v;
    } else if (args[i] == "--catalog") {
      o.catalog_path = v;
    } else if (args[i] == "--route") {
      o.route = static_cast<std::size_t>(std::stoul(v));
    } else if (args[i] == "--image") {
      o.images.push_back(v);
    } else if (args[i] == "--aspect-ratio") {
      o.aspect_ratio = v;
    } else if (args[i] == "--out") {
      o.out_dir = v;
    } else {
      throw usage_error{"unknown option " + args[i] +
                        " (--prompt, --catalog, --route, --image, --aspect-ratio, --out)"};
    }
  }
  if (o.prompt.empty()) {
    throw usage_error{"catalog try needs --prompt TEXT"};
  }
  if (o.out_dir.empty()) {
    o.out_dir =
        (std::filesystem::temp_directory_path() / ("gesso-try-" + new_task_id().substr(5, 8))).string();
  }
  return o;
}

int try_one(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const try_options o = parse_try(args);
  const catalog models = o.catalog_path.empty() ? catalog::builtin() : load(o.catalog_path);
  const model_spec* found = models.find(o.model);
  if (found == nullptr) {
    throw usage_error{"no model \"" + o.model + "\" in " +
                      (o.catalog_path.empty() ? "the built-in catalog" : o.catalog_path)};
  }
  model_spec m = *found;
  if (m.routes.size() <= o.route || m.routes[o.route].engine == "builtin" ||
      m.routes[o.route].engine == "task-api") {
    throw usage_error{"model \"" + o.model + "\" has no provider route " + std::to_string(o.route)};
  }
  m.routes = {m.routes[o.route]};  // only this route: no failover
  print_exchanges(out);
  const auto engine = engines::make_engine(m, environment());
  engines::media_store media(o.out_dir);
  engines::engine_job job{.task_id = new_task_id(),
                          .model = &m,
                          .prompt = o.prompt,
                          .aspect_ratio = o.aspect_ratio.empty() ? m.default_aspect_ratio : o.aspect_ratio,
                          .image_urls = o.images,
                          .attempt = 1,
                          .provider_job = std::nullopt};
  out << "trying " << o.model << " routes[" << o.route << "] (" << m.routes[0].engine << ") as "
      << job.task_id << "\n\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(m.deadline_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const engines::engine_outcome r = engine->run(job, media);
    using kind = engines::engine_outcome::kind;
    if (r.result == kind::succeeded) {
      for (const auto& key : {r.image, r.video, r.audio}) {
        if (key) {
          out << "succeeded: " << (std::filesystem::path(o.out_dir) / *key).string() << '\n';
        }
      }
      return 0;
    }
    if (r.result == kind::failed || (r.result == kind::retry && job.attempt >= m.max_attempts)) {
      err << "failed (" << (r.failure.empty() ? "internal" : r.failure) << "): " << r.error << '\n';
      return 1;
    }
    if (r.result == kind::retry) {
      out << "retry after " << r.delay.count() << " ms: " << r.error << "\n\n";
      ++job.attempt;
    } else {
      out << "waiting " << r.delay.count() << " ms\n\n";
      job.provider_job = r.provider_job;
    }
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(r.delay, std::chrono::seconds(60)));
  }
  if (job.provider_job) {
    engine->cancel(*job.provider_job);
  }
  err << "failed (deadline): no result within the model's " << m.deadline_seconds << " s\n";
  return 1;
}

}  // namespace

int run_catalog_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.size() >= 2 && args[0] == "catalog" && args[1] == "check") {
      return check({args.begin() + 2, args.end()}, out, err);
    }
    if (args.size() >= 2 && args[0] == "catalog" && args[1] == "try") {
      return try_one({args.begin() + 2, args.end()}, out, err);
    }
    throw usage_error{
        "usage: catalog check FILE | catalog try MODEL --prompt TEXT [--catalog FILE] "
        "[--route N] [--image URL]... [--aspect-ratio W:H] [--out DIR]"};
  } catch (const usage_error& e) {
    err << "gesso catalog: " << e.what << '\n';
    return 2;
  } catch (const std::invalid_argument& e) {
    err << "gesso catalog: " << e.what() << '\n';
    return 2;
  }
}

}  // namespace gesso::worker
