// Arguments and pytrees (docs/arguments.md): one test per row of the table of argument kinds, outputs as
// pytrees, the parameter paths in as_text() and param_paths(), shape errors inside a pytree, and a call
// with a nested struct of tensors that allocates nothing beyond its outputs.
//
// Allocations are counted twice (tests/count_allocations.hpp): operator new and Eigen's own heap allocations.
#include "count_allocations.hpp"  // first: before any Eigen header

#include <kiln/kiln.hpp>

#include <boost/hana/define_struct.hpp>
#include <boost/hana/tuple.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace {

using Eigen::MatrixXd;
using Eigen::RowVectorXd;
using Eigen::VectorXd;

// The number of graph parameters of f on these arguments.
template <class F, class... Args>
constexpr std::size_t params_of(F const& f, Args const&... args) {
    return decltype(kiln::trace(f, args...))::num_params();
}

// ---------------------------------------------------------------------------------------------------
// Row: Eigen dense objects, fixed or dynamic, bound without a copy.
// ---------------------------------------------------------------------------------------------------
TEST(Arguments, EigenDenseObjects) {
    MatrixXd m = MatrixXd::Random(4, 3);
    Eigen::Matrix<double, 4, 3> fixed = m;
    Eigen::ArrayXXd array = m.array();
    Eigen::Map<MatrixXd const> map(m.data(), 4, 3);
    Eigen::Ref<MatrixXd const> ref(m);
    auto block = m.topLeftCorner(4, 3);
    auto f = [](auto const& a, auto const& b, auto const& c, auto const& d, auto const& e) {
        return kiln::sum(a + b + c + d + e);
    };
    EXPECT_NEAR(kiln::jit(f)(m, fixed, array, map, block), 5 * m.sum(), 1e-12);
    EXPECT_NEAR(kiln::jit(f)(ref, ref, m, m, m), 5 * m.sum(), 1e-12);
    EXPECT_EQ(params_of(f, m, fixed, array, map, block), 5u);
    auto text = kiln::trace(f, m, fixed, array, map, block).as_text();
    EXPECT_NE(text.find("%1 = param args[1] : f64[4,3]"), std::string::npos) << text;
}

// ---------------------------------------------------------------------------------------------------
// Rows: run-time scalars (floating, integer) and bool.
// ---------------------------------------------------------------------------------------------------
TEST(Arguments, RuntimeScalarsAreTracedScalars) {
    MatrixXd x = MatrixXd::Random(2, 2);
    auto f = [](auto const& m, auto const& a, auto const& b, auto const& n, auto const& l) {
        return kiln::sum(m * a) * b + n * l;
    };
    double const got = kiln::jit(f)(x, 2.0, 0.5f, 3, 4L);
    EXPECT_NEAR(got, x.sum() * 2.0 * 0.5 + 12, 1e-12);
    auto tr = kiln::trace(f, x, 2.0, 0.5f, 3, 4L);
    EXPECT_EQ(tr.num_params(), 5u);
    std::string const text = tr.as_text();
    EXPECT_NE(text.find("%1 = param args[1] : f64[]"), std::string::npos) << text;
    EXPECT_NE(text.find("%2 = param args[2] : f32[]"), std::string::npos) << text;
    EXPECT_NE(text.find("%3 = param args[3] : i32[]"), std::string::npos) << text;
    EXPECT_NE(text.find("%4 = param args[4] : i64[]"), std::string::npos) << text;
}

TEST(Arguments, RuntimeBoolIsATracedBooleanUsableInWhere) {
    MatrixXd x = MatrixXd::Random(3, 2);
    auto f = [](auto const& m, auto const& flag) { return kiln::where(flag, m, -m); };
    MatrixXd const on = kiln::jit(f)(x, true), off = kiln::jit(f)(x, false);
    EXPECT_EQ(on, x);
    EXPECT_EQ(off, (-x).eval());
    EXPECT_NE(kiln::trace(f, x, true).as_text().find("%1 = param args[1] : bool[]"), std::string::npos);
    // One graph for both values: the bool is data, not structure.
    static_assert(std::is_same_v<decltype(kiln::trace(f, x, true)), decltype(kiln::trace(f, x, false))>);
}

