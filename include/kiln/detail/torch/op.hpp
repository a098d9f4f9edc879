// One kiln function as a PyTorch operator (kiln/torch.hpp): its schema, its kernel (check, bind, evaluate,
// results to tensors) and its autograd Function. Every call dispatches at run time over what the graph
// depends on: the floating dtype (float or double), each optional argument's presence, each choice's mode.
#ifndef KILN_DETAIL_TORCH_OP_HPP
#define KILN_DETAIL_TORCH_OP_HPP

#include <kiln/detail/torch/bind.hpp>

#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::detail::torch_bridge {

// "name(a, b, c)": where the name and each argument name are in the string, or !valid.
struct signature_parts {
    static constexpr std::size_t max_args = 64;
    bool valid = false;
    std::size_t count = 0;
    std::array<std::pair<std::size_t, std::size_t>, max_args + 1> parts{};  // (offset, length); [0] is the name
};
constexpr bool identifier_char(char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}
constexpr signature_parts parse_signature(std::string_view s) {
    signature_parts r;
    std::size_t i = 0;
    auto skip = [&] {
        while (i < s.size() && s[i] == ' ') ++i;
    };
    auto word = [&](std::size_t slot) {
        skip();
        std::size_t const b = i;
        while (i < s.size() && identifier_char(s[i], i == b)) ++i;
        r.parts[slot] = {b, i - b};
        skip();
        return i > b;
    };
    if (!word(0) || i >= s.size() || s[i] != '(') return r;
    ++i;
    skip();
    if (i < s.size() && s[i] == ')') {
        r.valid = i + 1 == s.size();
        return r;
    }
    while (r.count < signature_parts::max_args) {
        if (!word(++r.count)) return r;
        if (i < s.size() && s[i] == ',') {
            ++i;
            continue;
        }
        r.valid = i + 1 == s.size() && s[i] == ')';
        return r;
    }
    return r;
}

// Results: a scalar or an Eigen matrix is one tensor; a std::tuple, std::pair or std::array one per element.
template <class R>
struct result_list {
    using type = std::tuple<R>;
};
template <class... E>
struct result_list<std::tuple<E...>> {
    using type = std::tuple<E...>;
};
template <class A, class B>
struct result_list<std::pair<A, B>> {
    using type = std::tuple<A, B>;
};
template <class E, std::size_t N>
struct result_list<std::array<E, N>> {
    using type = std::array<E, N>;
};
template <class R>
auto as_result_list(R const& r) {
    if constexpr (std::is_same_v<typename result_list<R>::type, std::tuple<R>>) return std::tuple<R const&>(r);
    else return typename result_list<R>::type(r);
}
template <class E>
constexpr bool result_leaf = std::is_arithmetic_v<E> || requires { typename E::Scalar; };
template <class E>
constexpr bool floating_leaf = std::is_floating_point_v<detail::element_t<E>>;

// A result to a new tensor: rank 0 for a scalar, rank 1 for a fixed single column, rank 2 otherwise.
template <class E>
at::Tensor to_tensor(E const& e) {
    static_assert(result_leaf<E>, "kiln: a kiln::torch operator returns a scalar, a matrix, or a std::tuple, std::pair or "
                                  "std::array of them (not nested)");
    using S = detail::element_t<E>;
    auto const options = at::TensorOptions().dtype(scalar_type_of<S>);
    if constexpr (std::is_arithmetic_v<E>) {
        at::Tensor t = at::empty({}, options);
        *static_cast<S*>(t.data_ptr()) = e;
        return t;
    } else {
        auto const rows = static_cast<std::int64_t>(e.rows()), cols = static_cast<std::int64_t>(e.cols());
        at::Tensor t = E::ColsAtCompileTime == 1 ? at::empty({rows}, options) : at::empty({rows, cols}, options);
        Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(static_cast<S*>(t.data_ptr()), rows, cols) = e;
        return t;
    }
}
template <class R>
std::vector<at::Tensor> to_tensors(R const& r) {
    std::vector<at::Tensor> out;
    std::apply([&](auto const&... e) { (out.push_back(detail::torch_bridge::to_tensor(e)), ...); }, as_result_list(r));
    return out;
}

