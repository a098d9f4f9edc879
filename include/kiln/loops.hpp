// Loops whose body is traced once: kiln::scan and kiln::fori_loop (JAX's lax.scan and lax.fori_loop). docs/scan.md.
#ifndef KILN_LOOPS_HPP
#define KILN_LOOPS_HPP

#include <kiln/detail/loop/scan.hpp>

#endif