// ---------------------------------------------------------------------------------------------------
// Row: kiln::static_arg<V> and std::integral_constant: the value itself, no parameter.
// ---------------------------------------------------------------------------------------------------
enum class activation { relu, tanh };

TEST(Arguments, StaticArgumentsAreConstantsTheGraphMayDependOn) {
    MatrixXd x = MatrixXd::Random(3, 3);
    // By value, the parameter is usable in `if constexpr`; a number is also a constant operand.
    auto power = [](auto const& m, auto n) {
        static_assert(std::is_same_v<decltype(n), kiln::static_arg<2>> ||
                      std::is_same_v<decltype(n), kiln::static_arg<3>>);
        if constexpr (n == 2) return kiln::sum(m * m) * n;
        else return kiln::sum(m * m * m) * n;
    };
    EXPECT_NEAR(kiln::jit(power)(x, kiln::static_arg<2>{}), 2 * x.array().square().sum(), 1e-12);
    EXPECT_NEAR(kiln::jit(power)(x, kiln::static_arg<3>{}), 3 * x.array().cube().sum(), 1e-12);
    auto two = kiln::trace(power, x, kiln::static_arg<2>{});
    EXPECT_EQ(two.num_params(), 1u);
    EXPECT_EQ(two.num_args(), 2u);
    EXPECT_NE(two.as_text().find("constant 2 : i32[]"), std::string::npos) << two.as_text();
    EXPECT_NE(decltype(two)::num_nodes(), decltype(kiln::trace(power, x, kiln::static_arg<3>{}))::num_nodes());

    // A string literal, an enum, a double; through a reference, kiln::value_of.
    auto act = [](auto const& m, auto const& name, auto const& which, auto scale) {
        static_assert(kiln::value_of<decltype(name)> == std::string_view("shifted"));
        auto const y = kiln::c<kiln::value_of<decltype(scale)>> * m;
        if constexpr (kiln::value_of<decltype(which)> == activation::tanh) return kiln::sum(kiln::tanh(y));
        else return kiln::sum(kiln::maximum(y, kiln::c<0>));
    };
    double const t = kiln::jit(act)(x, kiln::static_arg<"shifted">{}, kiln::static_arg<activation::tanh>{},
                                    kiln::static_arg<0.5>{});
    EXPECT_NEAR(t, (0.5 * x.array()).tanh().sum(), 1e-12);
    double const r = kiln::jit(act)(x, kiln::static_arg<"shifted">{}, kiln::static_arg<activation::relu>{},
                                    kiln::static_arg<0.5>{});
    EXPECT_NEAR(r, (0.5 * x.array()).max(0.0).sum(), 1e-12);
    static_assert(kiln::static_arg<"relu">{} == "relu" && !(kiln::static_arg<"relu">{} == "tanh"));

    // std::integral_constant likewise.
    auto scaled = [](auto const& m, auto k) {
        if constexpr (k == 0) return kiln::sum(m);
        else return kiln::sum(m) * k;
    };
    EXPECT_NEAR(kiln::jit(scaled)(x, std::integral_constant<int, 4>{}), 4 * x.sum(), 1e-12);
    EXPECT_EQ(params_of(scaled, x, std::integral_constant<int, 0>{}), 1u);
}

// ---------------------------------------------------------------------------------------------------
// Row: strings and enums: untraced, no parameter; f receives kiln::untraced<T>.
// ---------------------------------------------------------------------------------------------------
TEST(Arguments, StringsAndEnumsAreUntraced) {
    MatrixXd x = MatrixXd::Random(2, 3);
    auto f = [](auto const& m, auto const& label, auto const& view, auto const& cstr, auto const& mode) {
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(label)>, kiln::untraced<std::string>>);
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(view)>, kiln::untraced<std::string_view>>);
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(cstr)>, kiln::untraced<char const*>>);
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(mode)>, kiln::untraced<activation>>);
        return kiln::sum(m);
    };
    std::string const label = "train";
    char const* cstr = "c";
    EXPECT_NEAR(kiln::jit(f)(x, label, std::string_view("v"), cstr, activation::relu), x.sum(), 1e-12);
    // A string literal is a char array: the same as char const*.
    EXPECT_NEAR(kiln::jit(f)(x, label, std::string_view("v"), "literal", activation::tanh), x.sum(), 1e-12);
    auto tr = kiln::trace(f, x, label, std::string_view("v"), cstr, activation::relu);
    EXPECT_EQ(tr.num_params(), 1u);
    EXPECT_EQ(tr.as_text().rfind("kiln graph: 5 arguments, 1 parameters, 2 nodes (pruned: args[1], args[2], args[3], args[4])", 0), 0u)
        << tr.as_text();
    // Different run-time strings: the same graph (the type decides).
    static_assert(std::is_same_v<decltype(tr), decltype(kiln::trace(f, x, std::string("eval"), std::string_view(),
                                                                  cstr, activation::tanh))>);
}

