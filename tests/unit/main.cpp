#define BOOST_TEST_MODULE gesso_unit_tests
#include <boost/test/unit_test.hpp>
