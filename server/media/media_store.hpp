#pragma once
// The media store: task outputs as files under one directory (shared by every node), written
// atomically, addressed by object keys ("2026/11/21/task_….png"), deleted after a retention period.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace gesso::media {

class media_store {
 public:
  /// Uses (and creates) `root`.
  explicit media_store(std::filesystem::path root);

  /// The key for a task's output with this extension ("png", "mp4", "m4a"), under today's date.
  static std::string object_key(std::string_view task_id, std::string_view extension);

  /// Writes `bytes` as `object` atomically (a temporary file renamed into place).
  void put(std::string_view object, std::string_view bytes);

  /// Moves `file` (which must be on the store's filesystem, e.g. in scratch()) into place as `object`.
  void adopt(std::string_view object, const std::filesystem::path& file);

  /// The file of `object`; `object` must satisfy is_media_object_key.
  std::filesystem::path path_of(std::string_view object) const;

  /// A private directory for work in progress, on the same filesystem as the store.
  std::filesystem::path scratch() const;

  /// Deletes objects whose files are older than `age`; returns how many.
  std::size_t delete_older_than(std::chrono::seconds age);

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace gesso::media
