#include "server/load/load_options.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

namespace gesso::load {

const char* const usage = R"(usage: gesso-load [options]
  --target URL            the API's base URL (http://HOST:PORT, default http://127.0.0.1:8080)
  --mode open|closed      open: fixed arrival rate (default); closed: fixed number of clients
  --scenario S            create | query | journey (create, poll until final, download; default)
  --rate N                open: arrivals a second (default 50)
  --connections N         open: most connections; closed: clients (default 256)
  --duration S            seconds during which arrivals start (default 10)
  --threads N             I/O threads (default 1)
  --models M[:W],...      models and their weights (default vendor4-2)
  --prompt TEXT           the prompt of every create (default gesso-load)
  --poll-interval MS      journey: milliseconds between polls of a task (default 500)
  --download yes|no       journey: fetch each result once final (default yes)
  --settle S              after the run: seconds tasks may take to become final (default 120;
                          0: do not wait, and do not require every task to be final)
  --timeout S             seconds a request may take (default 30)
  --keys FILE             API keys, one a line
  --accounts N            create N accounts in the database instead (needs --database-url)
  --database-url URL      the database, for --accounts and the ledger check
  --query-tasks N         query: tasks created before the run (default 64)
  --json FILE             write the whole report as JSON
  --timeline FILE         write one tab-separated line a second (for plots)
  --quiet                 no progress lines
)";

namespace {

checked<double> number(const std::string& name, const std::string& value, double low, double high) {
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc{} || end != value.data() + value.size() || !std::isfinite(v)) {
    return refusal{name + " wants a number, not \"" + value + "\""};
  }
  if (v < low || v > high) {
    return refusal{name + " must be between " + std::to_string(low) + " and " + std::to_string(high) +
                   ", not " + value};
  }
  return v;
}

checked<int> whole(const std::string& name, const std::string& value, int low, int high) {
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc{} || end != value.data() + value.size()) {
    return refusal{name + " wants a whole number, not \"" + value + "\""};
  }
  if (v < low || v > high) {
    return refusal{name + " must be between " + std::to_string(low) + " and " + std::to_string(high) +
                   ", not " + value};
  }
  return v;
}

// "http://host:port" (a trailing slash allowed); https is not spoken by the generator.
checked<std::pair<std::string, std::string>> target(const std::string& url) {
  constexpr std::string_view scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    return refusal{"--target must start with http:// (gesso-load speaks plain HTTP), not \"" + url + "\""};
  }
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') {
    rest.pop_back();
  }
  const auto colon = rest.rfind(':');
  if (rest.empty() || rest.find('/') != std::string::npos) {
    return refusal{"--target is a base URL like http://127.0.0.1:8080, without a path, not \"" + url + "\""};
  }
  if (colon == std::string::npos) {
    return std::pair<std::string, std::string>{rest, "80"};
  }
  auto port = whole("--target's port", rest.substr(colon + 1), 1, 65535);
  if (!port) {
    return port.error();
  }
  return std::pair<std::string, std::string>{rest.substr(0, colon), rest.substr(colon + 1)};
}

checked<std::vector<model_share>> models(const std::string& value) {
  std::vector<model_share> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const auto comma = std::min(value.find(',', start), value.size());
    const std::string item = value.substr(start, comma - start);
    const auto colon = item.find(':');
    model_share share{item.substr(0, colon), 1};
    if (share.model_id.empty()) {
      return refusal{"--models wants model ids with optional weights, like vendor4-2:3,vendor1-flash:1"};
    }
    if (colon != std::string::npos) {
      auto weight = number("--models weight of " + share.model_id, item.substr(colon + 1), 0.001, 1e6);
      if (!weight) {
        return weight.error();
      }
      share.weight = *weight;
    }
    out.push_back(share);
    start = comma + 1;
  }
  return out;
}

using setter = std::function<checked<void>(const std::string&)>;

setter set_int(int& field, const char* name, int low, int high) {
  return [&field, name, low, high](const std::string& v) -> checked<void> {
    auto n = whole(name, v, low, high);
    if (!n) {
      return n.error();
    }
    field = *n;
    return {};
  };
}

