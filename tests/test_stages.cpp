// The ahead-of-time stages: kiln::trace -> kiln::lower -> compile(), as free functions over any callable
// (so a wrapper is what gets lowered), kiln::jit(f).trace/.lower as the same functions, kiln::spec
// arguments, out_info(), the lowered plan's text, Graphviz and cost, and what a compiled function accepts.
#include "support.hpp"

#include <kiln/kiln.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using kiln_test::shape_error_of;

bool contains(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

auto const product = [](auto const& a, auto const& b) { return kiln::matmul(a, b); };

// (1) A wrapper that swaps the arguments of a jitted function: calling it, jitting it and lowering it all
// run the swap, and the lowered text shows it.
TEST(Stages, WrapperIsWhatGetsLowered) {
    auto const g = kiln::jit(product);
    auto const swap = [g](auto const& a, auto const& b) { return g(b, a); };
    MatrixXd const A = MatrixXd::Random(2, 3), B = MatrixXd::Random(3, 2);
    MatrixXd const expected = B * A;  // 3 x 3, not A * B's 2 x 2

    MatrixXd const called = swap(A, B);
    MatrixXd const jitted = kiln::jit(swap)(A, B);
    auto const lowered = kiln::lower(swap, A, B);
    MatrixXd const compiled = lowered.compile()(A, B);
    kiln_test::expect_close(called, expected);
    kiln_test::expect_close(jitted, expected);
    kiln_test::expect_close(compiled, expected);
    EXPECT_TRUE(contains(lowered.as_text(), "%2 = matmul %1 %0 : f64[3,3]")) << lowered.as_text();
    // jit(swap).lower is the same function applied to the jitted object.
    EXPECT_TRUE(contains(kiln::jit(swap).lower(A, B).as_text(), "matmul %1 %0"));
    EXPECT_TRUE(contains(kiln::lower(g, A, B).as_text(), "matmul %0 %1"));
}

// (2) jit(jit(f)) is the same graph as jit(f) and as f; the members are the free functions.
TEST(Stages, JitOfJitIsTheSameGraph) {
    auto const f = [](auto const& x) { return kiln::sum(kiln::tanh(x) * x); };
    MatrixXd const X = MatrixXd::Random(3, 4);
    auto const once = kiln::trace(kiln::jit(f), X);
    auto const twice = kiln::trace(kiln::jit(kiln::jit(f)), X);
    EXPECT_TRUE(twice.same_graph(once));
    EXPECT_TRUE(once.same_graph(kiln::trace(f, X)));
    EXPECT_TRUE(kiln::jit(f).trace(X).same_graph(once));
    EXPECT_EQ(twice.as_text(), once.as_text());
    EXPECT_FALSE(once.same_graph(kiln::trace(product, X, X.transpose().eval())));
    EXPECT_DOUBLE_EQ(kiln::jit(kiln::jit(f))(X), kiln::jit(f)(X));
}

// (3) A jitted function called inside another traced function is inlined: one graph.
TEST(Stages, JittedCallInsideATraceIsInlined) {
    auto const g = kiln::jit(product);
    auto const h = [g](auto const& x, auto const& w) { return kiln::sum(kiln::tanh(g(x, w))); };
    MatrixXd const X = MatrixXd::Random(4, 3), W = MatrixXd::Random(3, 2);
    auto const tr = kiln::trace(h, X, W);
    EXPECT_EQ(tr.num_nodes(), 5u);  // x, w, matmul, tanh, sum
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 2 arguments, 2 parameters, 5 nodes\n"
              "  %0 = param args[0] : f64[4,3]\n"
              "  %1 = param args[1] : f64[3,2]\n"
              "  %2 = matmul %0 %1 : f64[4,2]\n"
              "  %3 = tanh %2 : f64[4,2]\n"
              "  %4 = sum[axes=(0,1)] %3 : f64[]\n"
              "  return %4\n");
    EXPECT_NEAR(kiln::jit(h)(X, W), (X * W).array().tanh().sum(), 1e-13);
}

