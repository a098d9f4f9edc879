// The argument declarations of kiln/torch.hpp: for each, the operator schema's type, the C++ parameter of
// the kernel, the checks of what Python passed (each failure a Python exception naming the argument), and
// the binding of the value to what the kiln function receives: tensors as Eigen::Maps over their storage.
#ifndef KILN_DETAIL_TORCH_BIND_HPP
#define KILN_DETAIL_TORCH_BIND_HPP

// PyTorch 1.13's c10::Dict iterators derive from std::iterator, deprecated since C++17: clang warns where
// kiln instantiates them (as a dict argument's keys are checked), though the code is PyTorch's.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <torch/library.h>
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>  // c10::Dict, complete only after c10::IValue
#include <c10/util/Exception.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::detail::torch_bridge {

// What one call has learnt from its arguments so far, and how to name them in an error.
struct call_state {
    std::string const* op = nullptr;     // the operator's name
    std::string const* names = nullptr;  // the arguments' names, in schema order
    c10::ScalarType dtype = c10::ScalarType::Undefined;  // the floating dtype, from the first floating tensor
    std::string dtype_from;                               // that tensor's name
    std::uint64_t used = 0;                 // bit i: the graph reads argument i (the others are pruned)
    std::vector<std::size_t> offsets;       // argument i's tensors are leaves [offsets[i], offsets[i + 1])
};

[[noreturn, gnu::cold]] inline void type_error(call_state const& s, std::string const& where, std::string const& what) {
    C10_THROW_ERROR(TypeError, "kiln op '" + *s.op + "': argument '" + where + "': " + what);
}
[[noreturn, gnu::cold]] inline void value_error(call_state const& s, std::string const& where, std::string const& what) {
    C10_THROW_ERROR(ValueError, "kiln op '" + *s.op + "': argument '" + where + "': " + what);
}

inline std::string sizes_text(at::Tensor const& t) {
    std::string s = "(";
    for (std::int64_t d = 0; d < t.dim(); ++d) s.append(d ? ", " : "").append(std::to_string(t.size(d)));
    return s.append(t.dim() == 1 ? ",)" : ")");
}
// PyTorch's names: float64, float32, int64, ...
inline std::string dtype_text(c10::ScalarType t) {
    switch (t) {
        case c10::ScalarType::Double: return "float64";
        case c10::ScalarType::Float: return "float32";
        case c10::ScalarType::Half: return "float16";
        case c10::ScalarType::BFloat16: return "bfloat16";
        case c10::ScalarType::Long: return "int64";
        case c10::ScalarType::Int: return "int32";
        case c10::ScalarType::Short: return "int16";
        case c10::ScalarType::Char: return "int8";
        case c10::ScalarType::Byte: return "uint8";
        case c10::ScalarType::Bool: return "bool";
        case c10::ScalarType::ComplexFloat: return "complex64";
        case c10::ScalarType::ComplexDouble: return "complex128";
        default: return c10::toString(t);
    }
}
inline std::string extent_text(int e) { return e == Eigen::Dynamic ? "*" : std::to_string(e); }

template <class T>
inline constexpr c10::ScalarType scalar_type_of = c10::CppTypeToScalarType<T>::value;

// A declared tensor of rank Rank (0, 1, 2) with fixed extents R x C (Eigen::Dynamic: any) and element E.
template <int Rank, int R, int C, class E>
struct tensor_decl {
    using param = at::Tensor const&;
    using owned = at::Tensor;
    static constexpr bool is_tensor = true;
    static constexpr bool is_floating = std::is_same_v<E, kiln::torch::floating>;
    // The call's floating dtype, or a fixed float or double: differentiable unless declared nondiff.
    static constexpr bool differentiable = is_floating || std::is_floating_point_v<E>;
    static constexpr bool is_nondiff = false;
    static std::string schema() { return "Tensor"; }
    static owned own(param t, call_state const&, std::string const&) { return t; }

