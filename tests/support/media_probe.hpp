#pragma once
// Checks that files are real media: PNG headers read directly, audio and video through ffprobe.

#include <boost/json/object.hpp>

#include <string>

namespace gesso::testing {

/// Width and height from a PNG's signature and IHDR chunk; {0, 0} when it is not a PNG.
std::pair<int, int> png_size(const std::string& bytes);

/// `ffprobe -show_streams -show_format` of a file, as JSON.
boost::json::object ffprobe(const std::string& path);

}  // namespace gesso::testing