// (4) The lowered gradient of a function that ignores an input: fewer parameters, each mapped back to the
// path of its argument.
struct layer {
    Eigen::Matrix3d w;
    Eigen::Vector3d b;
};
TEST(Stages, LoweredGradientReportsItsParameters) {
    auto const loss = [](auto const& p, auto const& unused, auto const& x) {
        auto const& [w, b] = p;
        static_cast<void>(unused);
        return kiln::sum(kiln::tanh(kiln::matmul(w, x) + b));
    };
    layer const p{Eigen::Matrix3d::Random(), Eigen::Vector3d::Random()};
    Eigen::Matrix2d const unused = Eigen::Matrix2d::Random();
    Eigen::Vector3d const x = Eigen::Vector3d::Random();
    auto const lo = kiln::lower(kiln::grad(loss), p, unused, x);
    EXPECT_EQ(lo.num_args(), 3u);
    ASSERT_EQ(lo.num_params(), 3u);  // w, b, x: `unused` is pruned
    EXPECT_EQ(lo.param_map(), (std::array<std::size_t, 3>{0, 0, 2}));
    EXPECT_EQ(lo.param_paths()[0], "args[0].<0>");
    EXPECT_EQ(lo.param_paths()[1], "args[0].<1>");
    EXPECT_EQ(lo.param_paths()[2], "args[2]");
    EXPECT_TRUE(contains(lo.graph_text(), "(pruned: args[1])")) << lo.graph_text();
    layer const g = lo.compile()(p, unused, x);
    layer const expected = kiln::grad(loss)(p, unused, x);
    kiln_test::expect_close(g.w, expected.w);
    kiln_test::expect_close(g.b, expected.b);
}

// The plan: which nodes are fused, which materialized, which temporaries; and the same as Graphviz.
TEST(Stages, LoweredTextShowsThePlan) {
    auto const f = [](auto const& x, auto const& y) {
        auto const t = kiln::tanh(x * y);
        return kiln::sum(t * t);  // t is used twice: materialized
    };
    MatrixXd const X = MatrixXd::Random(3, 4), Y = MatrixXd::Random(3, 4);
    auto const lo = kiln::lower(f, X, Y);
    std::string const text = lo.as_text();
    EXPECT_TRUE(contains(text, "kiln lowered: 2 arguments, 2 parameters, 6 nodes; Eigen assignments: 2, temporaries: 2 (104 B)"))
        << text;
    EXPECT_TRUE(contains(text, "%0 = param args[0] : f64[3,4]               ; argument, read in place")) << text;
    EXPECT_TRUE(contains(text, "%2 = mul %0 %1 : f64[3,4]                   ; fused into %3")) << text;
    EXPECT_TRUE(contains(text, "%3 = tanh %2 : f64[3,4]                     ; materialized: t0 (96 B)")) << text;
    EXPECT_TRUE(contains(text, "%4 = mul %3 %3 : f64[3,4]                   ; fused into %5")) << text;
    EXPECT_TRUE(contains(text, "; materialized: t1 (8 B)")) << text;
    std::string const dot = lo.as_dot();
    EXPECT_TRUE(contains(dot, "digraph kiln {")) << dot;
    EXPECT_TRUE(contains(dot, "subgraph cluster_3 {")) << dot;
    EXPECT_TRUE(contains(dot, "n0 -> n2;")) << dot;
    EXPECT_TRUE(contains(dot, "n5 -> out0;")) << dot;
}

// cost_analysis(): by hand for sum(x * y) on 3 x 4; a constant expression when every extent is fixed.
TEST(Stages, CostAnalysis) {
    auto const f = [](auto const& x, auto const& y) { return kiln::sum(x * y); };
    Eigen::Matrix<double, 3, 4> const X = Eigen::Matrix<double, 3, 4>::Random();
    auto const fixed = kiln::lower(f, X, X);
    constexpr kiln::cost c = fixed.cost_analysis();
    static_assert(c.flops == 24);  // 12 products, 12 additions
    static_assert(c.bytes_read == 192 && c.bytes_written == 8 && c.temporary_bytes == 8);
    MatrixXd const D = MatrixXd::Random(30, 4);
    kiln::cost const d = kiln::lower(f, D, D).cost_analysis();
    EXPECT_EQ(d, (kiln::cost{240, 1920, 8, 8}));
}