    template <class T>
    using elem = std::conditional_t<is_floating, T, E>;
    // Row-major, as PyTorch lays out a matrix, except a column (Eigen has no row-major column).
    template <class T>
    using eigen = Eigen::Matrix<elem<T>, R, C, (Rank == 2 && C != 1) ? Eigen::RowMajor : Eigen::ColMajor>;
    template <class T>
    using map = Eigen::Map<eigen<T> const, 0, Eigen::OuterStride<>>;
    // What f receives (for the floating dtype T).
    template <class T>
    using bound = std::conditional_t<Rank == 0, elem<T>, map<T>>;

    static std::string shape_text() {
        if constexpr (Rank == 0) return "()";
        else if constexpr (Rank == 1) return "(" + extent_text(R) + ",)";
        else return "(" + extent_text(R) + ", " + extent_text(C) + ")";
    }

    static void check(call_state& s, at::Tensor const& t, std::string const& where, bool nondiff) {
        if (!t.defined()) value_error(s, where, "expected a tensor, got an undefined tensor");
        if (t.device().type() != c10::DeviceType::CPU)
            type_error(s, where, "expected a CPU tensor, got a tensor on " + t.device().str());
        if (t.layout() != c10::Layout::Strided)
            type_error(s, where, std::string("expected a dense (strided) tensor, got a ") +
                                     (t.is_sparse() ? "sparse" : t.is_mkldnn() ? "MKL-DNN" : "non-strided") + " tensor");
        auto const dt = t.scalar_type();
        if constexpr (is_floating) {
            if (dt != c10::ScalarType::Float && dt != c10::ScalarType::Double)
                type_error(s, where, "expected a float32 or float64 tensor, got " + dtype_text(dt));
            if (s.dtype == c10::ScalarType::Undefined) {
                s.dtype = dt;
                s.dtype_from = where;
            } else if (dt != s.dtype) {
                type_error(s, where, "expected " + dtype_text(s.dtype) + ", the dtype of '" + s.dtype_from +
                                         "' (every floating tensor of a call has one dtype; nothing is converted), got " + dtype_text(dt));
            }
        } else if (dt != scalar_type_of<E>) {
            type_error(s, where, "expected a " + dtype_text(scalar_type_of<E>) + " tensor, got " + dtype_text(dt));
        }
        if (t.dim() != Rank)
            value_error(s, where, "expected a tensor of rank " + std::to_string(Rank) + " " + shape_text() + ", got rank " +
                                      std::to_string(t.dim()) + " " + sizes_text(t));
        bool fits = true;
        if constexpr (Rank >= 1 && R != Eigen::Dynamic) fits = fits && t.size(0) == R;
        if constexpr (Rank == 2 && C != Eigen::Dynamic) fits = fits && t.size(1) == C;
        if (!fits) value_error(s, where, "expected shape " + shape_text() + ", got " + sizes_text(t));
        if (nondiff && t.requires_grad() && at::GradMode::is_enabled())
            type_error(s, where, "declared kiln::torch::nondiff (its gradient is never computed), but it requires a gradient; "
                                 "pass it detached (.detach()) or declare it differentiable");
    }

    // Calls k with what f receives: an Eigen::Map over t's storage when its layout allows (row-major rows
    // with any row stride; a column or vector with unit stride), else over one contiguous copy.
    template <class T, class K>
    static void bind(at::Tensor const& t, K&& k) {
        using V = elem<T>;
        if constexpr (Rank == 0) {
            k(*static_cast<V const*>(t.data_ptr()));
        } else {
            auto const rows = t.size(0);
            auto const cols = Rank == 2 ? t.size(1) : std::int64_t{1};
            bool mapped;
            std::int64_t outer;
            if constexpr (Rank == 2 && C != 1) {  // row-major: unit stride along a row, rows apart by stride(0)
                mapped = (cols <= 1 || t.stride(1) == 1) && (rows <= 1 || t.stride(0) >= cols);
                outer = rows <= 1 ? cols : t.stride(0);
            } else {  // one column: unit stride down it
                mapped = rows <= 1 || t.stride(0) == 1;
                outer = rows;
            }
            at::Tensor const contiguous = mapped ? at::Tensor() : t.contiguous();
            at::Tensor const& source = mapped ? t : contiguous;
            if (!mapped) outer = (Rank == 2 && C != 1) ? cols : rows;
            k(map<T>(static_cast<V const*>(source.data_ptr()), rows, cols, Eigen::OuterStride<>(std::max<std::int64_t>(outer, 1))));
        }
    }

