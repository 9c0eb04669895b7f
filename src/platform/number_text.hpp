// Purpose: the shortest text of a number that reads back as the same value: the form of every floating-point
// setting and attribute that is printed to be read again (the results file's attribute texts, the command that
// reproduces a configuration, the banner), and a count with its thousands separated.
#pragma once

#include <string>

namespace mgpu {

// The shortest text that reads back as the same double ("%.*g", 1 to 17 digits, or a whole number's plain digits
// where those are no longer): 0.001, not 0.0010000000000000000208; 20, not 2e+01; 1e+20, not 21 digits.
std::string shortest_double_text(double value);

// "6,885,376": a count with thousands separated, as the banner and --help print parameter counts.
std::string with_thousands(unsigned long long value);

// The same for a float: the fewest digits (1 to 9) that read back as the same float (1e-07, not 1.00000001e-07).
std::string shortest_float_text(float value);

}  // namespace mgpu