// What a materialized node's Eigen expression reads, as as_text, as_dot and cost_analysis report it (one
// walk over the plan, detail/plan/plan.hpp): a cheap shared node is recomputed in each expression (its
// flops counted in each), an argument read for its extents only is no read, and an alias (wrt) is its
// operand's value: its expressions read the argument, once per expression however many times it appears.
// Costs by hand: exp, sin, cos 20 flops per element, add, mul, neg, a sum's additions 1.
TEST(Stages, FusedExpressionsThroughSharedNodesExtentsAndAliases) {
    auto const f = [](auto const& x, auto const& y) {
        auto const s = kiln::exp(x);
        auto const r = s + s;  // two users, operands stored: recomputed in both
        return std::tuple(r * kiln::full_like(y, kiln::c<0.5>), kiln::sum(-r * x));
    };
    VectorXd const x = VectorXd::Random(16), y = VectorXd::Random(16);
    auto const lo = kiln::lower(f, x, y);
    std::string const text = lo.as_text();
    EXPECT_TRUE(contains(text, "%1 = param args[1] : f64[16,1]              ; argument, extents only")) << text;
    EXPECT_TRUE(contains(text, "%3 = add %2 %2 : f64[16,1]                  ; recomputed in %6 %9")) << text;
    EXPECT_TRUE(contains(text, "%5 = full[shape=(*,1) broadcast_dimensions=()] %4 %1 : f64[16,1]  ; fused into %6")) << text;
    EXPECT_TRUE(contains(text, "%7 = neg %3 : f64[16,1]                     ; fused into %9")) << text;
    std::string const dot = lo.as_dot();
    EXPECT_TRUE(contains(dot, "n1 -> n5 [style=dotted];")) << dot;
    // %3, in two expressions, is in no box: listed after the arguments.
    EXPECT_TRUE(contains(dot, "fillcolor=\"#dbe8ff\"];\n  n3 [label=\"%3 add %2 %2\\nf64[16,1]\"];")) << dot;
    // exp: 16 * 20, reads x; r * full: 16 + 16 (r), reads s; sum(-r * x): 16 * 4, reads s and x.
    EXPECT_EQ(lo.cost_analysis(), (kiln::cost{416, 4 * 128, 128 + 128 + 8, 128 + 128 + 8}));

    auto const s = [](auto const& w, auto const& v) { return kiln::sum(w * kiln::sin(v) * v); };
    MatrixXd const W = MatrixXd::Random(3, 4), V = MatrixXd::Random(3, 4);
    auto const lg = kiln::lower(kiln::grad(s, kiln::argnums<1>), W, V);  // w * cos(v) * v + w * sin(v)
    std::string const gtext = lg.as_text();
    EXPECT_TRUE(contains(gtext, "%2 = wrt %1 : f64[3,4]                      ; alias of %1, no code")) << gtext;
    EXPECT_TRUE(contains(gtext, "%4 = cos %2 : f64[3,4]                      ; fused into %8")) << gtext;
    EXPECT_TRUE(contains(gtext, "%8 = add %5 %7 : f64[3,4]                   ; materialized: t0 (96 B)")) << gtext;
    EXPECT_TRUE(contains(gtext, "Eigen assignments: 1, temporaries: 1 (96 B)")) << gtext;
    std::string const gdot = lg.as_dot();
    EXPECT_TRUE(contains(gdot, "n4 [label=\"%4 cos %2\\nf64[3,4]\"];\n  n5")) << gdot;  // in %8's box
    EXPECT_TRUE(contains(gdot, "n2 [label=\"%2 wrt %1\\nf64[3,4]\", style=\"rounded,dashed\"];")) << gdot;
    // 12 * (20 + 20) for sin and cos, 12 * 4 for three products and the sum; w and v read once each.
    EXPECT_EQ(lg.cost_analysis(), (kiln::cost{528, 2 * 96, 96, 96}));
}