    // For an argument the graph does not use (pruned): a stand-in of the same type, never read.
    template <class T, class K>
    static void bind_unused(at::Tensor const&, K&& k) {
        if constexpr (Rank == 0) k(elem<T>{});
        else k(map<T>(nullptr, R == Eigen::Dynamic ? 0 : R, C == Eigen::Dynamic ? 0 : C, Eigen::OuterStride<>(1)));
    }
    template <class K>
    static void select(call_state&, at::Tensor const&, std::string const&, K&& k) {
        k(std::type_identity<bound<double>>{});
    }

    static void collect(at::Tensor const& t, std::vector<at::Tensor>& leaves) { leaves.push_back(t); }

    // Writes the gradient g (an Eigen matrix or a scalar) into a new tensor shaped like the input leaf.
    template <class G>
    static void scatter(G const& g, std::vector<at::Tensor> const& leaves, std::size_t& pos, std::vector<at::Tensor>& out) {
        at::Tensor const& x = leaves[pos];
        at::Tensor gt = at::empty(x.sizes(), x.options().requires_grad(false));
        if constexpr (std::is_arithmetic_v<G>) {
            *static_cast<G*>(gt.data_ptr()) = g;
        } else {
            using V = typename G::Scalar;
            auto const rows = Rank >= 1 ? x.size(0) : 1;
            auto const cols = Rank == 2 ? x.size(1) : 1;
            Eigen::Map<Eigen::Matrix<V, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(static_cast<V*>(gt.data_ptr()), rows, cols) = g;
        }
        out[pos++] = std::move(gt);
    }
};

template <class D>
struct decl {
    static_assert(detail::fails<D>,
                  "kiln: this is not an argument declaration of kiln::torch::def; declare kiln::torch::matrix<>, vector<>, "
                  "scalar<>, list<D, N>, dict<D, \"key\"...>, nondiff<D>, choice<\"mode\"...>, std::optional<D>, double, "
                  "std::int64_t, bool or std::string (docs/torch.md)");
};
template <int R, int C, class E>
struct decl<kiln::torch::matrix<R, C, E>> : tensor_decl<2, R, C, E> {};
template <int N, class E>
struct decl<kiln::torch::vector<N, E>> : tensor_decl<1, N, 1, E> {};
template <class E>
struct decl<kiln::torch::scalar<E>> : tensor_decl<0, 1, 1, E> {};

template <class D>
concept tensor_declaration = decl<D>::is_tensor;

// Tensor?: absent (None) gives f kiln::none.
template <class D>
struct decl<std::optional<D>> {
    static_assert(tensor_declaration<D>, "kiln: std::optional<D> in kiln::torch::def takes a tensor declaration "
                                         "(matrix<>, vector<>, scalar<>)");
    using base = decl<D>;
    using param = c10::optional<at::Tensor> const&;
    using owned = c10::optional<at::Tensor>;
    static constexpr bool differentiable = base::differentiable;
    static constexpr bool is_nondiff = base::is_nondiff;
    static constexpr bool is_tensor = false;
    static std::string schema() { return "Tensor?"; }
    template <class T>
    using bound = typename base::template bound<T>;  // when present
    static owned own(param t, call_state const&, std::string const&) { return t; }
    static bool present(owned const& t) { return t.has_value() && t->defined(); }
    static void check(call_state& s, owned const& t, std::string const& where, bool nondiff) {
        if (present(t)) base::check(s, *t, where, nondiff);
    }
    template <class T, class K>
    static void bind(owned const& t, K&& k) {
        if (present(t)) base::template bind<T>(*t, k);
        else k(kiln::none);
    }
    template <class T, class K>
    static void bind_unused(owned const& t, K&& k) {
        if (present(t)) base::template bind_unused<T>(*t, k);
        else k(kiln::none);
    }
    template <class K>
    static void select(call_state& s, owned const& t, std::string const& where, K&& k) {
        if (present(t)) base::select(s, *t, where, k);
        else k(std::type_identity<kiln::none_t>{});
    }
    static void collect(owned const& t, std::vector<at::Tensor>& leaves) {
        if (present(t)) leaves.push_back(*t);
    }
    template <class G>
    static void scatter(G const& g, std::vector<at::Tensor> const& leaves, std::size_t& pos, std::vector<at::Tensor>& out) {
        base::scatter(g, leaves, pos, out);
    }
};

