//! Bulk fill of a region: SIMD kernels with runtime CPU dispatch, rayon over rows.
