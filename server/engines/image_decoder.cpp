#include "server/engines/image_decoder.hpp"

#include <png.h>
#include <webp/decode.h>

#include <jpeglib.h>
#include <csetjmp>
#include <cstdio>

namespace gesso::engines {
namespace {

checked<void> check_size(std::uint64_t width, std::uint64_t height, const image_limits& limits) {
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

checked<rgb_image> decode_png(std::string_view bytes, const image_limits& limits) {
  // The dimensions come from IHDR, which must be the first chunk, before libpng reads anything.
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
  if (auto ok = check_size(be32(16), be32(20), limits); !ok) {
    return ok.error();
  }
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()) == 0) {
    return refusal{std::string("the PNG is damaged: ") + png.message};
  }
  if (auto ok = check_size(png.width, png.height, limits); !ok) {
    png_image_free(&png);
    return ok.error();
  }
  png.format = PNG_FORMAT_RGB;
  rgb_image img{static_cast<int>(png.width), static_cast<int>(png.height), {}};
  img.pixels.resize(PNG_IMAGE_SIZE(png));
  if (png_image_finish_read(&png, nullptr, img.pixels.data(), 0, nullptr) == 0) {
    return refusal{std::string("the PNG is damaged: ") + png.message};
  }
  return img;
}

// libjpeg reports errors through a callback that must not return; it jumps back here.
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

// Only trivially destructible locals live between setjmp and longjmp.
bool decode_jpeg_raw(std::string_view bytes, const image_limits& limits, rgb_image* out, char* why,
                     std::size_t why_size) {
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
  const std::uint64_t width = info.image_width;
  const std::uint64_t height = info.image_height;
  if (width == 0 || height == 0 || width > static_cast<std::uint64_t>(limits.max_side) ||
      height > static_cast<std::uint64_t>(limits.max_side) || width * height > limits.max_pixels) {
    std::snprintf(why, why_size,
                  "the image is %llux%llu pixels; at most %d per side and %llu in all are accepted",
                  static_cast<unsigned long long>(width), static_cast<unsigned long long>(height),
                  limits.max_side, static_cast<unsigned long long>(limits.max_pixels));
    jpeg_destroy_decompress(&info);
    return false;
  }
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  out->width = static_cast<int>(info.output_width);
  out->height = static_cast<int>(info.output_height);
  out->pixels.resize(static_cast<std::size_t>(out->width) * out->height * 3);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = out->pixels.data() + static_cast<std::size_t>(info.output_scanline) * out->width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

checked<rgb_image> decode_jpeg(std::string_view bytes, const image_limits& limits) {
  rgb_image img;
  char why[JMSG_LENGTH_MAX + 64] = {};
  if (!decode_jpeg_raw(bytes, limits, &img, why, sizeof why)) {
    return refusal{why};
  }
  return img;
}

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
  rgb_image img{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)};
  if (WebPDecodeRGBInto(data, bytes.size(), img.pixels.data(), img.pixels.size(), width * 3) == nullptr) {
    return refusal{"the WebP is damaged"};
  }
  return img;
}

}  // namespace

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
