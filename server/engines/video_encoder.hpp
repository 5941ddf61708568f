#pragma once
// H.264 + AAC encoding with the ffmpeg command line: frames are piped in raw, the soundtrack is
// synthesised by ffmpeg, and the soundtrack is also written alone.

#include "server/engines/picture.hpp"

#include <filesystem>
#include <functional>
#include <string>

namespace gesso::engines {

/// What to encode.
struct video_request {
  int width = 0;
  int height = 0;
  int fps = 12;
  double seconds = 5;
  std::pair<double, double> tones{220, 330};  ///< the soundtrack's two frequencies
  std::filesystem::path video;                ///< .mp4 output: H.264 video + AAC audio
  std::filesystem::path audio;                ///< .m4a output: the AAC soundtrack alone
};

/// Runs `ffmpeg` (from PATH, or GESSO_FFMPEG's value passed as `program`) and feeds it
/// `frame(i)` for every frame. Throws std::runtime_error with ffmpeg's own message on failure.
void encode_video(const video_request& request, const std::function<rgb_image(int frame)>& frame,
                  const std::string& program = "ffmpeg");

}  // namespace gesso::engines
