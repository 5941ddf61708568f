#pragma once
// The provider adapters Gesso ships, and how a catalog route becomes one (docs/engines.md#providers).

#include "server/engines/providers/provider.hpp"
#include "server/engines/providers/provider_http.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string_view>

namespace gesso::engines {

/// What an engine name needs: its public URL, whether a key is required, the settings of its own (beyond
/// the ones every HTTP engine reads), and how to make its adapter.
struct adapter_kind {
  std::string_view engine;
  std::string_view default_base_url;  ///< "" when there is none (self-hosted: base_url is required)
  bool needs_key;
  std::string_view default_model;  ///< used when the route gives no `model`
  bool needs_model;                ///< a route must name the provider's model
  std::chrono::milliseconds default_timeout;
  std::span<const std::string_view> own_settings;
  std::string_view auth_header;  ///< the header the key goes in ("": the adapter signs each request)
  std::string_view auth_prefix;  ///< before the key ("Bearer ", "Key ")
  /// Builds the adapter; throws std::invalid_argument with "settings.<field>: <why>" for a bad setting,
  /// an aspect ratio it cannot honour, or more input images than it can send.
  std::function<std::unique_ptr<provider_adapter>(const route_settings&, const provider_client&,
                                                  const model_spec&)>
      make;
  /// When set, the route's auth headers come from its settings (http-task) instead of auth_header.
  header_list (*auth_headers)(const route_settings&) = nullptr;
};

/// Every adapter engine; nothing for a name that is not one.
const adapter_kind* find_adapter_kind(std::string_view engine);
std::string adapter_engine_names();

// One per provider (server/engines/providers/<name>.cpp).
std::unique_ptr<provider_adapter> make_openai_images(const route_settings&, const provider_client&,
                                                     const model_spec&);
std::unique_ptr<provider_adapter> make_replicate(const route_settings&, const provider_client&,
                                                 const model_spec&);
std::unique_ptr<provider_adapter> make_fal(const route_settings&, const provider_client&, const model_spec&);
std::unique_ptr<provider_adapter> make_sdcpp(const route_settings&, const provider_client&,
                                             const model_spec&);
std::unique_ptr<provider_adapter> make_openai_videos(const route_settings&, const provider_client&,
                                                     const model_spec&);
std::unique_ptr<provider_adapter> make_gemini_veo(const route_settings&, const provider_client&,
                                                  const model_spec&);
std::unique_ptr<provider_adapter> make_ark(const route_settings&, const provider_client&, const model_spec&);
std::unique_ptr<provider_adapter> make_kling(const route_settings&, const provider_client&,
                                             const model_spec&);
std::unique_ptr<provider_adapter> make_comfyui(const route_settings&, const provider_client&,
                                               const model_spec&);
std::unique_ptr<provider_adapter> make_http_task(const route_settings&, const provider_client&,
                                                 const model_spec&);

/// Kling's bearer token: an HS256 JWT {"iss": access key, "exp": now + 1800, "nbf": now - 5}.
std::string kling_jwt(std::string_view access_key, std::string_view secret_key, std::int64_t now);
/// Base64 with the URL alphabet and no padding (RFC 4648 §5), as JWTs use it.
std::string base64url(std::string_view bytes);

/// The `extra` setting `name` as a string / whole number, with its default; throws naming the field.
std::string text_setting(const route_settings& s, std::string_view name, std::string fallback);
std::int64_t number_setting(const route_settings& s, std::string_view name, std::int64_t lo, std::int64_t hi,
                            std::int64_t fallback);
bool flag_setting(const route_settings& s, std::string_view name, bool fallback);

/// Refuses a model that accepts more input images than the route sends (`most`, as `how`), with the
/// fix in the message.
void check_input_count(const model_spec& model, std::size_t most, std::string_view sender,
                       std::string_view how);

/// The `extra` setting `name` as a JSON object ({} when absent); throws naming the field otherwise.
boost::json::object object_setting(const route_settings& s, std::string_view name, std::string_view what);

/// The longer side's pixels for a ratio ("16:9") at `long_side`, each side a multiple of `multiple`.
std::pair<int, int> size_for_ratio(std::string_view ratio, int long_side, int multiple);

}  // namespace gesso::engines