setter set_number(double& field, const char* name, double low, double high) {
  return [&field, name, low, high](const std::string& v) -> checked<void> {
    auto n = number(name, v, low, high);
    if (!n) {
      return n.error();
    }
    field = *n;
    return {};
  };
}

setter set_text(std::string& field) {
  return [&field](const std::string& v) -> checked<void> {
    field = v;
    return {};
  };
}

// One of a few words, each naming a value of `field`.
template <class Value>
setter set_choice(Value& field, const char* name, std::vector<std::pair<std::string, Value>> choices) {
  return [&field, name, choices = std::move(choices)](const std::string& v) -> checked<void> {
    std::string words;
    for (const auto& [word, value] : choices) {
      if (v == word) {
        field = value;
        return {};
      }
      words += (words.empty() ? "" : choices.back().first == word ? " or " : ", ") + word;
    }
    return refusal{std::string(name) + " is " + words + ", not \"" + v + "\""};
  };
}

template <class Parsed, class Apply>
setter set_parsed(checked<Parsed> (*parse)(const std::string&), Apply apply) {
  return [parse, apply](const std::string& v) -> checked<void> {
    auto parsed = parse(v);
    if (!parsed) {
      return parsed.error();
    }
    apply(std::move(*parsed));
    return {};
  };
}

// Every option that takes a value, and where it goes: a table.
std::map<std::string, setter> option_setters(options& o) {
  return {
      {"--target",
       set_parsed(target, [&o](std::pair<std::string, std::string> t) { std::tie(o.host, o.port) = t; })},
      {"--mode", set_choice(o.mode, "--mode", {{"open", loop_mode::open}, {"closed", loop_mode::closed}})},
      {"--scenario",
       set_choice(
           o.kind, "--scenario",
           {{"create", scenario::create}, {"query", scenario::query}, {"journey", scenario::journey}})},
      {"--download", set_choice(o.download, "--download", {{"yes", true}, {"no", false}})},
      {"--models", set_parsed(models, [&o](std::vector<model_share> m) { o.models = std::move(m); })},
      {"--rate", set_number(o.rate, "--rate", 0.01, 1e6)},
      {"--connections", set_int(o.connections, "--connections", 1, 100000)},
      {"--duration", set_number(o.duration_s, "--duration", 0.1, 86400)},
      {"--threads", set_int(o.threads, "--threads", 1, 64)},
      {"--prompt", set_text(o.prompt)},
      {"--poll-interval", set_int(o.poll_interval_ms, "--poll-interval", 1, 600000)},
      {"--settle", set_number(o.settle_s, "--settle", 0, 86400)},
      {"--timeout", set_number(o.timeout_s, "--timeout", 0.01, 3600)},
      {"--keys", set_text(o.keys_file)},
      {"--accounts", set_int(o.accounts, "--accounts", 1, 100000)},
      {"--database-url", set_text(o.database_url)},
      {"--query-tasks", set_int(o.query_tasks, "--query-tasks", 1, 1000000)},
      {"--json", set_text(o.json_path)},
      {"--timeline", set_text(o.timeline_path)},
  };
}

}  // namespace

checked<options> parse_options(const std::vector<std::string>& args) {
  options o;
  const std::map<std::string, setter> setters = option_setters(o);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (name == "--quiet") {
      o.quiet = true;
      continue;
    }
    const auto found = setters.find(name);
    if (found == setters.end()) {
      return refusal{"unknown option \"" + name + "\""};
    }
    if (i + 1 == args.size()) {
      return refusal{name + " wants a value"};
    }
    if (auto set = found->second(args[++i]); !set) {
      return set.error();
    }
  }
  if (o.keys_file.empty() == (o.accounts == 0)) {
    return refusal{"give either --keys FILE or --accounts N (with --database-url)"};
  }
  if (o.accounts > 0 && o.database_url.empty()) {
    return refusal{"--accounts needs --database-url: accounts are made in the database"};
  }
  return o;
}

}  // namespace gesso::load