// ---------------------------------------------------------------------------------------------------
// Rows: std::optional (present and absent, each graph pruned on its own), std::nullopt and kiln::none.
// ---------------------------------------------------------------------------------------------------
auto const optional_bias = [](auto const& x, auto const& b) {
    if constexpr (kiln::is_none<decltype(b)>) return kiln::sum(kiln::tanh(x));
    else return kiln::sum(kiln::tanh(x + b));
};

TEST(Arguments, OptionalPresentAndAbsent) {
    MatrixXd x = MatrixXd::Random(3, 4), bias = MatrixXd::Random(3, 4);
    std::optional<MatrixXd> const present = bias, absent;
    EXPECT_NEAR(kiln::jit(optional_bias)(x, present), (x + bias).array().tanh().sum(), 1e-12);
    EXPECT_NEAR(kiln::jit(optional_bias)(x, absent), x.array().tanh().sum(), 1e-12);

    // Two graphs, both instantiated: a std::variant of their traces, holding the selected one.
    auto tr = kiln::trace(optional_bias, x, present);
    using V = decltype(tr);
    static_assert(std::variant_size_v<V> == 2);
    static_assert(std::variant_alternative_t<0, V>::num_params() == 1);  // b absent: x only
    static_assert(std::variant_alternative_t<1, V>::num_params() == 2);
    static_assert(std::variant_alternative_t<0, V>::num_nodes() == 3);
    static_assert(std::variant_alternative_t<1, V>::num_nodes() == 5);
    EXPECT_EQ(tr.index(), 1u);
    EXPECT_EQ(kiln::trace(optional_bias, x, absent).index(), 0u);
    std::string const text = std::visit([](auto const& t) { return t.as_text(); }, tr);
    EXPECT_NE(text.find("%1 = param args[1] : f64[3,4]"), std::string::npos) << text;
    std::string const absent_text = std::visit([](auto const& t) { return t.as_text(); }, kiln::trace(optional_bias, x, absent));
    EXPECT_EQ(absent_text.rfind("kiln graph: 2 arguments, 1 parameters, 3 nodes (pruned: args[1])", 0), 0u) << absent_text;

    // Statically absent: std::nullopt and kiln::none are one graph, with no parameter for b.
    EXPECT_NEAR(kiln::jit(optional_bias)(x, std::nullopt), x.array().tanh().sum(), 1e-12);
    EXPECT_NEAR(kiln::jit(optional_bias)(x, kiln::none), x.array().tanh().sum(), 1e-12);
    EXPECT_EQ(params_of(optional_bias, x, std::nullopt), 1u);
    EXPECT_EQ(params_of(optional_bias, x, kiln::none), 1u);
}

// (A Hana struct: Boost.PFR's method of counting a plain aggregate's fields cannot count a std::optional of
// an Eigen object, see docs/arguments.md.)
struct maybe_layer {
    BOOST_HANA_DEFINE_STRUCT(maybe_layer, (MatrixXd, w), (std::optional<RowVectorXd>, b), (std::optional<double>, scale));
};

