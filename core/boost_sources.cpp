// The compiled parts of the header-only-capable Boost libraries Debian ships without binaries
// (Boost.JSON and Boost.URL in 1.81). Exactly one translation unit in the project includes these.
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>
