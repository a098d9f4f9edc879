// Run-time shape checks: dynamic extents are checked before anything is evaluated, and a mismatch
// throws kiln::shape_error naming the argument, the expected and the actual shape.
#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

using Eigen::MatrixXd;

template <class F>
std::string shape_error_of(F&& f) {
    try {
        f();
    } catch (kiln::shape_error const& e) {
        return e.what();
    }
    return "no shape_error";
}

static_assert(std::is_base_of_v<std::invalid_argument, kiln::shape_error>);

TEST(Shapes, ElementwiseMismatchNamesBothArguments) {
    MatrixXd a(3, 4), b(5, 4);
    a.setOnes();
    b.setOnes();
    auto add = kiln::jit([](auto const& x, auto const& y) { return x + y; });
    EXPECT_EQ(shape_error_of([&] { add(a, b); }),
              "kiln: shape mismatch in add: argument 1 has shape f64[5,4] but [3,4] was expected "
              "(%2 = argument 0 f64[3,4], argument 1 f64[5,4])");
}

TEST(Shapes, MatmulMismatchNamesBothShapes) {
    MatrixXd a = MatrixXd::Ones(3, 4), b = MatrixXd::Ones(5, 2);
    auto mm = kiln::jit([](auto const& x, auto const& y) { return kiln::matmul(x, y); });
    EXPECT_EQ(shape_error_of([&] { mm(a, b); }),
              "kiln: shape mismatch in matmul: argument 1 has shape f64[5,2] but [4,*] was expected "
              "(%2 = argument 0 f64[3,4], argument 1 f64[5,2])");
}

TEST(Shapes, IntermediateOperandsAreNamedByNode) {
    MatrixXd a = MatrixXd::Ones(3, 4), b = MatrixXd::Ones(3, 4), w = MatrixXd::Ones(3, 2);
    auto f = kiln::jit([](auto const& x, auto const& y, auto const& v) { return kiln::matmul(x + y, v); });
    EXPECT_EQ(shape_error_of([&] { f(a, b, w); }),
              "kiln: shape mismatch in matmul: argument 2 has shape f64[3,2] but [4,*] was expected "
              "(%4 = %3 f64[3,4], argument 2 f64[3,2])");
}

TEST(Shapes, FixedMeetsDynamic) {
    Eigen::Matrix3d fixed = Eigen::Matrix3d::Identity();
    MatrixXd dyn = MatrixXd::Ones(4, 3);
    auto mul = kiln::jit([](auto const& x, auto const& y) { return x * y; });
    EXPECT_EQ(shape_error_of([&] { mul(fixed, dyn); }),
              "kiln: shape mismatch in mul: argument 1 has shape f64[4,3] but [3,3] was expected "
              "(%2 = argument 0 f64[3,3], argument 1 f64[4,3])");
    MatrixXd ok = MatrixXd::Ones(3, 3);
    EXPECT_EQ(mul(fixed, ok), fixed);
}

TEST(Shapes, BroadcastingIsDecidedByStaticExtents) {
    // A RowVectorXd is statically one row: it broadcasts. A MatrixXd that happens to have one row at run
    // time does not, so what is fused never depends on data; it is an error instead of a silent guess.
    MatrixXd a = MatrixXd::Ones(3, 4);
    Eigen::RowVectorXd row = Eigen::RowVectorXd::Ones(4);
    MatrixXd one_row = MatrixXd::Ones(1, 4);
    auto add = kiln::jit([](auto const& x, auto const& y) { return x + y; });
    EXPECT_EQ(add(a, row), MatrixXd::Constant(3, 4, 2.0));
    EXPECT_EQ(shape_error_of([&] { add(a, one_row); }),
              "kiln: shape mismatch in add: argument 1 has shape f64[1,4] but [3,4] was expected "
              "(%2 = argument 0 f64[3,4], argument 1 f64[1,4])");
    Eigen::RowVectorXd short_row = Eigen::RowVectorXd::Ones(3);
    EXPECT_EQ(shape_error_of([&] { add(a, short_row); }),
              "kiln: shape mismatch in add: argument 1 has shape f64[1,3] but [3,4] was expected "
              "(%2 = argument 0 f64[3,4], argument 1 f64[1,3])");
}

TEST(Shapes, TraceChecksShapesToo) {
    MatrixXd a = MatrixXd::Ones(3, 4), b = MatrixXd::Ones(5, 4);
    auto f = [](auto const& x, auto const& y) { return x - y; };
    EXPECT_THROW(kiln::trace(f, a, b), kiln::shape_error);
}

TEST(Shapes, EmptyMatricesAreFine) {
    MatrixXd a(0, 4), b(0, 4);
    auto f = kiln::jit([](auto const& x, auto const& y) { return kiln::sum(x * y); });
    EXPECT_EQ(f(a, b), 0.0);
}

}  // namespace

namespace {

// vmap: every mapped argument has as many examples as the first (JAX: "vmap got inconsistent sizes"),
// checked even where nothing combines them, and reported as the argument whose batch does not fit.
TEST(Shapes, VmapBatchSizesMustAgree) {
    MatrixXd x = MatrixXd::Ones(5, 3);
    Eigen::VectorXd y = Eigen::VectorXd::Ones(4);
    auto f = [](auto const& row, auto const& a) { return std::tuple(kiln::sum(row), a * kiln::c<2.0>); };
    auto g = [](auto const& row, auto const& col) { return kiln::sum(row) + kiln::sum(col); };
    EXPECT_EQ(shape_error_of([&] { kiln::jit(kiln::vmap(f))(x, y); }),
              "kiln: shape mismatch in vmap_batch: argument 1 has shape f64[4,1] but [5,*] was expected "
              "(%3 = argument 1 f64[4,1], argument 0 f64[5,3])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit(kiln::vmap(g, kiln::in_axes<0, 1>))(x, MatrixXd(MatrixXd::Ones(2, 6))); }),
              "kiln: shape mismatch in vmap_batch: argument 1 has shape f64[2,6] but [*,5] was expected "
              "(%3 = argument 1 f64[2,6], argument 0 f64[5,3])");
    EXPECT_EQ(shape_error_of([&] { kiln::jit(kiln::vmap(f))(x, Eigen::VectorXd(Eigen::VectorXd::Ones(5))); }),
              "no shape_error");
}

}  // namespace
