// Loops whose body is traced once: kiln::scan (JAX's lax.scan). docs/scan.md.
#ifndef KILN_LOOPS_HPP
#define KILN_LOOPS_HPP

#include <kiln/detail/loop/scan.hpp>

#endif