// The indices I whose Flags[I] are true, as an index_sequence.
template <bool... Flags>
constexpr auto true_indices() {
    constexpr std::array<bool, sizeof...(Flags)> flags{Flags...};
    constexpr std::size_t n = (std::size_t{Flags} + ... + 0);
    constexpr auto idx = [&] {
        std::array<std::size_t, n> r{};
        std::size_t j = 0;
        for (std::size_t i = 0; i < flags.size(); ++i)
            if (flags[i]) r[j++] = i;
        return r;
    }();
    return [&]<std::size_t... K>(std::index_sequence<K...>) { return std::index_sequence<idx[K]...>{}; }(std::make_index_sequence<n>{});
}

// kiln::shape_error and kiln's other run-time errors, as Python's ValueError (RuntimeError for the rest),
// with the kiln function's arguments ("argument 2", "argument 2 .w") named as the schema names them.
inline std::string name_arguments(std::string const& msg, std::string const* names, std::size_t arity) {
    static constexpr std::string_view word = "argument ";
    std::string out;
    std::size_t i = 0;
    for (auto at = msg.find(word); at != std::string::npos; at = msg.find(word, i)) {
        std::size_t end = at + word.size(), k = 0;
        while (end < msg.size() && msg[end] >= '0' && msg[end] <= '9') k = 10 * k + static_cast<std::size_t>(msg[end++] - '0');
        out.append(msg, i, at - i);
        if (end == at + word.size()) out.append(word);
        else if (k < arity) out.append("argument '").append(names[k]).append("'");
        else out.append("grad_output[").append(std::to_string(k - arity)).append("]");
        i = end;
    }
    return out.append(msg, i, std::string::npos);
}
template <class K>
auto guarded(call_state const& s, std::size_t arity, K&& k) {
    try {
        return k();
    } catch (kiln::shape_error const& e) {
        C10_THROW_ERROR(ValueError, "kiln op '" + *s.op + "': " + name_arguments(e.what(), s.names, arity));
    } catch (kiln::numeric_error const& e) {
        C10_THROW_ERROR(ValueError, "kiln op '" + *s.op + "': " + name_arguments(e.what(), s.names, arity));
    } catch (kiln::max_steps_error const& e) {
        C10_THROW_ERROR(Error, "kiln op '" + *s.op + "': " + name_arguments(e.what(), s.names, arity));
    }
}

template <fixed_string Signature, class F, class... Decls>
struct torch_op {
    static constexpr std::size_t arity = sizeof...(Decls);
    static constexpr signature_parts parsed = parse_signature(Signature.view());
    static_assert(parsed.valid,
                  "kiln: the signature given to kiln::torch::def is \"name(arg0, arg1, ...)\": the operator's name, then one "
                  "argument name per declaration, in parentheses (identifiers only: the types come from the declarations)");
    static_assert(!parsed.valid || parsed.count == arity,
                  "kiln: the signature given to kiln::torch::def names a different number of arguments than there are "
                  "declarations after it (one name per declaration)");

    template <std::size_t I>
    using decl_at = decl<std::tuple_element_t<I, std::tuple<Decls...>>>;
    using owned_tuple = std::tuple<typename decl<Decls>::owned...>;
    static constexpr std::array<bool, arity + 1> differentiable{decl<Decls>::differentiable..., false};
    static constexpr bool any_differentiable = (decl<Decls>::differentiable || ...);

    static std::string const& name() {
        static std::string const n(Signature.view().substr(parsed.parts[0].first, parsed.parts[0].second));
        return n;
    }
    static std::string const* names() {
        static auto const n = [] {
            std::array<std::string, arity + 1> r;
            for (std::size_t i = 0; i < arity; ++i)
                r[i] = std::string(Signature.view().substr(parsed.parts[i + 1].first, parsed.parts[i + 1].second));
            return r;
        }();
        return n.data();
    }

