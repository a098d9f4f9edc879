// kiln/torch.hpp: a kiln function as a PyTorch operator, with autograd (docs/torch.md).
//
// One call in a TORCH_LIBRARY block registers a generic kiln function as `torch.ops.<ns>.<name>`:
//
//   TORCH_LIBRARY(my_ops, m) {
//       kiln::torch::def<"gauss(x, mu, mask)", kiln::torch::matrix<>, kiln::torch::vector<>,
//                        std::optional<kiln::torch::matrix<>>>(m, gauss);
//   }
//
// The template arguments after the signature declare, one per argument, what Python passes and what the
// kiln function receives; the schema (`gauss(Tensor x, Tensor mu, Tensor? mask) -> Tensor`) is derived
// from them. Tensors are read in place (an Eigen::Map over their storage), the floating dtype (float32 or
// float64) is dispatched at run time to one of two instantiations, and every bad input is a Python
// exception naming the argument. The forward pass runs kiln::jit(f); when an input requires a gradient,
// the backward pass runs kiln's gradient graph for the differentiable arguments.
//
// Needs PyTorch's C++ headers and libraries: link the CMake target kiln::torch (defined when CMake finds
// Torch; Debian 12: libtorch-dev, python3-torch).
#ifndef KILN_TORCH_HPP
#define KILN_TORCH_HPP

#include <kiln/kiln.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::torch {

// The element type of a declared tensor. `floating` is the call's floating dtype: float32 or float64,
// chosen at run time by the tensors passed (every `floating` tensor of one call has the same dtype, as
// in one Eigen expression; nothing is converted). A fixed element type (double, float, std::int64_t,
// std::int32_t, bool) accepts only that dtype.
struct floating {};

// A tensor of rank 2 (`Tensor`): f receives a traced Rows x Cols matrix (Eigen::Dynamic: any extent).
template <int Rows = Eigen::Dynamic, int Cols = Eigen::Dynamic, class T = floating>
struct matrix {};
// A tensor of rank 1 (`Tensor`) of N elements: f receives a traced N x 1 column vector. A result whose
// fixed column count is 1 goes back to Python as a rank-1 tensor.
template <int N = Eigen::Dynamic, class T = floating>
struct vector {};
// A tensor of rank 0 (`Tensor`): f receives a traced scalar; differentiable, unlike a Python float.
template <class T = floating>
struct scalar {};
// A list of exactly N tensors of one declaration (`Tensor[]`): f receives a std::tuple of them.
template <class D, std::size_t N>
struct list {};
// A dict with exactly these string keys, each a tensor of one declaration (`Dict(str, Tensor)`): f
// receives a boost::hana::map from the keys (kiln::get<"w">(p)).
template <class D, fixed_string... Keys>
struct dict {};
// A tensor argument that is never differentiated (data, labels: JAX's nondiff_argnums). Its gradient is
// not computed; passing a tensor that requires a gradient is an error rather than a silent None.
template <class D>
struct nondiff {};
// A `str` that selects one of these compile-time modes: f receives kiln::static_arg<Mode>{} (one
// instantiation per mode, so f may `if constexpr (mode == "relu")`). Any other string is an error.
template <fixed_string... Modes>
struct choice {};
// Also declarable: std::optional<D> for a tensor declaration D (`Tensor?`: None gives f kiln::none, each
// presence combination is its own graph), double (`float`: a traced scalar of the call's floating dtype,
// as PyTorch treats Python scalars), std::int64_t (`int`), bool (`bool`), std::string (`str`: f receives
// kiln::untraced, the graph cannot depend on it).

}  // namespace kiln::torch

#include <kiln/detail/torch/bind.hpp>
#include <kiln/detail/torch/op.hpp>

namespace kiln::torch {

// Registers f as the operator `Signature` ("name(arg0, arg1, ...)", one name per declaration) of the
// library m: `torch.ops.<ns>.<name>(...)`. f is a generic kiln function of as many arguments; it returns a
// scalar, a matrix, or a std::tuple / std::pair / std::array of them (one tensor per element).
template <fixed_string Signature, class... Decls, class F>
void def(::torch::Library& m, F const& f) {
    using op = detail::torch_bridge::torch_op<Signature, F, Decls...>;
    m.def(op::schema().c_str(), op::kernel(f));
}

}  // namespace kiln::torch

#endif
