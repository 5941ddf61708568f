// gesso-fake-providers: OpenAI Images, Replicate, fal and stable-diffusion.cpp's native API on one port,
// each under its own prefix, with real PNG and MP4 outputs — to try Gesso without provider keys, and
// for the end-to-end tests (docs/fake-providers.md).
//
//   gesso-fake-providers [--listen 127.0.0.1:0]
// Prints "listening on http://HOST:PORT" once ready, then serves until SIGTERM or SIGINT.

#include "server/fakes/fake_providers.hpp"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--listen" && i + 1 < argc) {
      listen = argv[++i];
    } else {
      std::cerr << "usage: gesso-fake-providers [--listen HOST:PORT]\n";
      return 2;
    }
  }
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "gesso-fake-providers: --listen wants HOST:PORT\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Nothing to flush or hand back: a stop is an exit.
  std::signal(SIGTERM, [](int) { std::_Exit(0); });
  std::signal(SIGINT, [](int) { std::_Exit(0); });
  try {
    const std::string host = listen.substr(0, colon);
    const auto port = static_cast<std::uint16_t>(std::stoi(listen.substr(colon + 1)));
    gesso::fakes::fake_world* world = nullptr;
    gesso::fakes::fake_http_server server(host, port, [&world](const gesso::fakes::fake_request& r) {
      return gesso::fakes::route_fake_request(*world, r);
    });
    gesso::fakes::fake_world the_world("http://" + host + ":" + std::to_string(server.port()));
    world = &the_world;
    std::cout << "listening on " << the_world.base_url() << std::endl;
    server.run();
  } catch (const std::exception& e) {
    std::cerr << "gesso-fake-providers: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
