// The oracle's pose_residual (tests/oracle/generate.py): ||R(w) p + t - q||² with R(w) the rotation of the
// axis-angle vector w (Rodrigues: I + sin(th) K + (1 - cos(th)) K K, K the skew matrix of w / |w|), written
// with kiln::at and kiln::matrix as tests/test_oracle_forward.cpp does, and its data. Timed forward in
// bench_forward.cpp and with its gradient in bench_jacobian.cpp.
#ifndef KILN_BENCH_POSE_RESIDUAL_HPP
#define KILN_BENCH_POSE_RESIDUAL_HPP

#include <kiln/kiln.hpp>

#include <Eigen/Core>

namespace kiln_bench {

struct pose_data {
    Eigen::Vector3d w{0.3, -0.2, 0.5}, t{0.1, 0.7, -0.4}, p{-0.5, 0.2, 0.9}, q{0.3, 0.3, -0.8};
};

inline auto const pose_residual = [](auto const& w, auto const& t, auto const& p, auto const& q) {
    auto const th = kiln::sqrt(kiln::sum(w * w));
    auto const k = w / th;
    auto const k0 = kiln::at<0>(k);
    auto const k1 = kiln::at<1>(k);
    auto const k2 = kiln::at<2>(k);
    auto const skew = kiln::matrix<3, 3>(kiln::c<0.0>, -k2, k1,
                                         k2, kiln::c<0.0>, -k0,
                                         -k1, k0, kiln::c<0.0>);
    auto const rot = kiln::eye<3>() + kiln::sin(th) * skew + (kiln::c<1> - kiln::cos(th)) * kiln::matmul(skew, skew);
    auto const r = kiln::matmul(rot, p) + t - q;
    return kiln::sum(r * r);
};

}  // namespace kiln_bench

#endif
