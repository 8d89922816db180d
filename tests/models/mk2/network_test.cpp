#include "mk2_fixture.hpp"