    // Binds every argument for the floating dtype T (one continuation per presence and mode combination),
    // then calls k with what f receives.
    template <class T, std::size_t I = 0, class K, class... B>
    static void bind_all(call_state const& s, owned_tuple const& params, K& k, B const&... b) {
        if constexpr (I == arity) {
            k(b...);
        } else {
            auto next = [&](auto const& x) { bind_all<T, I + 1>(s, params, k, b..., x); };
            if (s.used >> I & 1) decl_at<I>::template bind<T>(std::get<I>(params), next);
            else decl_at<I>::template bind_unused<T>(std::get<I>(params), next);
        }
    }
    // Which graph this call runs, as the types f receives (for double): each optional's presence and each
    // choice's mode. Calls k with a std::type_identity of each.
    template <std::size_t I = 0, class K, class... Tags>
    static void select_all(call_state& s, owned_tuple const& params, K& k, Tags... tags) {
        if constexpr (I == arity) k(tags...);
        else decl_at<I>::select(s, std::get<I>(params), names()[I], [&](auto tag) { select_all<I + 1>(s, params, k, tags..., tag); });
    }
    // The arguments that graph reads: the others are pruned, never read, checked or differentiated.
    template <class... B>
    static constexpr std::uint64_t used_mask() {
        using traced = decltype(kiln::trace(std::declval<F const&>(), std::declval<B const&>()...));
        std::uint64_t m = 0;
        for (std::size_t a : traced::param_map()) m |= std::uint64_t{1} << a;
        return m;
    }
    template <class K>
    static void with_dtype(call_state const& s, K&& k) {
        if (s.dtype == c10::ScalarType::Float) k(float{});
        else k(double{});
    }
    // The arguments kiln differentiates: differentiable declarations that are present.
    template <class... B>
    static constexpr auto diff_indices() {
        constexpr auto flags = differentiable;
        constexpr std::uint64_t used = used_mask<B...>();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return true_indices<(flags[I] && (used >> I & 1) && !std::is_same_v<B, kiln::none_t>)...>();
        }(std::index_sequence_for<B...>{});
    }
    template <std::size_t... I>
    static constexpr auto argnums_of(std::index_sequence<I...>) {
        return kiln::argnums<I...>;
    }
    // Writes the gradients g (one per index in Idx, as kiln returns them) into tensors shaped like the leaves.
    template <std::size_t... I, class G>
    static void scatter(std::index_sequence<I...>, G const& g, std::vector<at::Tensor> const& leaves,
                        std::vector<std::size_t> const& offsets, std::vector<at::Tensor>& out) {
        auto const each = [&]<std::size_t K>(std::integral_constant<std::size_t, K>, auto const& gk) {
            constexpr std::size_t arg = std::array<std::size_t, sizeof...(I)>{I...}[K];
            std::size_t pos = offsets[arg];
            decl_at<arg>::scatter(gk, leaves, pos, out);
        };
        if constexpr (sizeof...(I) == 1) each(std::integral_constant<std::size_t, 0>{}, g);
        else
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                (each(std::integral_constant<std::size_t, K>{}, std::get<K>(g)), ...);
            }(std::make_index_sequence<sizeof...(I)>{});
    }

    // The number of tensors returned: of f's result for double, every optional present, each choice's first mode.
    template <std::size_t... I>
    static auto probe_call(std::index_sequence<I...>)
        -> decltype(kiln::jit(std::declval<F const&>())(std::declval<typename decl_at<I>::template bound<double> const&>()...));
    using probe_result = decltype(probe_call(std::index_sequence_for<Decls...>{}));
    static constexpr std::size_t num_outputs = std::tuple_size_v<typename result_list<probe_result>::type>;
    template <std::size_t>
    using tensor_t = at::Tensor;
    template <std::size_t... J>
    static auto tensor_tuple(std::index_sequence<J...>) -> std::tuple<tensor_t<J>...>;
    using kernel_result = std::conditional_t<num_outputs == 1, at::Tensor,
                                             decltype(tensor_tuple(std::make_index_sequence<num_outputs>{}))>;

    static std::string schema() {
        std::string s = name() + "(";
        std::size_t i = 0;
        ((s.append(i ? ", " : "").append(decl<Decls>::schema()).append(" ").append(names()[i]), ++i), ...);
        s.append(") -> ");
        if (num_outputs == 1) return s.append("Tensor");
        s.append("(");
        for (std::size_t j = 0; j < num_outputs; ++j) s.append(j ? ", Tensor" : "Tensor");
        return s.append(")");
    }

    // What a call hands to the autograd Function, and what its backward pass keeps.
    struct call_data {
        F const* f;
        owned_tuple const* params;
        call_state const* state;
    };
    struct saved_state : ::torch::CustomClassHolder {
        saved_state(F f_, owned_tuple p, call_state s) : f(std::move(f_)), params(std::move(p)), state(std::move(s)) {}
        F f;
        owned_tuple params;
        call_state state;
        std::vector<at::Tensor> grads;  // a scalar result's gradients, computed with its value
        bool precomputed = false;
    };

    static std::vector<at::Tensor> forward_only(F const& f, owned_tuple const& params, call_state const& s) {
        std::vector<at::Tensor> out;
        with_dtype(s, [&](auto t) {
            auto k = [&](auto const&... b) {
                using R = decltype(kiln::jit(f)(b...));
                static_assert(std::tuple_size_v<typename result_list<R>::type> == num_outputs,
                              "kiln: a kiln::torch operator returns the same number of tensors whatever its optional "
                              "arguments and modes");
                out = to_tensors(kiln::jit(f)(b...));
            };
            bind_all<decltype(t)>(s, params, k);
        });
        return out;
    }

    struct function : ::torch::autograd::Function<function> {
        static ::torch::autograd::variable_list forward(::torch::autograd::AutogradContext* ctx, at::TensorList leaves,
                                                        call_data const* d) {
            auto saved = c10::make_intrusive<saved_state>(*d->f, *d->params, *d->state);
            std::vector<at::Tensor> const leaf_vec = leaves.vec();
            std::vector<at::Tensor> out;
            guarded(*d->state, arity, [&] {
                if constexpr (num_outputs == 1) {
                    // A scalar result (a loss): its gradients are computed with it, in one graph.
                    with_dtype(*d->state, [&](auto t) {
                        auto k = [&](auto const&... b) {
                            using R = decltype(kiln::jit(*d->f)(b...));
                            constexpr auto idx = diff_indices<std::remove_cvref_t<decltype(b)>...>();
                            if constexpr (std::is_floating_point_v<R> && idx.size() > 0) {
                                auto [v, g] = kiln::value_and_grad(*d->f, argnums_of(idx))(b...);
                                out = {to_tensor(v)};
                                saved->grads.resize(leaf_vec.size());
                                scatter(idx, g, leaf_vec, saved->state.offsets, saved->grads);
                                saved->precomputed = true;
                            } else {
                                out = to_tensors(kiln::jit(*d->f)(b...));
                            }
                        };
                        bind_all<decltype(t)>(*d->state, *d->params, k);
                    });
                } else {
                    out = forward_only(*d->f, *d->params, *d->state);
                }
            });
            for (auto const& o : out)
                if (!at::isFloatingType(o.scalar_type())) ctx->mark_non_differentiable({o});
            ctx->save_for_backward(leaf_vec);
            ctx->saved_data["kiln"] = c10::IValue::make_capsule(saved);
            return out;
        }

        static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                         ::torch::autograd::variable_list grad_out) {
            auto const st = c10::static_intrusive_pointer_cast<saved_state>(ctx->saved_data["kiln"].toCapsule());
            if (at::GradMode::is_enabled())
                C10_THROW_ERROR(NotImplementedError, "kiln op '" + *st->state.op +
                                                         "': a second derivative through a kiln operator (backward with "
                                                         "create_graph=True) is not supported");
            auto const leaves = ctx->get_saved_variables();  // raises if an input was modified in place since
            std::vector<at::Tensor> grads(leaves.size());
            if (st->precomputed) {
                bool const unit = grad_out[0].defined() && grad_out[0].item<double>() == 1.0;
                for (std::size_t i = 0; i < grads.size(); ++i)
                    if (st->grads[i].defined()) grads[i] = unit ? st->grads[i] : st->grads[i] * grad_out[0];
            } else {
                guarded(st->state, arity, [&] { vjp(*st, leaves, grad_out, grads); });
            }
            ::torch::autograd::variable_list result(grads.begin(), grads.end());
            result.emplace_back();  // the call_data argument
            for (std::size_t i = 0; i < leaves.size(); ++i)
                if (!ctx->needs_input_grad(i)) result[i] = at::Tensor();
            return result;
        }
    };

    // The backward pass of a result that is not one scalar: the gradient of sum_j <result_j, grad_out_j>
    // over the floating results, for the differentiable arguments (the forward values are recomputed).
    static void vjp(saved_state const& st, std::vector<at::Tensor> const& leaves, ::torch::autograd::variable_list const& grad_out,
                    std::vector<at::Tensor>& grads) {
        with_dtype(st.state, [&](auto t) {
            using T = decltype(t);
            auto k = [&](auto const&... b) {
                using R = decltype(kiln::jit(st.f)(b...));
                using list = typename result_list<R>::type;
                constexpr auto idx = diff_indices<std::remove_cvref_t<decltype(b)>...>();
                constexpr auto outs = []<std::size_t... J>(std::index_sequence<J...>) {
                    return true_indices<floating_leaf<std::tuple_element_t<J, list>>...>();
                }(std::make_index_sequence<std::tuple_size_v<list>>{});
                // A single floating scalar result's gradients were computed with its value (precomputed).
                constexpr bool precomputed = num_outputs == 1 && std::is_floating_point_v<R>;
                if constexpr (idx.size() > 0 && outs.size() > 0 && !precomputed) {
                    constexpr auto out_index = outs_array(outs);
                    std::array<at::Tensor, out_index.size()> cts;
                    for (std::size_t c = 0; c < cts.size(); ++c) cts[c] = grad_out[out_index[c]].contiguous();
                    auto const objective = [f = st.f](auto const&... a) { return torch_op::objective(decltype(outs){}, f, a...); };
                    [&]<std::size_t... C>(std::index_sequence<C...>) {
                        auto const g = kiln::grad(objective, argnums_of(idx))(
                            b..., ct_map<std::tuple_element_t<out_index[C], list>>(cts[C])...);
                        scatter(idx, g, leaves, st.state.offsets, grads);
                    }(std::make_index_sequence<out_index.size()>{});
                }
            };
            bind_all<T>(st.state, st.params, k);
        });
    }
    template <std::size_t... J>
    static constexpr std::array<std::size_t, sizeof...(J)> outs_array(std::index_sequence<J...>) {
        return {J...};
    }
    // A cotangent tensor (contiguous) as what the objective receives for a result of type E.
    template <class E>
    static auto ct_map(at::Tensor const& ct) {
        using S = detail::element_t<E>;
        if constexpr (std::is_arithmetic_v<E>) return *static_cast<S const*>(ct.data_ptr());
        else if constexpr (E::ColsAtCompileTime == 1)
            return Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1> const>(static_cast<S const*>(ct.data_ptr()), ct.size(0));
        else
            return Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> const>(
                static_cast<S const*>(ct.data_ptr()), ct.size(0), ct.size(1));
    }
    // f's floating results dotted with their cotangents: the first `arity` of a... are f's arguments.
    template <std::size_t... J, class... A>
    static auto objective(std::index_sequence<J...>, F const& f, A const&... a) {
        auto const all = std::forward_as_tuple(a...);
        auto const r = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return f(std::get<I>(all)...);
        }(std::make_index_sequence<arity>{});
        auto const rs = as_result_list(r);
        return [&]<std::size_t... C>(std::index_sequence<C...>) {
            return (kiln::sum(std::get<J>(rs) * std::get<arity + C>(all)) + ...);
        }(std::make_index_sequence<sizeof...(J)>{});
    }

    static kernel_result pack(std::vector<at::Tensor>&& out) {
        if constexpr (num_outputs == 1) return std::move(out[0]);
        else
            return [&]<std::size_t... J>(std::index_sequence<J...>) {
                return kernel_result(std::move(out[J])...);
            }(std::make_index_sequence<num_outputs>{});
    }

    static std::vector<at::Tensor> call(F const& f, typename decl<Decls>::param... p) {
        call_state s{&name(), names(), c10::ScalarType::Undefined, {}, 0, std::vector<std::size_t>(arity + 1)};
        owned_tuple const params = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return owned_tuple{decl<Decls>::own(p, s, names()[I])...};
        }(std::index_sequence_for<Decls...>{});
        auto const graph = [&](auto... tags) { s.used = used_mask<typename decltype(tags)::type...>(); };
        select_all(s, params, graph);
        std::vector<at::Tensor> leaves;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((s.used >> I & 1 ? decl<Decls>::check(s, std::get<I>(params), names()[I], is_nondiff_decl<Decls>) : void()),
             ...);
            ((s.offsets[I] = leaves.size(), decl<Decls>::collect(std::get<I>(params), leaves)), ...);
        }(std::index_sequence_for<Decls...>{});
        s.offsets[arity] = leaves.size();
        bool wants_grad = false;
        if (any_differentiable && at::GradMode::is_enabled())
            for (std::size_t i = 0; i < arity; ++i)
                if (differentiable[i] && (s.used >> i & 1))
                    for (std::size_t l = s.offsets[i]; l < s.offsets[i + 1]; ++l) wants_grad = wants_grad || leaves[l].requires_grad();
        if (!wants_grad) return guarded(s, arity, [&] { return forward_only(f, params, s); });
        call_data const d{&f, &params, &s};
        return function::apply(at::TensorList(leaves), &d);
    }

    static auto kernel(F const& f) {
        return [f](typename decl<Decls>::param... p) -> kernel_result { return pack(call(f, p...)); };
    }
};

}  // namespace kiln::detail::torch_bridge

#endif