TEST(Arguments, OptionalsInsideAPytreeGiveOneGraphPerCombination) {
    MatrixXd x = MatrixXd::Random(5, 3);
    maybe_layer layer{MatrixXd::Random(3, 2), RowVectorXd::Random(2), std::nullopt};
    auto f = [](auto const& in, auto const& l) {
        auto const& w = kiln::get<"w">(l);
        auto const& b = kiln::get<"b">(l);
        auto const& scale = kiln::get<"scale">(l);
        auto const h = [&] {
            if constexpr (kiln::is_none<decltype(b)>) return kiln::matmul(in, w);
            else return kiln::matmul(in, w) + b;
        }();
        if constexpr (kiln::is_none<decltype(scale)>) return kiln::sum(kiln::tanh(h));
        else return kiln::sum(kiln::tanh(h)) * scale;
    };
    auto expected = [&](maybe_layer const& l) {
        MatrixXd h = x * l.w;
        if (l.b) h.rowwise() += *l.b;
        return h.array().tanh().sum() * l.scale.value_or(1.0);
    };
    EXPECT_NEAR(kiln::jit(f)(x, layer), expected(layer), 1e-12);
    layer.scale = 2.0;
    EXPECT_NEAR(kiln::jit(f)(x, layer), expected(layer), 1e-12);
    layer.b.reset();
    EXPECT_NEAR(kiln::jit(f)(x, layer), expected(layer), 1e-12);
    layer.scale.reset();
    EXPECT_NEAR(kiln::jit(f)(x, layer), expected(layer), 1e-12);

    // Bit k of the variant's index: the k-th optional, depth first, is present (b is bit 0, scale bit 1).
    using V = decltype(kiln::trace(f, x, layer));
    static_assert(std::variant_size_v<V> == 4);
    static_assert(std::variant_alternative_t<0, V>::num_params() == 2);
    static_assert(std::variant_alternative_t<1, V>::num_params() == 3);
    static_assert(std::variant_alternative_t<2, V>::num_params() == 3);
    static_assert(std::variant_alternative_t<3, V>::num_params() == 4);
    layer.scale = 1.5;
    auto const tr = kiln::trace(f, x, layer);
    EXPECT_EQ(tr.index(), 2u);
    auto const paths = std::get<2>(tr).param_paths();
    EXPECT_EQ(paths[0], "args[0]");
    EXPECT_EQ(paths[1], "args[1].w");
    EXPECT_EQ(paths[2], "args[1].scale");  // an optional's value has the optional's path
}

// ---------------------------------------------------------------------------------------------------
// Row: std::tuple, std::pair, std::array, boost::hana::tuple: a std::tuple of converted elements.
// ---------------------------------------------------------------------------------------------------
TEST(Arguments, TupleLikeArguments) {
    MatrixXd a = MatrixXd::Random(2, 2), b = MatrixXd::Random(2, 2);
    auto f = [](auto const& t, auto const& p, auto const& arr, auto const& h) {
        auto const& [t0, t1] = t;
        auto const& [p0, p1] = p;
        auto const& [a0, a1, a2] = arr;
        static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(h)>> == 2);
        return kiln::sum(t0 * t1 + p0) * p1 + kiln::sum(a0 - a1 + a2) + kiln::sum(std::get<0>(h)) * std::get<1>(h);
    };
    std::tuple<MatrixXd, MatrixXd> const t{a, b};
    std::pair<MatrixXd, double> const p{b, 3.0};
    std::array<MatrixXd, 3> const arr{a, b, a};
    auto const h = boost::hana::make_tuple(b, 2);
    double const want = (a.array() * b.array() + b.array()).sum() * 3.0 + (a - b + a).sum() + b.sum() * 2;
    EXPECT_NEAR(kiln::jit(f)(t, p, arr, h), want, 1e-12);
    // References inside a tuple (std::tie, std::forward_as_tuple) bind the same objects.
    EXPECT_NEAR(kiln::jit(f)(std::tie(a, b), p, arr, h), want, 1e-12);
    auto tr = kiln::trace(f, t, p, arr, h);
    EXPECT_EQ(tr.num_params(), 9u);
    EXPECT_EQ(tr.param_map(), (std::array<std::size_t, 9>{0, 0, 1, 1, 2, 2, 2, 3, 3}));
    EXPECT_EQ(tr.param_paths()[3], "args[1][1]");
    EXPECT_EQ(tr.param_paths()[6], "args[2][2]");
    EXPECT_EQ(tr.param_paths()[8], "args[3][1]");
}

