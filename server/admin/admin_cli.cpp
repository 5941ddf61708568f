#include "server/admin/admin_cli.hpp"

#include "core/ids.hpp"
#include "core/webhook_signature.hpp"
#include "server/runtime/process_setup.hpp"
#include "storage/account_view.hpp"
#include "storage/accounts.hpp"
#include "storage/migrations.hpp"
#include "storage/tasks.hpp"
#include "storage/webhooks.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <iostream>
#include <map>
#include <optional>

namespace gesso::admin {
namespace json = boost::json;

namespace {

constexpr std::string_view usage = R"(usage: gesso COMMAND [--json]

  migrate                                      apply pending schema migrations
  account create --name NAME [--credits N]     create an account and its first API key
  account show --account ID                    balance beside the ledger-derived balance
  account limits --account ID [--rate N] [--burst N] [--max-concurrent N]
                                               show or set the account's limits: requests per
                                               second per key, burst, tasks running at once
                                               (0 = unlimited, "default" = the configuration's)
  key create --account ID                      add an API key (shown once)
  key revoke (--id KEY_ID | --key sk-...)      revoke a key
  webhook rotate --account ID                  a new webhook signing secret (shown once); the
                                               previous one stays valid for 24 hours
  credits grant --account ID --amount N [--note TEXT]
                                               add credits (a ledger grant)
  task show TASK_ID                            every stored field of a task
  ledger check                                 exit 1 if any balance differs from its ledger

Every command reads GESSO_DATABASE_URL; --json prints one JSON object.
)";

struct usage_error {
  std::string message;
};

// Positional words and --name value options, with --json as a flag.
struct arguments {
  std::vector<std::string> words;
  std::map<std::string, std::string, std::less<>> options;
  bool json = false;

  std::string required(std::string_view name) const {
    const auto it = options.find(name);
    if (it == options.end()) {
      throw usage_error{"missing --" + std::string(name)};
    }
    return it->second;
  }

  std::optional<std::string> optional(std::string_view name) const {
    const auto it = options.find(name);
    return it == options.end() ? std::nullopt : std::optional<std::string>(it->second);
  }

  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const std::string text = required(name);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) {
      throw usage_error{"--" + std::string(name) + " must be a whole number from " + std::to_string(lo) +
                        " to " + std::to_string(hi)};
    }
    return value;
  }
};

arguments parse_arguments(std::span<const std::string> args) {
  arguments a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--json") {
      a.json = true;
    } else if (arg.starts_with("--")) {
      if (i + 1 >= args.size()) {
        throw usage_error{arg + " needs a value"};
      }
      a.options[arg.substr(2)] = args[++i];
    } else {
      a.words.push_back(arg);
    }
  }
  return a;
}

json::object key_json(const storage::key_info& k) {
  json::object o{{"key_id", k.id},
                 {"account_id", k.account_id},
                 {"key_prefix", k.display_prefix},
                 {"created_at", k.created_at}};
  o["revoked_at"] = k.revoked_at ? json::value(*k.revoked_at) : json::value(nullptr);
  return o;
}

json::object summary_json(const storage::account_summary& s) {
  json::array keys;
  for (const auto& k : s.keys) {
    keys.push_back(key_json(k));
  }
  return json::object{
      {"account_id", s.id},
      {"name", s.name},
      {"balance", s.balance},
      {"ledger_balance", s.ledger_balance()},
      {"consistent", s.balance == s.ledger_balance()},
      {"granted", s.granted},
      {"charged", s.charged},
      {"refunded", s.refunded},
      {"tasks", json::object{{"queued", s.tasks_by_status[0]},
                             {"running", s.tasks_by_status[1]},
                             {"succeeded", s.tasks_by_status[2]},
                             {"failed", s.tasks_by_status[3]}}},
      {"keys", std::move(keys)},
  };
}

// Prints an object as JSON, or as "key: value" lines for people.
void print(std::ostream& out, const arguments& a, const json::object& o) {
  if (a.json) {
    out << json::serialize(o) << '\n';
    return;
  }
  for (const auto& [key, value] : o) {
    out << key << ": " << (value.is_string() ? std::string(value.as_string()) : json::serialize(value))
        << '\n';
  }
}

int report(std::ostream& err, const problem& p) {
  err << "gesso: " << p.message << '\n';
  return 1;
}

int migrate(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& /*err*/) {
  const auto r = storage::migrate(pool);
  json::array applied;
  for (const auto& name : r.applied) {
    applied.emplace_back(name);
  }
  print(out, a, json::object{{"applied", std::move(applied)}, {"schema_version", r.current_version}});
  return 0;
}

int account_create(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const std::string name = a.required("name");
  if (name.empty() || name.size() > 200) {
    throw usage_error{"--name must be 1 to 200 characters"};
  }
  const std::int64_t credits = a.options.contains("credits") ? a.integer("credits", 0, 1'000'000'000'000) : 0;
  const std::string key = new_api_key();
  const auto s = storage::create_account(pool, name, credits, hash_api_key(key), api_key_display_prefix(key));
  json::object o = summary_json(s);
  o["api_key"] = key;
  o["key_id"] = s.keys.front().id;
  o["webhook_secret"] = s.webhook_secret.value_or("");
  print(out, a, o);
  if (!a.json) {
    err << "Store the API key and the webhook secret now: they are shown only once.\n";
  }
  return 0;
}

