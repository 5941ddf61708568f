#include "server/engines/image_decoder.hpp"

#include "server/engines/row_shrinker.hpp"

#include <png.h>
#include <webp/decode.h>

#include <jpeglib.h>
#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace gesso::engines {
namespace {

// The image's own limits (no budget taken).
checked<void> check_bounds(std::uint64_t width, std::uint64_t height, const image_limits& limits) {
  if (width == 0 || height == 0) {
    return refusal{"the image has no pixels"};
  }
  if (width > static_cast<std::uint64_t>(limits.max_side) ||
      height > static_cast<std::uint64_t>(limits.max_side) || width * height > limits.max_pixels) {
    return refusal{"the image is " + std::to_string(width) + "x" + std::to_string(height) +
                   " pixels; at most " + std::to_string(limits.max_side) + " per side and " +
                   std::to_string(limits.max_pixels) + " in all are accepted"};
  }
  return {};
}

// The image's limits, then its pixels taken from the task's budget.
checked<void> check_size(std::uint64_t width, std::uint64_t height, const image_limits& limits) {
  if (auto ok = check_bounds(width, height, limits); !ok) {
    return ok;
  }
  if (limits.pixels_left != nullptr) {
    if (width * height > *limits.pixels_left) {
      return refusal{"the image is " + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels, more than the " + std::to_string(*limits.pixels_left) +
                     " left of the task's budget for input pixels"};
    }
    *limits.pixels_left -= width * height;
  }
  return {};
}

// --- PNG: libpng's row interface; errors jump back with setjmp, so the functions that call libpng
// keep only trivially destructible locals and reach their C++ objects through pointers.

struct png_source {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at;
};

void read_png_bytes(png_structp png, png_bytep into, png_size_t n) {
  auto* source = static_cast<png_source*>(png_get_io_ptr(png));
  if (n > source->size - source->at) {
    png_error(png, "the file ends early");
  }
  std::memcpy(into, source->data + source->at, n);
  source->at += n;
}

struct png_failure {
  char message[200];
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* failure = static_cast<png_failure*>(png_get_error_ptr(png));
  std::snprintf(failure->message, sizeof failure->message, "%s", message);
  png_longjmp(png, 1);
}

// What the caller provides to the PNG reader: limits in, the result out.
struct png_job {
  const image_limits* limits;
  std::optional<row_shrinker>* shrinker;
  std::vector<std::uint8_t>* rows;  // one row, or the whole image when interlaced
  checked<void>* size_ok;
};

bool decode_png_raw(png_source* source, png_job* job, png_failure* failure) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, failure, on_png_error,
                                           [](png_structp, png_const_charp) {});
  if (png == nullptr) {
    std::snprintf(failure->message, sizeof failure->message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png)) != 0) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  if (info == nullptr) {
    png_error(png, "out of memory");
  }
  png_set_read_fn(png, source, read_png_bytes);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  *job->size_ok = check_size(width, height, *job->limits);
  if (!*job->size_ok) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_gray_to_rgb(png);
  png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const std::size_t row_bytes = static_cast<std::size_t>(width) * 4;
  if (png_get_rowbytes(png, info) != row_bytes) {
    png_error(png, "unexpected row layout");
  }
  const auto [w, h] = decoded_size(static_cast<int>(width), static_cast<int>(height), *job->limits);
  job->shrinker->emplace(static_cast<int>(width), static_cast<int>(height), w, h);
  if (passes == 1) {
    job->rows->resize(row_bytes);
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(png, job->rows->data(), nullptr);
      (*job->shrinker)->add_row(job->rows->data(), 4);
    }
  } else {  // Adam7 refines every row over seven passes: the whole image is needed
    job->rows->resize(row_bytes * height);
    for (int pass = 0; pass < passes; ++pass) {
      for (png_uint_32 y = 0; y < height; ++y) {
        png_read_row(png, job->rows->data() + row_bytes * y, nullptr);
      }
    }
    for (png_uint_32 y = 0; y < height; ++y) {
      (*job->shrinker)->add_row(job->rows->data() + row_bytes * y, 4);
    }
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

checked<rgb_image> decode_png(std::string_view bytes, const image_limits& limits) {
  // The dimensions come from IHDR, which must be the first chunk; checked before libpng runs.
  if (bytes.size() < 24 || bytes.substr(12, 4) != "IHDR") {
    return refusal{"the PNG is damaged: no IHDR header"};
  }
  auto be32 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    }
    return v;
  };
  if (auto ok = check_bounds(be32(16), be32(20), limits); !ok) {
    return ok.error();
  }
  png_source source{reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), 0};
  std::optional<row_shrinker> shrinker;
  std::vector<std::uint8_t> rows;
  checked<void> size_ok;
  png_job job{&limits, &shrinker, &rows, &size_ok};
  png_failure failure{};
  if (!decode_png_raw(&source, &job, &failure)) {
    if (!size_ok) {
      return size_ok.error();
    }
    return refusal{std::string("the PNG is damaged: ") + failure.message};
  }
  return shrinker->take();
}