// A jitted function called inside a trace with a tuple of tracers inlines, like one called with tracers.
TEST(Arguments, JittedFunctionTakingATupleInlines) {
    MatrixXd a = MatrixXd::Random(3, 3), b = MatrixXd::Random(3, 3);
    auto inner = kiln::jit([](auto const& t) { return std::get<0>(t) * std::get<1>(t); });
    auto outer = [inner](auto const& x, auto const& y) { return kiln::sum(inner(std::make_tuple(x, y)) + x); };
    EXPECT_NEAR(kiln::jit(outer)(a, b), (a.array() * b.array() + a.array()).sum(), 1e-12);
    EXPECT_EQ(decltype(kiln::trace(outer, a, b))::num_nodes(), 5u);  // x, y, mul, add, sum
}

// ---------------------------------------------------------------------------------------------------
// Row: plain aggregates (Boost.PFR): kiln::fields, by structured binding and kiln::get<I>.
// ---------------------------------------------------------------------------------------------------
struct dense_layer {
    MatrixXd w;
    RowVectorXd b;
    double scale;
};

TEST(Arguments, PlainAggregates) {
    MatrixXd x = MatrixXd::Random(4, 3);
    dense_layer const layer{MatrixXd::Random(3, 2), RowVectorXd::Random(2), 0.5};
    auto f = [](auto const& in, auto const& l) {
        static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(l)>> == 3);
        auto const& [w, b, scale] = l;
        return kiln::sum(kiln::tanh(kiln::matmul(in, w) + b)) * scale + kiln::sum(kiln::get<1>(l));
    };
    MatrixXd h = x * layer.w;
    h.rowwise() += layer.b;
    EXPECT_NEAR(kiln::jit(f)(x, layer), h.array().tanh().sum() * 0.5 + layer.b.sum(), 1e-12);
    auto tr = kiln::trace(f, x, layer);
    EXPECT_EQ(tr.param_paths(), (std::array<std::string_view, 4>{"args[0]", "args[1].<0>", "args[1].<1>", "args[1].<2>"}));
    EXPECT_NE(tr.as_text().find("%2 = param args[1].<1> : f64[1,2]"), std::string::npos) << tr.as_text();
}

// ---------------------------------------------------------------------------------------------------
// Row: Hana structs and boost::hana::map with compile-time string keys: members by name.
// ---------------------------------------------------------------------------------------------------
struct named_layer {
    BOOST_HANA_DEFINE_STRUCT(named_layer, (MatrixXd, w), (RowVectorXd, b));
};

TEST(Arguments, HanaStructsAndMaps) {
    MatrixXd x = MatrixXd::Random(4, 3);
    named_layer const layer{MatrixXd::Random(3, 2), RowVectorXd::Random(2)};
    auto f = [](auto const& in, auto const& l) {
        return kiln::sum(kiln::matmul(in, kiln::get<"w">(l)) + l[BOOST_HANA_STRING("b")]);
    };
    MatrixXd h = x * layer.w;
    h.rowwise() += layer.b;
    EXPECT_NEAR(kiln::jit(f)(x, layer), h.sum(), 1e-12);
    auto tr = kiln::trace(f, x, layer);
    EXPECT_NE(tr.as_text().find("%1 = param args[1].w : f64[3,2]"), std::string::npos) << tr.as_text();
    EXPECT_EQ(tr.param_paths()[2], "args[1].b");

    // JAX's dict: a boost::hana::map; std::cref values bind the caller's objects.
    auto params = boost::hana::make_map(boost::hana::make_pair(BOOST_HANA_STRING("w"), std::cref(layer.w)),
                                        boost::hana::make_pair(BOOST_HANA_STRING("b"), std::cref(layer.b)));
    EXPECT_NEAR(kiln::jit(f)(x, params), h.sum(), 1e-12);
    EXPECT_EQ(kiln::trace(f, x, params).param_paths()[1], "args[1].w");
}

// ---------------------------------------------------------------------------------------------------
// Row: nesting: a struct of tuples of tensors, inside a tuple, with a Hana struct inside.
// ---------------------------------------------------------------------------------------------------
struct block {
    std::tuple<MatrixXd, std::pair<RowVectorXd, double>> affine;
    named_layer head;
    std::array<VectorXd, 2> taps;
};

