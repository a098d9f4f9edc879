// The Eigen side of lowering: views that never copy, casts, and the storage type of a materialized node.
// Values flowing through lowering are either references to plain objects (arguments, materialized
// temporaries), Eigen expressions held by value (which hold plain objects by reference and nested
// expressions by value, so nothing dangles), or scalars.
#ifndef KILN_DETAIL_IR_EIGEN_HPP
#define KILN_DETAIL_IR_EIGEN_HPP

#include <Eigen/Core>

#include <type_traits>

namespace kiln::detail {

template <class T>
concept eigen_dense = std::is_base_of_v<Eigen::DenseBase<std::remove_cvref_t<T>>, std::remove_cvref_t<T>>;
template <class T>
concept eigen_array = std::is_base_of_v<Eigen::ArrayBase<std::remove_cvref_t<T>>, std::remove_cvref_t<T>>;
template <class T>
concept eigen_plain = std::is_base_of_v<Eigen::PlainObjectBase<std::remove_cvref_t<T>>, std::remove_cvref_t<T>>;

// A plain object given extents (rows, cols), resized only if it has other extents: Eigen's resize()
// checks rows * cols for overflow with an integer division on every call, which a small graph called in
// a loop pays for each temporary and destination even when nothing changes size.
template <class P>
void resize_to(P& p, long rows, long cols) {
    if (static_cast<long>(p.rows()) != rows || static_cast<long>(p.cols()) != cols) p.resize(rows, cols);
}

// A coefficient-wise (array) view of x; a plain Array is wrapped so the view holds it by reference.
template <class X>
auto as_array(X const& x) {
    if constexpr (!eigen_array<X>) return x.array();
    else if constexpr (eigen_plain<X>) return x.matrix().array();
    else return x;
}

// A linear-algebra (matrix) view of x, for products: a plain matrix stays itself, so Eigen's GEMM reads
// it directly.
template <class X>
decltype(auto) as_matrix(X const& x) {
    if constexpr (eigen_array<X>) return x.matrix();
    else return (x);
}

// x in dtype R: scalars by static_cast, expressions by a lazy cast (nothing when already R).
template <class R, class X>
decltype(auto) cast_to(X const& x) {
    if constexpr (std::is_arithmetic_v<X>) return static_cast<R>(x);
    else if constexpr (std::is_same_v<typename X::Scalar, R>) return (x);
    else return x.template cast<R>();
}

// The plain Eigen matrix holding a value of static extents Rows x Cols (-1: dynamic): fixed-size, unless
// its elements exceed Eigen's limit on fixed-size objects (EIGEN_STACK_ALLOCATION_LIMIT, 128 KB by default:
// eye<200>() is 320 KB, which Eigen refuses with OBJECT_ALLOCATED_ON_STACK_IS_TOO_BIG). Such a value is held
// and returned in a dynamic-size matrix (an extent of 1 stays fixed, so a row stays a RowVector); kiln
// still knows its extents statically and checks them.
template <class T, long Rows, long Cols>
inline constexpr bool fits_fixed_size =
    Rows < 0 || Cols < 0 || static_cast<long>(sizeof(T)) * Rows * Cols <= EIGEN_STACK_ALLOCATION_LIMIT;
template <class T, long Rows, long Cols>
using plain_matrix_t =
    Eigen::Matrix<T, static_cast<int>(fits_fixed_size<T, Rows, Cols> || Rows == 1 ? Rows : Eigen::Dynamic),
                  static_cast<int>(fits_fixed_size<T, Rows, Cols> || Cols == 1 ? Cols : Eigen::Dynamic)>;

// Where a materialized node lives: a scalar, or a matrix with the node's static extents (plain_matrix_t).
template <class Info>
using storage_t = std::conditional_t<Info::rank == 0, typename Info::scalar,
                                     plain_matrix_t<typename Info::scalar, Info::rows, Info::cols>>;

}  // namespace kiln::detail

#endif