// --- JPEG: libjpeg scales by 1/2, 1/4 or 1/8 inside its DCT; the rest is averaged row by row.

struct jpeg_failure {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_jpeg_error(j_common_ptr info) {
  auto* failure = reinterpret_cast<jpeg_failure*>(info->err);
  (*info->err->format_message)(info, failure->message);
  std::longjmp(failure->jump, 1);
}

struct jpeg_job {
  const image_limits* limits;
  std::optional<row_shrinker>* shrinker;
  std::vector<std::uint8_t>* row;
  checked<void>* size_ok;
};

// Only trivially destructible locals live between setjmp and longjmp.
bool decode_jpeg_raw(std::string_view bytes, jpeg_job* job, char* why, std::size_t why_size) {
  jpeg_decompress_struct info{};
  jpeg_failure failure{};
  info.err = jpeg_std_error(&failure.manager);
  failure.manager.error_exit = on_jpeg_error;
  failure.manager.output_message = [](j_common_ptr) {};  // warnings stay out of the worker's log
  if (setjmp(failure.jump) != 0) {
    std::snprintf(why, why_size, "the JPEG is damaged: %s", failure.message);
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  *job->size_ok = check_size(info.image_width, info.image_height, *job->limits);
  if (!*job->size_ok) {
    jpeg_destroy_decompress(&info);
    return false;
  }
  const auto [w, h] =
      decoded_size(static_cast<int>(info.image_width), static_cast<int>(info.image_height), *job->limits);
  unsigned denominator = 8;  // the largest reduction that still leaves at least w x h
  while (denominator > 1 &&
         ((info.image_width + denominator - 1) / denominator < static_cast<unsigned>(w) ||
          (info.image_height + denominator - 1) / denominator < static_cast<unsigned>(h))) {
    denominator /= 2;
  }
  info.scale_num = 1;
  info.scale_denom = denominator;
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  const int out_width = static_cast<int>(info.output_width);
  const int out_height = static_cast<int>(info.output_height);
  job->shrinker->emplace(out_width, out_height, std::min(w, out_width), std::min(h, out_height));
  job->row->resize(static_cast<std::size_t>(out_width) * 3);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = job->row->data();
    jpeg_read_scanlines(&info, &row, 1);
    (*job->shrinker)->add_row(job->row->data(), 3);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

checked<rgb_image> decode_jpeg(std::string_view bytes, const image_limits& limits) {
  std::optional<row_shrinker> shrinker;
  std::vector<std::uint8_t> row;
  checked<void> size_ok;
  jpeg_job job{&limits, &shrinker, &row, &size_ok};
  char why[JMSG_LENGTH_MAX + 64] = {};
  if (!decode_jpeg_raw(bytes, &job, why, sizeof why)) {
    if (!size_ok) {
      return size_ok.error();
    }
    return refusal{why};
  }
  return shrinker->take();
}

// --- WebP: libwebp scales while decoding.

checked<rgb_image> decode_webp(std::string_view bytes, const image_limits& limits) {
  int width = 0;
  int height = 0;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (WebPGetInfo(data, bytes.size(), &width, &height) == 0) {
    return refusal{"the WebP is damaged"};
  }
  if (auto ok = check_size(static_cast<std::uint64_t>(width), static_cast<std::uint64_t>(height), limits);
      !ok) {
    return ok.error();
  }
  const auto [w, h] = decoded_size(width, height, limits);
  rgb_image img{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3)};
  WebPDecoderConfig config;
  if (WebPInitDecoderConfig(&config) == 0) {
    return refusal{"the WebP decoder could not start"};
  }
  if (w != width || h != height) {
    config.options.use_scaling = 1;
    config.options.scaled_width = w;
    config.options.scaled_height = h;
  }
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = img.pixels.data();
  config.output.u.RGBA.stride = w * 3;
  config.output.u.RGBA.size = img.pixels.size();
  const VP8StatusCode status = WebPDecode(data, bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) {
    return refusal{"the WebP is damaged"};
  }
  return img;
}

}  // namespace

std::pair<int, int> decoded_size(int width, int height, const image_limits& limits) {
  if (limits.cover_width <= 0 || limits.cover_height <= 0 || width <= 0 || height <= 0) {
    return {width, height};
  }
  const double factor = std::max(static_cast<double>(limits.cover_width) / width,
                                 static_cast<double>(limits.cover_height) / height);
  if (factor >= 1) {
    return {width, height};
  }
  return {std::clamp(static_cast<int>(std::ceil(width * factor)), 1, width),
          std::clamp(static_cast<int>(std::ceil(height * factor)), 1, height)};
}

std::optional<image_format> sniff_image(std::string_view bytes) {
  if (bytes.starts_with("\x89PNG\r\n\x1a\n")) {
    return image_format::png;
  }
  if (bytes.size() >= 3 && bytes.starts_with("\xFF\xD8\xFF")) {
    return image_format::jpeg;
  }
  if (bytes.size() >= 12 && bytes.starts_with("RIFF") && bytes.substr(8, 4) == "WEBP") {
    return image_format::webp;
  }
  return std::nullopt;
}

namespace {

std::uint32_t big_endian(std::string_view b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  }
  return v;
}

// The first start-of-frame segment's size: markers are walked by their lengths, never decoded.
std::optional<std::pair<int, int>> jpeg_dimensions(std::string_view b) {
  std::size_t at = 2;
  while (at + 9 < b.size()) {
    if (static_cast<unsigned char>(b[at]) != 0xFF) {
      return std::nullopt;
    }
    const unsigned marker = static_cast<unsigned char>(b[at + 1]);
    if (marker == 0xFF) {
      ++at;  // fill byte
      continue;
    }
    const bool start_of_frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (start_of_frame) {
      return std::pair{static_cast<int>(big_endian(b, at + 7, 2)),
                       static_cast<int>(big_endian(b, at + 5, 2))};
    }
    at += 2 + big_endian(b, at + 2, 2);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<int, int>> image_dimensions(std::string_view bytes) {
  const auto format = sniff_image(bytes);
  std::pair<int, int> size{0, 0};
  if (format == image_format::png && bytes.size() >= 24 && bytes.substr(12, 4) == "IHDR") {
    size = {static_cast<int>(big_endian(bytes, 16, 4)), static_cast<int>(big_endian(bytes, 20, 4))};
  } else if (format == image_format::jpeg) {
    size = jpeg_dimensions(bytes).value_or(size);
  } else if (format == image_format::webp) {
    int w = 0;
    int h = 0;
    if (WebPGetInfo(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &w, &h) != 0) {
      size = {w, h};
    }
  }
  if (size.first <= 0 || size.second <= 0) {
    return std::nullopt;
  }
  return size;
}

checked<rgb_image> decode_image(std::string_view bytes, const image_limits& limits) {
  const auto format = sniff_image(bytes);
  if (!format) {
    return refusal{"the content is not a PNG, JPEG or WebP image"};
  }
  switch (*format) {
    case image_format::png:
      return decode_png(bytes, limits);
    case image_format::jpeg:
      return decode_jpeg(bytes, limits);
    case image_format::webp:
      return decode_webp(bytes, limits);
  }
  return refusal{"unsupported image format"};
}

}  // namespace gesso::engines