TEST(Arguments, NestedPytrees) {
    MatrixXd x = MatrixXd::Random(4, 3);
    block const blk{{MatrixXd::Random(3, 3), {RowVectorXd::Random(3), 0.25}},
                    {MatrixXd::Random(3, 2), RowVectorXd::Random(2)},
                    {VectorXd::Random(4), VectorXd::Random(4)}};
    auto f = [](auto const& in, auto const& args) {
        auto const& [b, bias] = args;
        auto const& [affine, head, taps] = b;
        auto const& [w, shift] = affine;
        auto const h = kiln::tanh(kiln::matmul(in, w) + std::get<0>(shift)) * std::get<1>(shift);
        auto const y = kiln::matmul(h, kiln::get<"w">(head)) + kiln::get<"b">(head) + bias;
        return kiln::sum(y) + kiln::sum(std::get<0>(taps) * std::get<1>(taps));
    };
    double const bias = 0.125;
    MatrixXd h = x * std::get<0>(blk.affine);
    h.rowwise() += std::get<1>(blk.affine).first;
    h = (h.array().tanh() * 0.25).matrix();
    MatrixXd y = h * blk.head.w;
    y.rowwise() += blk.head.b;
    double const want = (y.array() + bias).sum() + blk.taps[0].dot(blk.taps[1]);
    EXPECT_NEAR(kiln::jit(f)(x, std::tie(blk, bias)), want, 1e-12);
    auto tr = kiln::trace(f, x, std::tie(blk, bias));
    EXPECT_EQ(tr.param_paths(),
              (std::array<std::string_view, 9>{"args[0]", "args[1][0].<0>[0]", "args[1][0].<0>[1][0]",
                                               "args[1][0].<0>[1][1]", "args[1][0].<1>.w", "args[1][0].<1>.b",
                                               "args[1][0].<2>[0]", "args[1][0].<2>[1]", "args[1][1]"}));
    EXPECT_EQ(tr.param_map(), (std::array<std::size_t, 9>{0, 1, 1, 1, 1, 1, 1, 1, 1}));
}

// A shape mismatch inside a pytree names the leaf's path.
TEST(Arguments, ShapeErrorsNameThePathInsideThePytree) {
    MatrixXd x = MatrixXd::Random(4, 3);
    dense_layer const bad{MatrixXd::Random(2, 2), RowVectorXd::Random(2), 1.0};
    auto f = [](auto const& in, auto const& l) { return kiln::sum(kiln::matmul(in, kiln::get<0>(l))); };
    try {
        static_cast<void>(kiln::jit(f)(x, bad));
        ADD_FAILURE() << "no shape_error";
    } catch (kiln::shape_error const& e) {
        EXPECT_STREQ(e.what(),
                     "kiln: shape mismatch in matmul: argument 1 .<0> has shape f64[2,2] but [3,*] was expected "
                     "(%2 = argument 0 f64[4,3], argument 1 .<0> f64[2,2])");
    }
    named_layer const named{MatrixXd::Random(3, 2), RowVectorXd::Random(5)};
    auto g = [](auto const& in, auto const& t) {
        auto const& l = std::get<1>(t);
        return kiln::sum(kiln::matmul(in, kiln::get<"w">(l)) + kiln::get<"b">(l));
    };
    try {
        static_cast<void>(kiln::jit(g)(x, std::make_tuple(0, std::cref(named))));
        ADD_FAILURE() << "no shape_error";
    } catch (kiln::shape_error const& e) {
        EXPECT_NE(std::string(e.what()).find("argument 1 [1].b has shape f64[1,5]"), std::string::npos) << e.what();
    }
}