// Binds elements I, I+1, ... of a sequence one by one (each call of `one` may copy), then calls done with all.
template <std::size_t I, std::size_t N, class One, class Done, class... Bound>
void bind_each(One const& one, Done&& done, Bound const&... bound) {
    if constexpr (I == N) done(bound...);
    else one(std::integral_constant<std::size_t, I>{}, [&](auto const& b) { bind_each<I + 1, N>(one, done, bound..., b); });
}

// Tensor[] of exactly N tensors: f receives a std::tuple of them (kiln converts a std::array so).
template <class D, std::size_t N>
struct decl<kiln::torch::list<D, N>> {
    static_assert(tensor_declaration<D>, "kiln: kiln::torch::list<D, N> takes a tensor declaration (matrix<>, vector<>, scalar<>)");
    using base = decl<D>;
    using param = at::TensorList;
    using owned = std::vector<at::Tensor>;
    static constexpr bool differentiable = base::differentiable;
    static constexpr bool is_nondiff = base::is_nondiff;
    static constexpr bool is_tensor = false;
    static std::string schema() { return "Tensor[]"; }
    template <class T>
    using bound = std::array<typename base::template bound<T>, N>;
    static owned own(param t, call_state const&, std::string const&) { return t.vec(); }
    static void check(call_state& s, owned const& ts, std::string const& where, bool nondiff) {
        if (ts.size() != N)
            value_error(s, where, "expected a list of " + std::to_string(N) + " tensors, got " + std::to_string(ts.size()));
        for (std::size_t i = 0; i < N; ++i) base::check(s, ts[i], where + "[" + std::to_string(i) + "]", nondiff);
    }
    template <class T, class K>
    static void bind(owned const& ts, K&& k) {
        bind_each<0, N>([&](auto i, auto&& next) { base::template bind<T>(ts[i], next); },
                        [&](auto const&... m) { k(std::array{m...}); });
    }
    template <class T, class K>
    static void bind_unused(owned const&, K&& k) {  // the list may have any length: it is not checked
        bind_each<0, N>([&](auto, auto&& next) { base::template bind_unused<T>(at::Tensor(), next); },
                        [&](auto const&... m) { k(std::array{m...}); });
    }
    template <class K>
    static void select(call_state&, owned const&, std::string const&, K&& k) {
        k(std::type_identity<bound<double>>{});
    }
    static void collect(owned const& ts, std::vector<at::Tensor>& leaves) { leaves.insert(leaves.end(), ts.begin(), ts.end()); }
    template <class G>
    static void scatter(G const& g, std::vector<at::Tensor> const& leaves, std::size_t& pos, std::vector<at::Tensor>& out) {
        std::apply([&](auto const&... e) { (base::scatter(e, leaves, pos, out), ...); }, g);
    }
};