// Buffer reuse sees through aliases too: the cotangent of sigmoid, ct * (s * (1 - s)), reads ct through
// shaped_like (an alias, no code) and s = sigmoid(x) for the last time, so it is written over s.
// A typed constant read by many operands of one node is a literal in each (never stored), and the plan's
// text and cost still see every fused node of the expression (the walk's scratch holds every edge).
TEST(Stages, ALiteralReadManyTimesKeepsThePlanWhole) {
    Eigen::Vector2d const x(0.5, 2.0);
    auto const f = [](auto const& v) {
        auto const t = kiln::cast<double>(kiln::c<2>);
        auto const last = kiln::sin(kiln::exp(kiln::at<0>(v)) * kiln::at<1>(v));
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return kiln::vector((static_cast<void>(I), t)..., last);
        }(std::make_index_sequence<60>{});
    };
    auto const lo = kiln::jit(f).lower(x);
    std::string const text = lo.as_text();
    EXPECT_EQ(text.find("fused into\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("materialized: t0"), text.rfind("materialized: t")) << text;  // the vector alone
    for (std::size_t at = text.find(" = slice"); at != std::string::npos; at = text.find(" = slice", at + 1))
        EXPECT_NE(text.substr(at, text.find('\n', at) - at).find("fused into %"), std::string::npos) << text;
    using V61 = Eigen::Matrix<double, 61, 1>;
    V61 expected = V61::Constant(2.0);
    expected(60) = std::sin(std::exp(x(0)) * x(1));
    V61 const got = kiln::jit(f)(x);
    EXPECT_EQ(got, expected);
}

TEST(Stages, BufferReuseThroughAnAlias) {
    auto const back = [](auto const& ct, auto const& x) {
        return kiln::vjp([](auto const& v) { return kiln::sigmoid(v); }, x).second(ct);
    };
    MatrixXd const ct = MatrixXd::Random(3, 4), x = MatrixXd::Random(3, 4);
    auto const lo = kiln::lower(back, ct, x);
    std::string const text = lo.as_text();
    EXPECT_TRUE(contains(text, "%4 = shaped_like %0 %3 : f64[3,4]           ; alias of %0, no code")) << text;
    EXPECT_TRUE(contains(text, "%8 = mul %4 %7 : f64[3,4]                   ; materialized: t0, the temporary of %3, reused")) << text;
    EXPECT_TRUE(contains(text, "Eigen assignments: 2, temporaries: 1 (96 B)")) << text;
    Eigen::ArrayXXd const s = 1 / (1 + (-x.array()).exp());
    kiln_test::expect_close(std::get<0>(lo.compile()(ct, x)), MatrixXd(ct.array() * s * (1 - s)));
}

// kiln::spec: arguments without data, as JAX's ShapeDtypeStruct; then compiled and called with data.
TEST(Stages, SpecArguments) {
    auto const f = [](auto const& x, auto const& s) { return std::make_tuple(x * s, kiln::sum(x, kiln::axis<0>)); };
    auto const tr = kiln::trace(f, kiln::spec<double, Eigen::Dynamic, 3>(5), kiln::spec<double>{});
    EXPECT_EQ(tr.as_text(),
              "kiln graph: 2 arguments, 2 parameters, 4 nodes\n"
              "  %0 = param args[0] : f64[5,3]\n"
              "  %1 = param args[1] : f64[]\n"
              "  %2 = mul %0 %1 : f64[5,3]\n"
              "  %3 = sum[axes=(0,)] %0 : f64[1,3]\n"
              "  return %2 %3\n");
    auto const [a, b] = tr.out_info();
    EXPECT_EQ(a, (kiln::array_info{"f64", 2, 5, 3}));
    EXPECT_EQ(b.text(), "f64[1,3]");
    auto const c = tr.lower().compile();
    Eigen::Matrix<double, Eigen::Dynamic, 3> const X = Eigen::Matrix<double, Eigen::Dynamic, 3>::Random(5, 3);
    auto const [y, s] = c(X, 2.0);
    kiln_test::expect_close(y, (2.0 * X).eval());
    kiln_test::expect_close(s, X.colwise().sum().eval());
    // Specs inside pytrees, and their checks.
    EXPECT_EQ(kiln::trace([](auto const& t) { return std::get<0>(t) + std::get<1>(t); },
                          std::make_tuple(kiln::spec<float, 2, 2>{}, kiln::spec<float, 2, 2>{}))
                  .out_info()
                  .text(),
              "f32[2,2]");
    EXPECT_EQ(shape_error_of([] { kiln::spec<double, 3, Eigen::Dynamic>(4, 2); }),
              "kiln: a spec of fixed extents [3,-1] (-1: dynamic) was given the extents [4,2]");
}

// Issue 17: param_map() says which arguments are read, param_reads() how (values, or extents only), and
// both texts say the same. A parameter read for its extents only is checked when a compiled function is
// called; a pruned argument is neither read nor checked.
TEST(Stages, ParametersSayWhatIsReadAndHow) {
    auto const f = [](auto const& a, auto const&, auto const&, auto const& d) { return kiln::sum(kiln::tanh(a) * d); };
    using dyn = kiln::spec<double, Eigen::Dynamic, Eigen::Dynamic>;
    // The gradient with respect to the unused b: zeros of b's shape; only b's extents are read.
    auto const lo = kiln::lower(kiln::grad(f, kiln::argnums<1>), dyn(3, 2), dyn(2, 5), kiln::spec<double, 2, 2>{}, dyn(3, 2));
    static_assert(decltype(lo)::param_map() == std::array<std::size_t, 1>{1});
    static_assert(decltype(lo)::param_reads() == std::array{kiln::param_read::extents});
    EXPECT_TRUE(contains(lo.graph_text(), "(pruned: args[0], args[2], args[3]; extents only: args[1])")) << lo.graph_text();
    EXPECT_TRUE(contains(lo.as_text(), "%0 = param args[1] : f64[2,5]               ; argument, extents only")) << lo.as_text();
    auto const c = lo.compile();
    MatrixXd const b = MatrixXd::Random(2, 5), wrong = MatrixXd::Random(4, 4);
    Eigen::Matrix2d const two = Eigen::Matrix2d::Zero();
    MatrixXd const zeros = c(wrong, b, two, wrong);  // a and d are not read, nor checked
    EXPECT_EQ(zeros, MatrixXd::Zero(2, 5));
    EXPECT_EQ(shape_error_of([&] { c(wrong, wrong, two, wrong); }),
              "kiln: argument 1 (args[1]) was lowered as f64[2,5] and called with f64[4,4]");
    // With respect to a: the forward is needed, a and d are read for their values.
    auto const la = kiln::lower(kiln::grad(f, kiln::argnums<0>), dyn(3, 2), dyn(2, 5), kiln::spec<double, 2, 2>{}, dyn(3, 2));
    static_assert(decltype(la)::param_map() == std::array<std::size_t, 2>{0, 3});
    static_assert(decltype(la)::param_reads() == std::array{kiln::param_read::value, kiln::param_read::value});
    EXPECT_TRUE(contains(la.graph_text(), "kiln graph: 4 arguments, 2 parameters, 11 nodes (pruned: args[1], args[2])\n"))
        << la.graph_text();
    EXPECT_TRUE(contains(la.as_text(), "%1 = param args[3] : f64[3,2]               ; argument, read in place")) << la.as_text();
    // A forward value read for its extents only (size(x) of mean's derivative is not x's elements).
    auto const mean_grad = kiln::trace(kiln::grad([](auto const& x, auto const& y) { return kiln::mean(x) * kiln::sum(y); }, kiln::argnums<0>),
                                       VectorXd::Random(3).eval(), VectorXd::Random(2).eval());
    static_assert(decltype(mean_grad)::param_reads() == std::array{kiln::param_read::extents, kiln::param_read::value});
    EXPECT_TRUE(contains(mean_grad.as_text(), "(extents only: args[0])")) << mean_grad.as_text();
}

// A compiled function: the arguments it was lowered with, less the static ones; other extents throw.
TEST(Stages, CompiledChecksItsArguments) {
    auto const f = [](auto const& x, auto const& t, auto n, auto const& label) {
        static_cast<void>(label);
        return kiln::sum(x * n) + kiln::sum(std::get<0>(t));
    };
    MatrixXd const X = MatrixXd::Random(3, 4);
    auto const t = std::make_tuple(VectorXd::Random(2).eval());
    auto const c = kiln::lower(f, X, t, kiln::static_arg<3>{}, std::string("relu")).compile();
    static_assert(decltype(c)::num_args() == 2);  // the static 3 and the string are baked in
    EXPECT_NEAR(c(X, t), 3 * X.sum() + std::get<0>(t).sum(), 1e-13);
    // Another type of the same dtype and shape is accepted (a Map of the same matrix).
    Eigen::Map<MatrixXd const> const M(X.data(), 3, 4);
    EXPECT_NEAR(c(M, t), 3 * X.sum() + std::get<0>(t).sum(), 1e-13);
    MatrixXd const wide = MatrixXd::Random(5, 4);
    EXPECT_EQ(shape_error_of([&] { c(wide, t); }), "kiln: argument 0 (args[0]) was lowered as f64[3,4] and called with f64[5,4]");
    auto const t3 = std::make_tuple(VectorXd::Random(3).eval());
    EXPECT_EQ(shape_error_of([&] { c(X, t3); }), "kiln: argument 1 (args[1][0]) was lowered as f64[2,1] and called with f64[3,1]");
}

// std::optional arguments: one lowered graph per presence, each compiled for it.
TEST(Stages, OptionalArguments) {
    auto const f = [](auto const& x, auto const& b) {
        if constexpr (kiln::is_none<decltype(b)>) return kiln::sum(x);
        else return kiln::sum(x + b);
    };
    VectorXd const x = VectorXd::Random(4), b = VectorXd::Random(4);
    auto const present = kiln::lower(f, x, std::optional<VectorXd>(b));
    ASSERT_EQ(present.index(), 1u);
    auto const c = std::get<1>(present).compile();
    EXPECT_NEAR(c(x, std::optional<VectorXd>(b)), (x + b).sum(), 1e-13);
    EXPECT_EQ(shape_error_of([&] { c(x, std::optional<VectorXd>()); }),
              "kiln: the std::optional arguments were lowered with presence mask 1 and called with 0 (bit k: the "
              "k-th std::optional, depth-first, is present)");
}

// debug_nans, eager evaluation and the thread pool are compiled in only where KILN_DEBUG_NANS, KILN_EAGER
// and KILN_THREADS are defined (test_env.cpp): here, asking for them throws rather than silently
// evaluating otherwise. A plain environment, pinned or not, evaluates.
TEST(Stages, EnvFeaturesNotCompiledInThrow) {
    auto const f = [](auto const& x) { return kiln::sum(x); };
    VectorXd const x = VectorXd::Random(3);
    auto message = [&](kiln::env e) {
        return kiln_test::error_of<std::logic_error>([&] { kiln::jit(f, e)(x); }, "no logic_error");
    };
    EXPECT_EQ(message(kiln::env{.eager = true}),
              "kiln: env::eager needs KILN_EAGER defined where the graph is compiled (each adds a second evaluation "
              "code path to every graph; docs/stages.md)");
    EXPECT_EQ(message(kiln::env{.device = kiln::thread_pool(2)}).substr(0, 54), "kiln: a thread_pool device needs KILN_THREADS defined ");
    EXPECT_EQ(message(kiln::env{.debug_nans = true}).substr(0, 57), "kiln: env::debug_nans needs KILN_DEBUG_NANS defined where");
    EXPECT_NEAR(kiln::jit(f, kiln::env{})(x), x.sum(), 1e-15);
    kiln::env_guard const guard(kiln::env{.debug_nans = true});
    EXPECT_EQ(message(kiln::env{.eager = true}).substr(0, 34), "kiln: env::eager needs KILN_EAGER ");  // pinned wins
    EXPECT_EQ(kiln_test::error_of<std::logic_error>([&] { kiln::jit(f)(x); }, "no logic_error").substr(0, 21), "kiln: env::debug_nans");
}

}  // namespace
