#define BOOST_TEST_MODULE gesso_e2e_tests
#include <boost/test/unit_test.hpp>