// Dict(str, Tensor) with exactly the keys Keys...: f receives a boost::hana::map from them.
template <class D, fixed_string... Keys>
struct decl<kiln::torch::dict<D, Keys...>> {
    static_assert(tensor_declaration<D>, "kiln: kiln::torch::dict<D, keys...> takes a tensor declaration (matrix<>, vector<>, scalar<>)");
    static_assert(sizeof...(Keys) > 0, "kiln: kiln::torch::dict<D, keys...> needs at least one key");
    using base = decl<D>;
    using param = c10::Dict<std::string, at::Tensor> const&;
    // The values in declared key order (undefined where a key is missing), and what is wrong with the keys:
    // reported by check(), so that a dict the graph does not read is not checked.
    struct owned {
        std::array<at::Tensor, sizeof...(Keys)> values;
        std::string problem;
    };
    static constexpr bool differentiable = base::differentiable;
    static constexpr bool is_nondiff = base::is_nondiff;
    static constexpr std::array<std::string_view, sizeof...(Keys)> keys{Keys.view()...};
    static constexpr bool is_tensor = false;
    static std::string schema() { return "Dict(str, Tensor)"; }
    template <class T>
    using bound = decltype(boost::hana::make_map(boost::hana::make_pair(
        typename detail::hana_key<static_arg<Keys>>::type{}, std::declval<typename base::template bound<T>>())...));
    static std::string keys_text() {
        std::string s;
        for (auto k : keys) s.append(s.empty() ? "'" : ", '").append(k).append("'");
        return s;
    }
    static owned own(c10::Dict<std::string, at::Tensor> const& d, call_state const&, std::string const&) {
        owned v;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            std::string const key(keys[i]);
            if (d.contains(key)) v.values[i] = d.at(key);
            else if (v.problem.empty()) v.problem = "expected a dict with the keys " + keys_text() + ", got one without '" + key + "'";
        }
        if (v.problem.empty() && d.size() != keys.size())
            for (auto const& e : d)
                if (std::find(keys.begin(), keys.end(), e.key()) == keys.end()) {
                    v.problem = "expected a dict with the keys " + keys_text() + ", got the key '" + e.key() + "' too";
                    break;
                }
        return v;
    }
    static void check(call_state& s, owned const& v, std::string const& where, bool nondiff) {
        if (!v.problem.empty()) value_error(s, where, v.problem);
        for (std::size_t i = 0; i < keys.size(); ++i) base::check(s, v.values[i], where + "['" + std::string(keys[i]) + "']", nondiff);
    }
    template <class T, class K>
    static void bind(owned const& v, K&& k) {
        bind_each<0, sizeof...(Keys)>([&](auto i, auto&& next) { base::template bind<T>(v.values[i], next); }, to_map(k));
    }
    template <class T, class K>
    static void bind_unused(owned const&, K&& k) {
        bind_each<0, sizeof...(Keys)>([&](auto, auto&& next) { base::template bind_unused<T>(at::Tensor(), next); }, to_map(k));
    }
    template <class K>
    static auto to_map(K& k) {
        return [&](auto const&... m) {
            k(boost::hana::make_map(boost::hana::make_pair(typename detail::hana_key<static_arg<Keys>>::type{}, m)...));
        };
    }
    template <class K>
    static void select(call_state&, owned const&, std::string const&, K&& k) {
        k(std::type_identity<bound<double>>{});
    }
    static void collect(owned const& v, std::vector<at::Tensor>& leaves) {
        for (auto const& t : v.values)
            if (t.defined()) leaves.push_back(t);
    }
    template <class G>
    static void scatter(G const& g, std::vector<at::Tensor> const& leaves, std::size_t& pos, std::vector<at::Tensor>& out) {
        (base::scatter(boost::hana::at_key(g, typename detail::hana_key<static_arg<Keys>>::type{}), leaves, pos, out), ...);
    }
};

// nondiff<D>: D, never differentiated.
template <class D>
struct decl<kiln::torch::nondiff<D>> : decl<D> {
    static constexpr bool differentiable = false;
    static constexpr bool is_nondiff = true;
};

