#include "server/engines/video_encoder.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace gesso::engines {
namespace {

void write_all(int fd, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw std::runtime_error("ffmpeg stopped reading frames");
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string tail_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  return s.size() > 500 ? s.substr(s.size() - 500) : s;
}

// ffmpeg's command line: raw RGB frames on stdin and a synthesized tone in, H.264 + AAC MP4 and an
// AAC-only file out.
std::vector<std::string> ffmpeg_arguments(const video_request& r, const std::string& program) {
  char tone[256];
  std::snprintf(tone, sizeof tone,
                "aevalsrc=exprs='0.2*sin(2*PI*%.3f*t)*(0.6+0.4*sin(2*PI*0.5*t))+0.1*sin(2*PI*%.3f*t)'"
                ":s=44100:d=%.3f",
                r.tones.first, r.tones.second, r.seconds);
  const std::string size = std::to_string(r.width) + "x" + std::to_string(r.height);
  // clang-format off
  return {program, "-hide_banner", "-loglevel", "error", "-y",
          "-f", "rawvideo", "-pix_fmt", "rgb24", "-video_size", size, "-framerate", std::to_string(r.fps),
          "-i", "pipe:0",
          "-f", "lavfi", "-i", tone,
          "-map", "0:v", "-map", "1:a",
          "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-threads", "1",
          "-c:a", "aac", "-b:a", "96k", "-shortest", "-movflags", "+faststart", r.video.string(),
          "-map", "1:a", "-c:a", "aac", "-b:a", "96k", r.audio.string()};
  // clang-format on
}

// Starts `args` with stdin reading from `stdin_fd`, stdout discarded and stderr into `log`.
pid_t spawn_encoder(const std::vector<std::string>& args, int stdin_fd, const std::filesystem::path& log) {
  std::vector<char*> argv;
  for (const auto& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args.front().c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? pid : -1;
}

}  // namespace

void encode_video(const video_request& r, const std::function<rgb_image(int frame)>& frame,
                  const std::string& program) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("cannot create a pipe for ffmpeg");
  }
  const std::filesystem::path log = r.video.string() + ".log";
  const pid_t pid = spawn_encoder(ffmpeg_arguments(r, program), pipe_fds[0], log);
  close(pipe_fds[0]);
  if (pid < 0) {
    close(pipe_fds[1]);
    throw std::runtime_error("cannot start " + program + " (apt-get install ffmpeg)");
  }
  std::string failure;
  try {
    const int frames = static_cast<int>(r.seconds * r.fps + 0.5);
    for (int i = 0; i < frames; ++i) {
      const rgb_image img = frame(i);
      write_all(pipe_fds[1], img.pixels.data(), img.pixels.size());
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  close(pipe_fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string message = tail_of(log);
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
  if (!failure.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("video encoding failed: " + (failure.empty() ? std::string() : failure + "; ") +
                             message);
  }
}

}  // namespace gesso::engines
