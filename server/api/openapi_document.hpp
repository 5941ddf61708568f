#pragma once
// The API's OpenAPI 3.1 document (docs/openapi.yaml), compiled in as compact JSON by
// server/api/embed_openapi.py and served at GET /api/v1/openapi.json.

#include <string_view>

namespace gesso::api {

/// The document as JSON (UTF-8).
std::string_view openapi_document();

}  // namespace gesso::api
