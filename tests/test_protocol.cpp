// The primitive protocol (include/kiln/detail/ir/primitive.hpp): a primitive written the way a user would
// (derived from kiln::primitive_base, the required members and a vjp only) works under jit, grad and vmap
// (batched as a pointwise primitive, having no batch rule); every primitive of kiln satisfies
// kiln::primitive; and primitive_traits answers the optional rules with kiln::primitive_base's defaults.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>

namespace demo {
// cube(x) = x^3, elementwise.
struct cube_p : kiln::primitive_base {
    static constexpr std::string_view name = "cube";

    template <class A>
    struct rule {
        using scalar = typename A::scalar;
        static constexpr bool weak = A::weak;
        static constexpr int rank = A::rank;
        static constexpr long rows = A::rows, cols = A::cols;
        static constexpr unsigned broadcast_mask = 0;
        static constexpr bool always_materialize = false;
        static constexpr bool pointwise = true;  // element (r, c) reads element (r, c) only
    };
    template <class A>
    static constexpr kiln::detail::shape_check shape(kiln::detail::extent a) {
        return {a};
    }
    static constexpr double flops(kiln::detail::extent out, kiln::detail::extent) {
        return 2.0 * static_cast<double>(out.rows * out.cols);
    }
    template <class A, class X>
    static auto lower(kiln::detail::extent, X const& x) {
        if constexpr (A::rank == 0) return x * x * x;
        else return x.array().cube();
    }
    template <std::size_t K>
    static constexpr auto vjp(auto ct, auto, auto x) {  // d x^3 = 3 x^2
        return ct * (kiln::c<3> * x * x);
    }
};

template <kiln::traced_value X>
constexpr auto cube(X const&) {
    return kiln::detail::make_node<cube_p, X>();
}

// The same primitive not derived from kiln::primitive_base: the traits supply the defaults.
struct bare_p {
    static constexpr std::string_view name = "bare";
    template <class A>
    struct rule : cube_p::rule<A> {};
    template <class A>
    static constexpr kiln::detail::shape_check shape(kiln::detail::extent a) {
        return {a};
    }
    static constexpr double flops(kiln::detail::extent, kiln::detail::extent) { return 0; }
    template <class A, class X>
    static void assign(X&, kiln::detail::extent, X const&) {}
    static constexpr bool alias = true;
};
}  // namespace demo

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln::detail::primitive_traits;

// Every primitive of kiln (one instance of each template).
struct some_tag {};
static_assert(kiln::primitive<kiln::ops::abs_p> && kiln::primitive<kiln::ops::add_p> &&
              kiln::primitive<kiln::ops::cast_p<float>> && kiln::primitive<kiln::ops::greater_p> &&
              kiln::primitive<kiln::ops::greater_equal_p> && kiln::primitive<kiln::ops::less_p> &&
              kiln::primitive<kiln::ops::less_equal_p> && kiln::primitive<kiln::ops::equal_p> &&
              kiln::primitive<kiln::ops::not_equal_p> && kiln::primitive<kiln::ops::concatenate_p<0>> &&
              kiln::primitive<kiln::ops::cos_p> && kiln::primitive<kiln::ops::div_p> &&
              kiln::primitive<kiln::ops::dot_p> && kiln::primitive<kiln::ops::dynamic_slice_p<0, 2, -1>> &&
              kiln::primitive<kiln::ops::exp_p> && kiln::primitive<kiln::ops::expm1_p> &&
              kiln::primitive<kiln::ops::eye_p<3, 3, double>> &&
              kiln::primitive<kiln::ops::full_p<2, 3, 4, double, false>> && kiln::primitive<kiln::ops::log_p> &&
              kiln::primitive<kiln::ops::log1p_p> && kiln::primitive<kiln::ops::log_softmax_p<0>> &&
              kiln::primitive<kiln::ops::logsumexp_p<-1>> && kiln::primitive<kiln::ops::matmul_p> &&
              kiln::primitive<kiln::ops::matrix_p<2, 2>> && kiln::primitive<kiln::ops::max_p<0>> &&
              kiln::primitive<kiln::ops::maximum_p> && kiln::primitive<kiln::ops::mean_p<1>> &&
              kiln::primitive<kiln::ops::min_p<-1>> && kiln::primitive<kiln::ops::minimum_p> &&
              kiln::primitive<kiln::ops::mul_p> && kiln::primitive<kiln::ops::neg_p> &&
              kiln::primitive<kiln::ops::outer_p> && kiln::primitive<kiln::ops::pad_p<1, 0>> &&
              kiln::primitive<kiln::ops::dynamic_pad_p<0>> && kiln::primitive<kiln::ops::pow_p> &&
              kiln::primitive<kiln::ops::integer_pow_p<3>> && kiln::primitive<kiln::ops::prod_p<-1>> &&
              kiln::primitive<kiln::ops::reshape_p<2, 6>> && kiln::primitive<kiln::ops::rsqrt_p> &&
              kiln::primitive<kiln::ops::shaped_like_p<true>> && kiln::primitive<kiln::ops::sigmoid_p> &&
              kiln::primitive<kiln::ops::sin_p> && kiln::primitive<kiln::ops::size_p<0>> &&
              kiln::primitive<kiln::ops::slice_p<0, 1, 0, 2>> && kiln::primitive<kiln::ops::softmax_p<1>> &&
              kiln::primitive<kiln::ops::sqrt_p> && kiln::primitive<kiln::ops::square_p> &&
              kiln::primitive<kiln::ops::squeeze_p> && kiln::primitive<kiln::ops::sub_p> &&
              kiln::primitive<kiln::ops::sum_p<-1>> && kiln::primitive<kiln::ops::tan_p> &&
              kiln::primitive<kiln::ops::tanh_p> && kiln::primitive<kiln::ops::transpose_p> &&
              kiln::primitive<kiln::ops::where_p> && kiln::primitive<kiln::ops::wrt_p<some_tag>> &&
              kiln::primitive<kiln::ops::vmap_slot_p<0>> && kiln::primitive<kiln::ops::vmap_batch_p<0, 0>>);
