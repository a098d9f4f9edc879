// kiln::spec: an argument without data, for kiln::trace and kiln::lower (JAX's ShapeDtypeStruct).
//
//   kiln::spec<double, 3, 4>{}                  a fixed 3 x 4 matrix of f64
//   kiln::spec<double, Eigen::Dynamic, 3>(n)    n x 3, n given at run time
//   kiln::spec<float, Eigen::Dynamic, Eigen::Dynamic>(m, n)
//   kiln::spec<double>{}                        a scalar
//
// A spec traces exactly as an Eigen::Matrix<T, Rows, Cols> (or a T) of those extents would, anywhere in a
// pytree. It has no values, so a graph traced from it can be inspected and lowered, not evaluated: call
// the compiled function with real arguments.
#ifndef KILN_SPEC_HPP
#define KILN_SPEC_HPP

#include <kiln/dtype.hpp>
#include <kiln/errors.hpp>

#include <string>

namespace kiln {

template <dtype T, int... Extents>
struct spec;

template <dtype T>
struct spec<T> {
    using kiln_spec_scalar = T;
    static constexpr int rank = 0;
};

template <dtype T, int Rows, int Cols>
struct spec<T, Rows, Cols> {
    static_assert(Rows >= -1 && Cols >= -1, "kiln: a spec's extent is a size or Eigen::Dynamic (-1)");
    using kiln_spec_scalar = T;
    static constexpr int rank = 2;
    static constexpr int rows_at_compile_time = Rows, cols_at_compile_time = Cols;

    // Fixed extents: nothing to give.
    constexpr spec()
        requires(Rows >= 0 && Cols >= 0)
        : rows_(Rows), cols_(Cols) {}
    // One dynamic extent (a vector, or a matrix with one fixed side): that extent.
    constexpr explicit spec(long n)
        requires((Rows < 0) != (Cols < 0))
        : rows_(Rows < 0 ? n : Rows), cols_(Cols < 0 ? n : Cols) {
        check();
    }
    // Both extents; a fixed one must be what the type says.
    constexpr spec(long rows, long cols) : rows_(rows), cols_(cols) { check(); }

    constexpr long rows() const { return rows_; }
    constexpr long cols() const { return cols_; }

private:
    constexpr void check() const {
        if (rows_ < 0 || cols_ < 0 || (Rows >= 0 && rows_ != Rows) || (Cols >= 0 && cols_ != Cols))
            throw shape_error("kiln: a spec of fixed extents [" + std::to_string(Rows) + "," + std::to_string(Cols) +
                              "] (-1: dynamic) was given the extents [" + std::to_string(rows_) + "," +
                              std::to_string(cols_) + "]");
    }
    long rows_, cols_;
};

}  // namespace kiln

#endif
