// clip(x, lo, hi): a traced x limited to [lo, hi] (traced values, constants or numbers), elementwise with
// broadcasting, as jnp.clip: minimum(maximum(x, lo), hi), so where lo > hi the result is hi. Not a
// primitive of its own: it builds maximum and minimum, and takes their dtypes and their derivatives (1
// inside the interval, 0 outside, split evenly where x equals a bound).
#ifndef KILN_OPS_CLIP_HPP
#define KILN_OPS_CLIP_HPP

#include <kiln/ops/maximum.hpp>
#include <kiln/ops/minimum.hpp>

namespace kiln {
template <traced_value X, class Lo, class Hi>
constexpr auto clip(X const& x, Lo const& lo, Hi const& hi) {
    return minimum(maximum(x, lo), hi);
}
}  // namespace kiln

#endif