static_assert(kiln::primitive<kiln::ops::acos_p> && kiln::primitive<kiln::ops::acosh_p> &&
              kiln::primitive<kiln::ops::asin_p> && kiln::primitive<kiln::ops::asinh_p> &&
              kiln::primitive<kiln::ops::atan_p> && kiln::primitive<kiln::ops::atan2_p> &&
              kiln::primitive<kiln::ops::atanh_p> && kiln::primitive<kiln::ops::cosh_p> &&
              kiln::primitive<kiln::ops::sinh_p> && kiln::primitive<kiln::ops::erf_p> &&
              kiln::primitive<kiln::ops::erfc_p> && kiln::primitive<kiln::ops::lgamma_p> &&
              kiln::primitive<kiln::ops::digamma_p> && kiln::primitive<kiln::ops::polygamma_p<1>> &&
              kiln::primitive<kiln::ops::sign_p> && kiln::primitive<kiln::ops::floor_p> &&
              kiln::primitive<kiln::ops::ceil_p> && kiln::primitive<kiln::ops::round_p> &&
              kiln::primitive<kiln::ops::mod_p> && kiln::primitive<kiln::ops::argmax_p<0>> &&
              kiln::primitive<kiln::ops::argmin_p<-1>> && kiln::primitive<kiln::ops::argsort_p<1>> &&
              kiln::primitive<kiln::ops::cumsum_p<0>> && kiln::primitive<kiln::ops::cumprod_p<1>> &&
              kiln::primitive<kiln::ops::cumprod_tangent_p<0, false>> &&
              kiln::primitive<kiln::ops::iota_p<3, 1, double, 0>> && kiln::primitive<kiln::ops::gather_p<0>> &&
              kiln::primitive<kiln::ops::scatter_add_p<1>> && kiln::primitive<kiln::ops::cholesky_p> &&
              kiln::primitive<kiln::ops::triangular_solve_p<kiln::linalg::triangular{}>> &&
              kiln::primitive<kiln::ops::triangular_matmul_p<kiln::linalg::triangular{}>> &&
              kiln::primitive<kiln::ops::pd_solve_p> && kiln::primitive<kiln::ops::pd_inverse_p> &&
              kiln::primitive<kiln::ops::logdet_p> && kiln::primitive<kiln::ops::lu_p> &&
              kiln::primitive<kiln::ops::solve_p<false>> && kiln::primitive<kiln::ops::inv_p> &&
              kiln::primitive<kiln::ops::det_p> && kiln::primitive<kiln::ops::slogdet_sign_p> &&
              kiln::primitive<kiln::ops::logabsdet_p> && kiln::primitive<kiln::ops::eigh_p<true>> &&
              kiln::primitive<kiln::ops::eigenvalues_p> && kiln::primitive<kiln::ops::eigenvectors_p> &&
              kiln::primitive<kiln::ops::eigh_gaps_p> && kiln::primitive<kiln::ops::qr_p> &&
              kiln::primitive<kiln::ops::qr_q_p> && kiln::primitive<kiln::ops::qr_r_p> &&
              kiln::primitive<kiln::ops::diag_p> && kiln::primitive<kiln::ops::diagonal_p> &&
              kiln::primitive<kiln::ops::tril_p<true, 0>>);
static_assert(kiln::primitive<demo::cube_p> && kiln::primitive<demo::bare_p>);
static_assert(!kiln::primitive<int> && !kiln::primitive<some_tag> && !kiln::primitive<kiln::primitive_base>);

// The optional rules: declared ones, and kiln::primitive_base's defaults otherwise.
static_assert(primitive_traits<kiln::ops::matmul_p>::operands_in_memory &&
              !primitive_traits<kiln::ops::add_p>::operands_in_memory);
