#pragma once
// The providers gesso-fake-providers speaks, each under its own prefix of one port, each following
// ../shared/PROVIDERS.md (paths, fields, status sequences, error shapes, auth schemes) — never shaped
// to Gesso's adapters. docs/fake-providers.md lists what each covers.

#include "server/fakes/fake_http.hpp"
#include "server/fakes/fake_world.hpp"

#include <map>
#include <optional>
#include <string_view>

namespace gesso::fakes {

/// Each answers requests whose path (without its prefix) it knows, or nothing.
std::optional<fake_response> fake_openai(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_replicate(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_fal(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_sdcpp(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_openai_videos(fake_world& world, const fake_request& r,
                                                std::string_view path);
std::optional<fake_response> fake_gemini(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_ark(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_kling(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_comfyui(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_minimax(fake_world& world, const fake_request& r, std::string_view path);
std::optional<fake_response> fake_runway(fake_world& world, const fake_request& r, std::string_view path);

/// The parts of a multipart/form-data body: name → values (files and fields alike).
std::multimap<std::string, std::string> multipart_parts(const fake_request& r);

/// Every request: the provider its prefix names, /files/<token> for outputs, 404 otherwise.
fake_response route_fake_request(fake_world& world, const fake_request& r);

/// The common faults of a create, from the prompt's markers, in a provider's error shape: 429 and 500
/// storms, dropped connections, malformed answers. Nothing when the create should go ahead.
/// `errors_in_200`: the provider answers its errors as HTTP 200 envelopes (MiniMax).
std::optional<fake_response> create_fault(
    fake_world& world, const std::string& provider, const std::string& prompt,
    std::string (*error_body)(unsigned status, const std::string& message), bool errors_in_200 = false);

}  // namespace gesso::fakes
