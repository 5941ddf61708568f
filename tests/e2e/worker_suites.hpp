#pragma once
// What the worker suites share (task_lifecycle, worker_faults): a catalog with the five models of the
// API plus models that fail, retry or take their time, and small helpers.

#include "tests/support/gesso_env.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace gesso::testing::worker_suites {

// The five models of the spec plus models that fail, retry, or take their time.
inline const std::string test_catalog = R"({"models":{
  "vendor1-flash": {"task_type":"video","price":20,"duration_seconds":5},
  "vendor1-pro": {"task_type":"video","price":60,"duration_seconds":8},
  "vendor2-2": {"task_type":"video","price":40,"duration_seconds":5},
  "vendor3-image-2": {"task_type":"image","price":8},
  "vendor4-2": {"task_type":"image","price":6},
  "always-fails": {"task_type":"image","price":7,"engine_settings":{"failure_rate":1}},
  "always-busy": {"task_type":"image","price":9,"max_attempts":2,"engine_settings":{"retry_rate":1}},
  "slow": {"task_type":"image","price":5,"engine_settings":{"latency_ms":1500}},
  "heavy": {"task_type":"video","price":5,"duration_seconds":6,"engine_settings":{"long_side":768}}
}})";

inline env_map with_catalog(env_map env = {}) {
  static const std::string path = temporary_file(test_catalog, ".json");
  env["GESSO_CATALOG"] = path;
  return env;
}

inline std::string create_task(const http_client& client, const std::string& key, const std::string& model,
                               const std::string& prompt = "a lighthouse at dusk") {
  const auto reply = client.create(
      key, boost::json::serialize(boost::json::object{{"model_id", model}, {"prompt", prompt}}));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  return std::string(reply.json().at("data").at("task_id").as_string());
}

inline bool never_goes_back(const std::vector<int>& statuses) {
  return std::is_sorted(statuses.begin(), statuses.end());
}

inline double seconds_of(const boost::json::value& v) {
  return std::stod(std::string(v.as_string()));
}

}  // namespace gesso::testing::worker_suites