// ---------------------------------------------------------------------------------------------------
// Outputs are pytrees too.
// ---------------------------------------------------------------------------------------------------
TEST(Outputs, TuplesPairsArraysNested) {
    MatrixXd x = MatrixXd::Random(3, 2);
    auto f = [](auto const& m) {
        auto const s = kiln::sum(m);
        return std::make_pair(s, std::make_tuple(m * kiln::c<2>, std::array{s, s}, std::make_pair(kiln::exp(m), s)));
    };
    auto const r = kiln::jit(f)(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>,
                                 std::pair<double, std::tuple<MatrixXd, std::array<double, 2>, std::pair<MatrixXd, double>>>>);
    EXPECT_NEAR(r.first, x.sum(), 1e-12);
    auto const& [twice, both, inner] = r.second;
    EXPECT_EQ(twice, (2 * x).eval());
    EXPECT_EQ(both[0], r.first);
    EXPECT_EQ(both[1], r.first);
    EXPECT_TRUE(inner.first.isApprox(x.array().exp().matrix(), 1e-15));
    EXPECT_EQ(inner.second, r.first);
    auto tr = kiln::trace(f, x);
    EXPECT_NE(tr.as_text().find("return %1 %3 %1 %1 %4 %1"), std::string::npos) << tr.as_text();
}

// ---------------------------------------------------------------------------------------------------
// Cost: binding walks the pytree by reference. A call with a nested struct of dynamic tensors and a
// scalar output allocates nothing at all; with one matrix output, exactly that matrix.
// ---------------------------------------------------------------------------------------------------
struct inner_pair {
    MatrixXd u, v;
};
struct nested_params {
    inner_pair a;
    std::tuple<MatrixXd, std::pair<MatrixXd, double>> b;
    std::array<MatrixXd, 2> c;
    named_layer h;
};

// x, a nested struct (a PFR aggregate holding a tuple, a pair, an array and a Hana struct), an optional.
auto const nested_loss = [](auto const& x, auto const& p, auto const& shift) {
    auto const& [a, b, c, h] = p;
    auto const& [u, v] = a;
    auto const& [m, rest] = b;
    auto const& [n, scale] = rest;
    auto const& [c0, c1] = c;
    auto const main = kiln::sum(x * u + v) + kiln::sum(m * n) * scale + kiln::sum(kiln::tanh(c0 - c1)) +
                      kiln::sum(kiln::get<"w">(h)) * kiln::sum(kiln::get<"b">(h));
    if constexpr (kiln::is_none<decltype(shift)>) return main;
    else return main + kiln::sum(shift);
};

TEST(Cost, NoAllocationBeyondTheOutputs) {
    MatrixXd x = MatrixXd::Random(16, 16);
    auto r = [] { return MatrixXd::Random(16, 16).eval(); };
    nested_params const p{{r(), r()}, {r(), {r(), 0.5}}, {r(), r()}, {r(), RowVectorXd::Random(16)}};
    std::optional<MatrixXd> const shift = r();
    double const want = (x.array() * p.a.u.array() + p.a.v.array()).sum() +
                        (std::get<0>(p.b).array() * std::get<1>(p.b).first.array()).sum() * 0.5 +
                        (p.c[0] - p.c[1]).array().tanh().sum() + p.h.w.sum() * p.h.b.sum() + shift->sum();
    auto const jitted = kiln::jit(nested_loss);
    double got = jitted(x, p, shift);  // warm-up: nothing static left to initialize
    EXPECT_NEAR(got, want, 1e-12);

    auto const counted = kiln_test::allocations_in([&] { got = jitted(x, p, shift); });
    EXPECT_TRUE(counted.counter_works);
    EXPECT_NEAR(got, want, 1e-12);
    EXPECT_EQ(counted.eigen, 0u);
    EXPECT_EQ(counted.news, 0u);

    // One matrix output: one allocation, the output's.
    auto const matrix_out = kiln::jit([](auto const& in, auto const& q) {
        auto const& [a, b, c, h] = q;
        return kiln::get<0>(a) * in + std::get<0>(b) - std::get<1>(c);
    });
    MatrixXd warm = matrix_out(x, p);
    MatrixXd out;
    EXPECT_EQ(kiln_test::allocations_in([&] { out = matrix_out(x, p); }).eigen, 1u);
    EXPECT_TRUE(out.isApprox((p.a.u.array() * x.array() + std::get<0>(p.b).array() - p.c[1].array()).matrix()));
    EXPECT_EQ(warm, out);
}

}  // namespace
