// kiln: trace a generic C++ function into a static computation graph at compile time, and evaluate it
// with Eigen. Include this header for everything.
#ifndef KILN_KILN_HPP
#define KILN_KILN_HPP

#include <kiln/version.hpp>

#include <kiln/arguments.hpp>
#include <kiln/constant.hpp>
#include <kiln/dtype.hpp>
#include <kiln/env.hpp>
#include <kiln/errors.hpp>
#include <kiln/path.hpp>
#include <kiln/spec.hpp>
#include <kiln/traced.hpp>

#include <kiln/ops/abs.hpp>
#include <kiln/ops/add.hpp>
#include <kiln/ops/argmax.hpp>
#include <kiln/ops/argmin.hpp>
#include <kiln/ops/at.hpp>
#include <kiln/ops/cast.hpp>
#include <kiln/ops/compare.hpp>
#include <kiln/ops/concatenate.hpp>
#include <kiln/ops/cos.hpp>
#include <kiln/ops/cumprod.hpp>
#include <kiln/ops/cumsum.hpp>
#include <kiln/ops/div.hpp>
#include <kiln/ops/dot.hpp>
#include <kiln/ops/dynamic_slice.hpp>
#include <kiln/ops/exp.hpp>
#include <kiln/ops/expm1.hpp>
#include <kiln/ops/eye.hpp>
#include <kiln/ops/full.hpp>
#include <kiln/ops/iota.hpp>
#include <kiln/ops/log.hpp>
#include <kiln/ops/log1p.hpp>
#include <kiln/ops/log_softmax.hpp>
#include <kiln/ops/logsumexp.hpp>
#include <kiln/ops/matmul.hpp>
#include <kiln/ops/matrix.hpp>
#include <kiln/ops/max.hpp>
#include <kiln/ops/maximum.hpp>
#include <kiln/ops/mean.hpp>
#include <kiln/ops/min.hpp>
#include <kiln/ops/minimum.hpp>
#include <kiln/ops/mul.hpp>
#include <kiln/ops/neg.hpp>
#include <kiln/ops/one_hot.hpp>
#include <kiln/ops/outer.hpp>
#include <kiln/ops/pad.hpp>
#include <kiln/ops/pow.hpp>
#include <kiln/ops/prod.hpp>
#include <kiln/ops/reshape.hpp>
#include <kiln/ops/rsqrt.hpp>
#include <kiln/ops/sigmoid.hpp>
#include <kiln/ops/sin.hpp>
#include <kiln/ops/size.hpp>
#include <kiln/ops/slice.hpp>
#include <kiln/ops/sort.hpp>
#include <kiln/ops/softmax.hpp>
#include <kiln/ops/sqrt.hpp>
#include <kiln/ops/square.hpp>
#include <kiln/ops/squeeze.hpp>
#include <kiln/ops/stop_gradient.hpp>
#include <kiln/ops/sub.hpp>
#include <kiln/ops/sum.hpp>
#include <kiln/ops/take.hpp>
#include <kiln/ops/tan.hpp>
#include <kiln/ops/tanh.hpp>
#include <kiln/ops/transpose.hpp>
#include <kiln/ops/where.hpp>
#include <kiln/ops/wrt.hpp>

#include <kiln/grad.hpp>
#include <kiln/jit.hpp>
#include <kiln/loops.hpp>
#include <kiln/optim.hpp>
#include <kiln/stages.hpp>
#include <kiln/vmap.hpp>

#endif
