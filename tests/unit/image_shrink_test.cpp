// Shrinking input images while they are decoded (server/engines/row_shrinker.hpp) and the size they
// are decoded at (decoded_size).

#include "server/engines/image_decoder.hpp"
#include "server/engines/row_shrinker.hpp"

#include <boost/test/unit_test.hpp>

using namespace gesso::engines;

BOOST_AUTO_TEST_SUITE(image_shrink)

BOOST_AUTO_TEST_CASE(rows_are_averaged_into_the_smaller_picture) {
  // 4 x 2 source: left half 0 and 100, right half 200 and 40 (per row), shrunk to 2 x 1.
  row_shrinker shrink(4, 2, 2, 1);
  const std::uint8_t top[12] = {0, 0, 0, 0, 0, 0, 200, 200, 200, 200, 200, 200};
  const std::uint8_t bottom[12] = {100, 100, 100, 100, 100, 100, 40, 40, 40, 40, 40, 40};
  shrink.add_row(top, 3);
  shrink.add_row(bottom, 3);
  const rgb_image out = shrink.take();
  BOOST_TEST(out.width == 2);
  BOOST_TEST(out.height == 1);
  BOOST_TEST(out.pixels[0] == 50);   // (0 + 0 + 100 + 100) / 4
  BOOST_TEST(out.pixels[3] == 120);  // (200 + 200 + 40 + 40) / 4
}

BOOST_AUTO_TEST_CASE(alpha_is_composited_onto_black_and_extra_rows_are_ignored) {
  row_shrinker shrink(1, 1, 1, 1);
  const std::uint8_t half[4] = {200, 100, 50, 128};
  shrink.add_row(half, 4);
  shrink.add_row(half, 4);  // past the last row
  const rgb_image out = shrink.take();
  BOOST_TEST(out.pixels[0] == 200 * 128 / 255);
  BOOST_TEST(out.pixels[1] == 100 * 128 / 255);
}

BOOST_AUTO_TEST_CASE(images_are_decoded_at_the_smallest_size_covering_the_frame) {
  const image_limits frame{.cover_width = 512, .cover_height = 288};
  BOOST_TEST((decoded_size(4096, 4096, frame) == std::pair{512, 512}));
  BOOST_TEST((decoded_size(4096, 1024, frame) == std::pair{1152, 288}));
  BOOST_TEST((decoded_size(300, 200, frame) == std::pair{300, 200}));  // never enlarged
  BOOST_TEST((decoded_size(4096, 4096, image_limits{}) == std::pair{4096, 4096}));
}

BOOST_AUTO_TEST_SUITE_END()
