/* A kiln-compiled dense layer behind a plain C interface: no Eigen, no kiln, no C++ needed to call it. */
#ifndef KILN_CONSUMER_KERNEL_H
#define KILN_CONSUMER_KERNEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Returns sum over i < n, k < h of tanh( sum over j < d of x[i][j] * w[j][k]  +  b[k] ).
 *
 * All matrices are COLUMN-MAJOR (Eigen's default), without padding:
 *   x  n x d   element (i, j) at x[i + j * n]
 *   w  d x h   element (j, k) at w[j + k * d]
 *   b  h       b[k], added to every row of x * w
 * n, d, h >= 1. */
double kiln_layer_kernel(const double* x, const double* w, const double* b, long n, long d, long h);

#ifdef __cplusplus
}
#endif

#endif
