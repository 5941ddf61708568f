#include "server/fakes/fake_providers.hpp"

namespace gesso::fakes {

std::optional<fake_response> create_fault(
    fake_world& world, const std::string& provider, const std::string& prompt,
    std::string (*error_body)(unsigned status, const std::string& message), bool errors_in_200) {
  const markers m = read_markers(prompt, provider);
  const int before = world.seen(provider, prompt);
  if (m.drop && before == 0) {
    return fake_response{.drop = true};
  }
  if (before < m.rate_limited || world.storming()) {
    fake_response r =
        json_response(errors_in_200 ? 200 : 429, error_body(429, "rate limit reached; retry after 1 s"));
    r.headers = {{"Retry-After", "1"}};
    return r;
  }
  if (before < m.rate_limited + m.server_errors) {
    return json_response(errors_in_200 ? 200 : 500,
                         error_body(500, "the server had an error while processing the request"));
  }
  if (m.malformed) {
    return json_response(200, "{\"id\": \"unterminated");
  }
  return std::nullopt;
}

namespace {

fake_response serve_file(fake_world& world, const fake_request& r, const std::string& token) {
  const auto file = world.file(token);
  if (!file) {
    return json_response(404, R"({"error":"no such file"})");
  }
  if (std::chrono::steady_clock::now() >= file->expires_at) {
    return json_response(410, R"({"error":"this URL has expired"})");
  }
  const auto colon = file->needs_header.find(':');
  if (!file->needs_header.empty() &&
      r.header(file->needs_header.substr(0, colon)) != file->needs_header.substr(colon + 1)) {
    return json_response(401, R"({"error":"this file needs the API key"})");
  }
  return fake_response{.status = 200, .content_type = file->content_type, .headers = {}, .body = file->bytes};
}

}  // namespace

fake_response route_fake_request(fake_world& world, const fake_request& r) {
  const std::string_view path = r.path;
  struct prefix_route {
    std::string_view prefix;
    std::optional<fake_response> (*serve)(fake_world&, const fake_request&, std::string_view);
  };
  static constexpr prefix_route routes[] = {{"/openai", fake_openai},   {"/replicate", fake_replicate},
                                            {"/fal", fake_fal},         {"/sdcpp", fake_sdcpp},
                                            {"/gemini", fake_gemini},   {"/ark", fake_ark},
                                            {"/kling", fake_kling},     {"/comfyui", fake_comfyui},
                                            {"/minimax", fake_minimax}, {"/runway", fake_runway}};
  for (const auto& [prefix, serve] : routes) {
    if (path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/')) {
      if (auto answer = serve(world, r, path.substr(prefix.size()))) {
        return std::move(*answer);
      }
      return json_response(404, R"({"error":"not found"})");
    }
  }
  if (path.starts_with("/files/") && (r.method == "GET" || r.method == "HEAD")) {
    return serve_file(world, r, std::string(path.substr(7)));
  }
  if (path == "/faults/storm" && r.method == "POST") {
    try {
      world.start_storm(std::chrono::milliseconds(std::stoi(r.query_value("seconds")) * 1000));
    } catch (const std::exception&) {
      return json_response(400, R"({"error":"POST /faults/storm?seconds=N"})");
    }
    return json_response(200, R"({"storm":true})");
  }
  if (path == "/stats" && r.method == "GET") {
    return json_response(200, world.stats_json());
  }
  if (path == "/healthz") {
    return json_response(200, R"({"status":"ok"})");
  }
  return json_response(
      404,
      R"({"error":"not found: the fake serves /openai, /replicate, /fal, /sdcpp, /gemini, /ark, /kling, /comfyui, /minimax and /runway"})");
}

}  // namespace gesso::fakes
