// Loops and branches whose bodies are traced once: kiln::scan, kiln::fori_loop (docs/scan.md), kiln::while_loop,
// kiln::cond and kiln::switch_ (docs/control_flow.md); JAX's lax.scan, fori_loop, while_loop, cond and switch.
#ifndef KILN_LOOPS_HPP
#define KILN_LOOPS_HPP

#include <kiln/detail/loop/scan.hpp>
#include <kiln/detail/loop/control.hpp>

#endif
