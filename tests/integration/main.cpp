#define BOOST_TEST_MODULE gesso_integration_tests
#include <boost/test/unit_test.hpp>