// Non-tensor arguments: nothing to collect or differentiate.
struct plain_decl {
    static constexpr bool is_tensor = false;
    static constexpr bool differentiable = false;
    static constexpr bool is_nondiff = false;
    template <class P>
    static P own(P p, call_state const&, std::string const&) { return p; }
    template <class O>
    static void collect(O const&, std::vector<at::Tensor>&) {}
    template <class O>
    static void check(call_state&, O const&, std::string const&, bool) {}
};
// The plain declarations' bind_unused and select, from their bind and bound.
template <class Self>
struct plain_binding {
    template <class T, class O, class K>
    static void bind_unused(O const& v, K&& k) {
        Self::template bind<T>(v, k);
    }
    template <class O, class K>
    static void select(call_state&, O const&, std::string const&, K&& k) {
        k(std::type_identity<typename Self::template bound<double>>{});
    }
};
// float: a traced scalar of the call's floating dtype (PyTorch's own rule for a Python scalar with tensors).
template <>
struct decl<double> : plain_decl, plain_binding<decl<double>> {
    using param = double;
    using owned = double;
    static std::string schema() { return "float"; }
    template <class T>
    using bound = T;
    template <class T, class K>
    static void bind(double v, K&& k) { k(static_cast<T>(v)); }
};
// int and bool: f receives the value, a traced scalar of that dtype.
template <class V, fixed_string Schema>
struct value_decl : plain_decl, plain_binding<value_decl<V, Schema>> {
    using param = V;
    using owned = V;
    static std::string schema() { return std::string(Schema.view()); }
    template <class T>
    using bound = V;
    template <class T, class K>
    static void bind(V v, K&& k) {
        k(v);
    }
};
template <>
struct decl<std::int64_t> : value_decl<std::int64_t, "int"> {};
template <>
struct decl<bool> : value_decl<bool, "bool"> {};
template <>
struct decl<std::string> : plain_decl, plain_binding<decl<std::string>> {
    using param = c10::string_view;
    using owned = std::string;
    static std::string schema() { return "str"; }
    template <class T>
    using bound = std::string_view;
    static owned own(param v, call_state const&, std::string const&) { return std::string(v.data(), v.size()); }
    template <class T, class K>
    static void bind(std::string const& v, K&& k) { k(std::string_view(v)); }
};
template <fixed_string... Modes>
struct decl<kiln::torch::choice<Modes...>> : plain_decl {
    static_assert(sizeof...(Modes) > 0, "kiln: kiln::torch::choice<modes...> needs at least one mode");
    using param = c10::string_view;
    using owned = std::string;
    static std::string schema() { return "str"; }
    template <class T>
    using bound = std::tuple_element_t<0, std::tuple<static_arg<Modes>...>>;  // the first mode
    static owned own(param v, call_state const&, std::string const&) { return std::string(v.data(), v.size()); }
    static void check(call_state& s, std::string const& v, std::string const& where, bool) {
        if (((v != Modes.view()) && ...)) {
            std::string allowed;
            ((allowed.append(allowed.empty() ? "'" : ", '").append(Modes.view()).append("'")), ...);
            value_error(s, where, "expected one of " + allowed + ", got '" + v + "'");
        }
    }
    template <class T, class K>
    static void bind(std::string const& v, K&& k) {
        // Exactly one mode matches: select() has refused every other string.
        auto one = [&](auto mode) {
            if (v == decltype(mode)::value.view()) k(mode);
        };
        (one(static_arg<Modes>{}), ...);
    }
    template <class T, class K>
    static void bind_unused(std::string const& v, K&& k) {
        bind<T>(v, k);
    }
    template <class K>
    static void select(call_state& s, std::string const& v, std::string const& where, K&& k) {
        check(s, v, where, false);
        auto one = [&](auto mode) {
            if (v == decltype(mode)::value.view()) k(std::type_identity<decltype(mode)>{});
        };
        (one(static_arg<Modes>{}), ...);
    }
};

template <class D>
inline constexpr bool is_nondiff_decl = decl<D>::is_nondiff;

}  // namespace kiln::detail::torch_bridge

#endif
