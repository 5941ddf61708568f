#include "storage/task_listing.hpp"

#include "storage/pool_internal.hpp"
#include "storage/task_rows.hpp"

namespace gesso::storage {
namespace {

// The statement for the filters a listing has: only the predicates it needs, so that the planner sees
// each one (values are always parameters). Column 17 is the cursor's creation time in microseconds.
std::string listing_sql(const task_filter& f) {
  std::string sql = "SELECT t.account_id, " + std::string(detail::task_columns) + R"sql(,
       ((extract(epoch FROM t.created_at) * 1000000)::numeric(20, 0))::bigint
FROM tasks t
WHERE t.account_id = $1)sql";
  if (f.status) {
    sql += " AND t.status = $2";
  }
  if (f.model_id) {
    sql += " AND t.model_id = $3";
  }
  if (f.created_after) {
    sql += " AND t.created_at >= to_timestamp($4::bigint)";
  }
  if (f.created_before) {
    sql += " AND t.created_at < to_timestamp($5::bigint)";
  }
  if (f.after) {
    sql +=
        " AND (t.created_at, t.id) < (timestamptz 'epoch' + $6::bigint * interval '1 microsecond', $7::text)";
  }
  // Unused parameters still need a use that fixes their type.
  sql +=
      " AND $2::smallint IS NOT DISTINCT FROM $2 AND $3::text IS NOT DISTINCT FROM $3"
      " AND $4::bigint IS NOT DISTINCT FROM $4 AND $5::bigint IS NOT DISTINCT FROM $5"
      " AND $6::bigint IS NOT DISTINCT FROM $6 AND $7::text IS NOT DISTINCT FROM $7";
  return sql + "\nORDER BY t.created_at DESC, t.id DESC\nLIMIT $8";
}

}  // namespace

outcome<task_page> list_tasks(connection_pool& pool, std::string_view key_hash, const task_filter& filter) {
  return detail::with_connection(pool, [&](pqxx::connection& c) -> outcome<task_page> {
    pqxx::nontransaction tx(c);
    const auto account = detail::account_of_key(tx, key_hash);
    if (!account) {
      return account.error();
    }
    const std::string status = filter.status ? std::to_string(static_cast<int>(*filter.status)) : "";
    const std::string after = filter.created_after ? std::to_string(*filter.created_after) : "";
    const std::string before = filter.created_before ? std::to_string(*filter.created_before) : "";
    const std::string cursor_us = filter.after ? std::to_string(filter.after->created_us) : "";
    const auto text = [](bool present, const std::string& value) {
      return present ? value.c_str() : nullptr;
    };
    const pqxx::result rows = tx.exec_params(
        listing_sql(filter), *account, text(filter.status.has_value(), status),
        filter.model_id ? filter.model_id->c_str() : nullptr, text(filter.created_after.has_value(), after),
        text(filter.created_before.has_value(), before), text(filter.after.has_value(), cursor_us),
        filter.after ? filter.after->id.c_str() : nullptr, filter.limit + 1);
    task_page page;
    for (const auto& row : rows) {
      if (static_cast<int>(page.tasks.size()) == filter.limit) {
        const task_record& last = page.tasks.back();
        page.next = task_cursor{rows[filter.limit - 1][17].as<std::int64_t>(), last.id};
        break;
      }
      page.tasks.push_back(detail::read_task(row));
    }
    return page;
  });
}

}  // namespace gesso::storage
