// Replays fuzz inputs through a target without libFuzzer: every file named, or every file in every
// directory named, is passed once to LLVMFuzzerTestOneInput. CTest runs the seed corpora this way
// under g++ (and under the sanitizers in the asan-ubsan preset), so a regression shows in every build.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) {
          replay(entry.path());
          ++count;
        }
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      replay(arg);
      ++count;
    } else {
      std::cerr << "no such file or directory: " << arg << "\n";
      return 2;
    }
  }
  if (count == 0) {
    std::cerr << "no inputs to replay\n";
    return 2;
  }
  std::cout << "replayed " << count << " inputs\n";
  return 0;
}