static_assert(primitive_traits<kiln::ops::size_p<0>>::shape_only_operands == 0b1 &&
              primitive_traits<kiln::ops::tanh_p>::shape_only_operands == 0);
static_assert(primitive_traits<kiln::ops::add_p>::recomputed_when_shared &&
              !primitive_traits<kiln::ops::tanh_p>::recomputed_when_shared);
static_assert(primitive_traits<kiln::ops::wrt_p<some_tag>>::alias && !primitive_traits<kiln::ops::mul_p>::alias);
static_assert(primitive_traits<kiln::ops::mul_p>::folds && !primitive_traits<kiln::ops::matmul_p>::folds);
static_assert(primitive_traits<kiln::ops::concatenate_p<0>>::inlined_when_fixed &&
              !primitive_traits<kiln::ops::matmul_p>::inlined_when_fixed);
static_assert(primitive_traits<kiln::ops::max_p<-1>>::keeps_bool && primitive_traits<kiln::ops::max_p<-1>>::associative &&
              !primitive_traits<kiln::ops::mean_p<-1>>::keeps_bool && !primitive_traits<kiln::ops::mean_p<-1>>::associative);
static_assert(primitive_traits<kiln::ops::mul_p>::is_left_identity<1>() &&
              !primitive_traits<kiln::ops::mul_p>::is_right_identity<0>() &&
              !primitive_traits<kiln::ops::matmul_p>::is_right_identity<1>());
static_assert(primitive_traits<kiln::ops::sum_p<0>>::has_attrs && primitive_traits<kiln::ops::sum_p<0>>::attrs() == "axes=(0,)" &&
              !primitive_traits<kiln::ops::tanh_p>::has_attrs && primitive_traits<kiln::ops::tanh_p>::attrs().empty());
static_assert(primitive_traits<kiln::ops::matmul_p>::has_batch && !primitive_traits<kiln::ops::tanh_p>::has_batch);
using cube = primitive_traits<demo::cube_p>;
static_assert(!cube::operands_in_memory && cube::shape_only_operands == 0 && !cube::recomputed_when_shared &&
              !cube::alias && !cube::folds && !cube::keeps_bool && !cube::associative && !cube::has_attrs &&
              !cube::inlined_when_fixed);
static_assert(cube::has_vjp && !cube::has_jvp && !cube::has_batch && cube::has_lower && !cube::has_assign);
using bare = primitive_traits<demo::bare_p>;
static_assert(bare::alias && !bare::folds && bare::shape_only_operands == 0 && !bare::has_vjp && !bare::has_lower &&
              bare::has_assign);

TEST(Protocol, UserPrimitiveUnderJit) {
    MatrixXd x(2, 3);
    x << 1, -2, 0.5, 3, -1.5, 2;
    MatrixXd const y = kiln::jit([](auto const& a) { return demo::cube(a) + a; })(x);
    MatrixXd expected(2, 3);
    expected << 2, -10, 0.625, 30, -4.875, 10;
    EXPECT_TRUE(y.isApprox(expected, 1e-15)) << y;
    double const s = kiln::jit([](auto const& a) { return demo::cube(a); })(-2.0);
    EXPECT_EQ(s, -8.0);
    // The IR names it.
    auto const text = kiln::trace([](auto const& a) { return demo::cube(a); }, x).as_text();
    EXPECT_NE(text.find("= cube %0"), std::string::npos) << text;
}

TEST(Protocol, UserPrimitiveUnderGrad) {
    MatrixXd x(2, 2);
    x << 1, -2, 0.5, 3;
    // d/dx sum(cube(x) * w) = 3 x^2 w
    MatrixXd w(2, 2);
    w << 1, 2, -1, 0.5;
    auto f = [](auto const& a, auto const& b) { return kiln::sum(demo::cube(a) * b); };
    MatrixXd const g = kiln::grad(f)(x, w);
    MatrixXd expected(2, 2);
    expected << 3, 24, -0.75, 13.5;
    EXPECT_TRUE(g.isApprox(expected, 1e-15)) << g;
    // Twice: the vjp is made of kiln operations, so it differentiates again (d^2 x^3 = 6x).
    double const h = kiln::grad(kiln::grad([](auto const& a) { return demo::cube(a); }))(2.0);
    EXPECT_EQ(h, 12.0);
}

TEST(Protocol, UserPrimitiveUnderVmapIsPointwise) {
    MatrixXd x(3, 2);
    x << 1, 2, -1, 0.5, 3, -2;
    // One row per example: sum of the cubes of the row.
    VectorXd const y = kiln::vmap([](auto const& row) { return kiln::sum(demo::cube(row)); })(x);
    VectorXd expected(3);
    expected << 9, -0.875, 19;
    EXPECT_TRUE(y.isApprox(expected, 1e-15)) << y;
}

}  // namespace
