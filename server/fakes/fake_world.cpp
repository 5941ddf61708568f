#include "server/fakes/fake_world.hpp"

#include "server/engines/picture.hpp"
#include "server/engines/video_encoder.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace gesso::fakes {

markers read_markers(const std::string& prompt, const std::string& provider) {
  markers m;
  static const std::regex marker(R"(\[fake:([a-z]+|[0-9]+)(?:([x=])(\d+))?(?:@([a-z-]+))?\])");
  for (auto it = std::sregex_iterator(prompt.begin(), prompt.end(), marker); it != std::sregex_iterator();
       ++it) {
    if ((*it)[4].matched && (*it)[4] != provider) {
      continue;  // scoped to another provider
    }
    const std::string name = (*it)[1];
    const int n = (*it)[3].matched ? std::stoi((*it)[3]) : 1;
    if (name == "policy") {
      m.policy = true;
    } else if (name == "invalid") {
      m.invalid = true;
    } else if (name == "fail") {
      m.fail = true;
    } else if (name == "429") {
      m.rate_limited = n;
    } else if (name == "500") {
      m.server_errors = n;
    } else if (name == "drop") {
      m.drop = true;
    } else if (name == "lost") {
      m.lost = true;
    } else if (name == "malformed") {
      m.malformed = true;
    } else if (name == "slow") {
      m.slow_seconds = n;
    } else if (name == "steps") {
      m.steps = n;
    } else if (name == "expire") {
      m.expire = true;
    } else if (name == "video" || name == "image") {
      m.wrong_type = true;
    }
  }
  return m;
}

int fake_world::seen(const std::string& provider, const std::string& prompt) {
  std::lock_guard lock(own_);
  return seen_[provider + "\n" + prompt]++;
}

std::string fake_world::publish(fake_file file) {
  std::lock_guard lock(own_);
  const std::string token = "f" + std::to_string(++next_) + "-" + std::to_string(getpid());
  files_[token] = std::move(file);
  return base_url_ + "/files/" + token;
}

std::optional<fake_file> fake_world::file(const std::string& token) {
  std::lock_guard lock(own_);
  const auto it = files_.find(token);
  if (it == files_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::string fake_world::new_id(const std::string& prefix) {
  std::lock_guard lock(own_);
  return prefix + std::to_string(++next_) + "x" + std::to_string(getpid());
}

void fake_world::job_started(const std::string& provider) {
  std::lock_guard lock(own_);
  job_counts& c = jobs_[provider];
  c.most = std::max(c.most, ++c.now);
}

void fake_world::job_ended(const std::string& provider) {
  std::lock_guard lock(own_);
  --jobs_[provider].now;
}

void fake_world::job_canceled(const std::string& provider) {
  std::lock_guard lock(own_);
  --jobs_[provider].now;
  ++jobs_[provider].canceled;
}

void fake_world::start_storm(std::chrono::milliseconds length) {
  std::lock_guard lock(own_);
  storm_until_ = std::chrono::steady_clock::now() + length;
}

bool fake_world::storming() {
  std::lock_guard lock(own_);
  if (std::chrono::steady_clock::now() >= storm_until_) {
    return false;
  }
  ++storm_refusals_;
  return true;
}

std::string fake_world::stats_json() {
  std::lock_guard lock(own_);
  std::string out = "{\"storm_refusals\":" + std::to_string(storm_refusals_);
  for (const auto& [provider, c] : jobs_) {
    out += ",\"" + provider + "\":{\"in_flight\":" + std::to_string(c.now) +
           ",\"max_in_flight\":" + std::to_string(c.most) + ",\"canceled\":" + std::to_string(c.canceled) +
           "}";
  }
  return out + "}";
}

std::string fake_png(int width, int height, const std::string& prompt) {
  engines::rgb_image image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  const auto seed = static_cast<unsigned>(std::hash<std::string>{}(prompt));
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::size_t at =
          (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
      image.pixels[at] = static_cast<std::uint8_t>((x * 255 / std::max(1, width - 1) + seed) & 0xFF);
      image.pixels[at + 1] =
          static_cast<std::uint8_t>((y * 255 / std::max(1, height - 1) + (seed >> 8)) & 0xFF);
      image.pixels[at + 2] = static_cast<std::uint8_t>(seed >> 16);
    }
  }
  return engines::encode_png(image);
}

std::string fake_mp4() {
  static std::once_flag once;
  static std::string bytes;
  std::call_once(once, [] {
    const auto dir = std::filesystem::temp_directory_path();
    const auto video = dir / ("gesso-fake-" + std::to_string(getpid()) + ".mp4");
    const auto audio = dir / ("gesso-fake-" + std::to_string(getpid()) + ".m4a");
    engines::video_request r{.width = 160,
                             .height = 96,
                             .fps = 8,
                             .seconds = 1.0,
                             .tones = {440, 660},
                             .video = video,
                             .audio = audio};
    engines::encode_video(r, [&](int frame) {
      engines::rgb_image image;
      image.width = r.width;
      image.height = r.height;
      image.pixels.assign(static_cast<std::size_t>(r.width * r.height * 3),
                          static_cast<std::uint8_t>(frame * 30));
      return image;
    });
    std::ifstream in(video, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    bytes = data.str();
    std::filesystem::remove(video);
    std::filesystem::remove(audio);
  });
  return bytes;
}

std::pair<int, int> parse_size(const std::string& text) {
  const auto x = text.find('x');
  if (x == std::string::npos) {
    return {0, 0};
  }
  try {
    return {std::stoi(text.substr(0, x)), std::stoi(text.substr(x + 1))};
  } catch (const std::exception&) {
    return {0, 0};
  }
}

std::pair<int, int> size_of_ratio(const std::string& ratio, int long_side) {
  const auto colon = ratio.find(':');
  if (colon == std::string::npos) {
    return {long_side, long_side};
  }
  const double w = std::stod(ratio.substr(0, colon));
  const double h = std::stod(ratio.substr(colon + 1));
  return w >= h ? std::pair{long_side, static_cast<int>(long_side * h / w)}
                : std::pair{static_cast<int>(long_side * w / h), long_side};
}

}  // namespace gesso::fakes