int account_show(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const auto s = storage::show_account(pool, a.integer("account", 1, INT64_MAX));
  if (!s) {
    return report(err, s.error());
  }
  print(out, a, summary_json(*s));
  return 0;
}

// A limit option: absent keeps the limit, "default" returns it to the configuration's, N sets it.
storage::limit_change limit_option(const arguments& a, std::string_view name) {
  const auto text = a.optional(name);
  if (!text) {
    return {};
  }
  if (*text == "default") {
    return {.change = true};
  }
  return {.change = true, .value = static_cast<int>(a.integer(name, 0, 10'000'000))};
}

int account_limits(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const auto set =
      storage::set_account_limits(pool, a.integer("account", 1, INT64_MAX), limit_option(a, "rate"),
                                  limit_option(a, "burst"), limit_option(a, "max-concurrent"));
  if (!set) {
    return report(err, set.error());
  }
  const auto shown = [](std::optional<int> v) { return v ? json::value(*v) : json::value("default"); };
  print(out, a,
        json::object{{"account_id", a.integer("account", 1, INT64_MAX)},
                     {"rate_limit_per_second", shown(set->rate_per_second)},
                     {"rate_limit_burst", shown(set->burst)},
                     {"max_concurrent_tasks", shown(set->max_concurrent_tasks)}});
  return 0;
}

int webhook_rotate(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const std::int64_t account = a.integer("account", 1, INT64_MAX);
  const auto secret = storage::rotate_webhook_secret(pool, account, new_webhook_secret());
  if (!secret) {
    return report(err, secret.error());
  }
  print(out, a,
        json::object{{"account_id", account}, {"webhook_secret", *secret}, {"previous_valid_for_hours", 24}});
  return 0;
}

int key_create(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const std::string key = new_api_key();
  const auto k = storage::create_key(pool, a.integer("account", 1, INT64_MAX), hash_api_key(key),
                                     api_key_display_prefix(key));
  if (!k) {
    return report(err, k.error());
  }
  json::object o = key_json(*k);
  o["api_key"] = key;
  print(out, a, o);
  return 0;
}

int key_revoke(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const auto by_key = a.optional("key");
  if (by_key.has_value() == a.options.contains("id")) {
    throw usage_error{"key revoke takes exactly one of --id KEY_ID or --key sk-..."};
  }
  const auto k = by_key ? storage::revoke_key_by_hash(pool, hash_api_key(*by_key))
                        : storage::revoke_key(pool, a.integer("id", 1, INT64_MAX));
  if (!k) {
    return report(err, k.error());
  }
  print(out, a, key_json(*k));
  return 0;
}

int credits_grant(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const std::string note = a.optional("note").value_or("granted by operator");
  const auto s = storage::grant_credits(pool, a.integer("account", 1, INT64_MAX),
                                        a.integer("amount", 1, 1'000'000'000'000), note);
  if (!s) {
    return report(err, s.error());
  }
  print(out, a, summary_json(*s));
  return 0;
}

int task_show(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  if (a.words.size() != 3) {
    throw usage_error{"task show takes one TASK_ID"};
  }
  const auto details = is_task_id(a.words[2]) ? storage::task_details_json(pool, a.words[2]) : std::nullopt;
  if (!details) {
    return report(err, {errc::not_found, "no such task"});
  }
  print(out, a, json::parse(*details).as_object());
  return 0;
}

int ledger_check(const arguments& a, storage::connection_pool& pool, std::ostream& out,
                 std::ostream& /*err*/) {
  const auto mismatches = storage::ledger_mismatches(pool);
  json::array rows;
  for (const auto& s : mismatches) {
    rows.push_back(summary_json(s));
  }
  print(out, a, json::object{{"consistent", mismatches.empty()}, {"mismatches", std::move(rows)}});
  return mismatches.empty() ? 0 : 1;
}

// The commands, by their first two words.
using command_fn = int (*)(const arguments&, storage::connection_pool&, std::ostream&, std::ostream&);
const std::pair<std::string_view, command_fn> commands[] = {
    {"migrate", migrate},
    {"account create", account_create},
    {"account show", account_show},
    {"account limits", account_limits},
    {"webhook rotate", webhook_rotate},
    {"key create", key_create},
    {"key revoke", key_revoke},
    {"credits grant", credits_grant},
    {"task show", task_show},
    {"ledger check", ledger_check},
};

int run(const arguments& a, storage::connection_pool& pool, std::ostream& out, std::ostream& err) {
  const std::string command =
      a.words.empty() ? "" : a.words[0] + (a.words.size() > 1 ? " " + a.words[1] : "");
  for (const auto& [name, fn] : commands) {
    if (command == name) {
      return fn(a, pool, out, err);
    }
  }
  throw usage_error{command.empty() ? "no command given" : "unknown command \"" + command + "\""};
}

}  // namespace

int run_admin_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "help" || args[0] == "--help" || args[0] == "-h")) {
    out << usage;
    return 0;
  }
  try {
    const arguments a = parse_arguments(args);
    const config cfg = runtime::load_config_or_exit("gesso");
    storage::connection_pool pool(runtime::pool_settings_or_exit("gesso", cfg));
    return run(a, pool, out, err);
  } catch (const usage_error& e) {
    err << "gesso: " << e.message << "\n\n" << usage;
    return 2;
  } catch (const std::exception& e) {
    err << "gesso: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace gesso::admin
