// How each argument of a traced function becomes what the function receives, decided by its type.
// One rule per argument kind; each says the placeholder (a tracer on a parameter node whose path names
// the argument), and eval.hpp binds the run-time value to it without copying.
//   Eigen dense object (Matrix, Array, Map, Ref, Block, fixed or dynamic) -> rank-2 parameter
//   arithmetic scalar (double, float, integers, bool)                     -> rank-0 parameter
//   anything else                                                         -> kiln: compile error
#ifndef KILN_DETAIL_ARGS_HPP
#define KILN_DETAIL_ARGS_HPP

#include <kiln/detail/eigen.hpp>
#include <kiln/detail/node.hpp>
#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>
#include <kiln/traced.hpp>

#include <cstddef>
#include <type_traits>

namespace kiln::detail {

template <std::size_t I, class A>
struct argument_rule {
    static constexpr bool ok = raise_if<true, diagnostic::unsupported_argument, diagnostic::argument<I>, A>::ok;
    using placeholder = tracer<constant<0>>;
};

template <std::size_t I, class A>
    requires eigen_dense<A> && dtype<typename A::Scalar>
struct argument_rule<I, A> {
    static constexpr bool ok = true;
    using placeholder =
        tracer<param<arg_path<I>, typename A::Scalar, A::RowsAtCompileTime, A::ColsAtCompileTime, 2>>;
};

template <std::size_t I, class A>
    requires std::is_arithmetic_v<A>
struct argument_rule<I, A> {
    static constexpr bool ok = true;
    using placeholder = tracer<param<arg_path<I>, dtype_of<A>, 1, 1, 0>>;
};

}  // namespace kiln::detail

#endif
