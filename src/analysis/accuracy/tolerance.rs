//! When a changed result is floating-point noise: torch's accuracy rule against a float64
//! reference (`torch._dynamo.utils.same(original, optimized, fp64_ref)`, the check its accuracy
//! minifier makes), applied to one tensor.
//!
//! A result *agrees* with the original when it is `allclose` to it (`|orig − opt| ≤ tol +
//! tol·|opt|`, non-finite values close only when equal, NaN equal to NaN), or else when its error
//! against a float64 run of the original graph is at most `m` times the original's own error
//! against that run, plus `tol / 10`: `rmse(fp64, optimized) ≤ m · rmse(fp64, original) +
//! tol / 10`. `m` is 3 for half-precision results, tensors of fewer than 1,000 elements and 4-d
//! tensors whose last two dimensions are 1 (noise dominates there), else 2. A fixed epsilon
//! would call a reordered fp32 sum a fault in one model and miss a bf16 reduction in another;
//! the reference measures how exact the original itself is. As in torch, a result with no NaN
//! where the original has one passes when it is within 4e-2 of the reference, and two NaN
//! errors pass (`equal_nan`, as the minifier sets it).
//!
//! `tol` is `same`'s default, 1e-4. The minifier passes its `repro_tolerance`, 1e-3, whose
//! `allclose` shortcut lets a tanh GELU in place of the erf one (max abs err 2.3e-4 on the
//! stage_faults case) pass as noise; 1e-4 does not.
//!
//! Two choices differ from calling `same` with torch's defaults, both so a pass that lowers
//! precision is seen where it does so: both tensors are compared in float64 (`exact_dtype=False`
//! would first round the original to a bf16 result's dtype), and a dtype change is no failure by
//! itself. Without a reference, only the `allclose` test is left, and [`Judged::reference`] says
//! so.

use crate::model::npy::{Elem, NpyArray};
use serde::Serialize;

/// torch's `same(…, tol=1e-4)`.
pub const TOL: f64 = 1e-4;

/// One tensor judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judged {
    /// Within noise of the original.
    pub agrees: bool,
    /// `allclose(original, optimized, rtol=1e-4, atol=1e-4)`.
    pub allclose: bool,
    /// `rmse(fp64, original)`, when a reference was given.
    pub ref_error: Option<f64>,
    /// `rmse(fp64, optimized)`, when a reference was given.
    pub res_error: Option<f64>,
    pub multiplier: f64,
    /// A float64 reference was used (else `allclose` alone decided).
    pub reference: bool,
}

impl Judged {
    /// The rule's bound on `res_error`: `m · ref_error + tol / 10`.
    pub fn bound(&self) -> Option<f64> {
        Some(self.multiplier * self.ref_error? + TOL / 10.0)
    }
}

/// Why two tensors cannot be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unjudged {
    #[error("shapes differ: {0:?} against {1:?}")]
    Shape(Vec<u64>, Vec<u64>),
    #[error("the float64 reference's shape {0:?} is not the original's")]
    ReferenceShape(Vec<u64>),
    #[error("cut file: not every element is present")]
    Cut,
}

fn complete(a: &NpyArray) -> bool {
    a.available == a.info.elements()
}

/// Judges `optimized` against `original`, with `reference` (the original graph run in float64)
/// when there is one.
pub fn judge(
    original: &NpyArray,
    optimized: &NpyArray,
    reference: Option<&NpyArray>,
) -> Result<Judged, Unjudged> {
    let squeeze = super::metrics::squeeze;
    if squeeze(&original.info.shape) != squeeze(&optimized.info.shape) {
        return Err(Unjudged::Shape(
            original.info.shape.clone(),
            optimized.info.shape.clone(),
        ));
    }
    if let Some(r) = reference
        && squeeze(&r.info.shape) != squeeze(&original.info.shape)
    {
        return Err(Unjudged::ReferenceShape(r.info.shape.clone()));
    }
    if !complete(original) || !complete(optimized) || reference.is_some_and(|r| !complete(r)) {
        return Err(Unjudged::Cut);
    }
    let n = original.info.elements();
    let shape = &original.info.shape;
    let half = matches!(optimized.elem, Elem::F16 | Elem::BF16);
    let one_by_one = shape.len() == 4 && shape[2] == 1 && shape[3] == 1;
    let multiplier = if half || n < 1000 || one_by_one {
        3.0
    } else {
        2.0
    };
    let at = |a: &NpyArray, i: u64| a.get_c(i).unwrap_or(f64::NAN);
    let allclose = close_all(n, |i| (at(original, i), at(optimized, i)), TOL);
    let Some(r) = reference else {
        return Ok(Judged {
            agrees: allclose,
            allclose,
            ref_error: None,
            res_error: None,
            multiplier,
            reference: false,
        });
    };
    let any_nan = |a: &NpyArray| (0..n).any(|i| at(a, i).is_nan());
    // The optimized run is the better one: no NaN where the original has one, and near the
    // reference.
    // The original's NaN first: nearly always none, and the other scans are then skipped.
    let mended = any_nan(original)
        && !any_nan(r)
        && !any_nan(optimized)
        && close_all(n, |i| (at(r, i), at(optimized, i)), 4e-2);
    let rmse = |x: &NpyArray| {
        let s: f64 = (0..n).map(|i| (at(r, i) - at(x, i)).powi(2)).sum();
        if n == 0 { 0.0 } else { (s / n as f64).sqrt() }
    };
    let (ref_error, res_error) = (rmse(original), rmse(optimized));
    let within = res_error <= multiplier * ref_error + TOL / 10.0;
    let both_nan = ref_error.is_nan() && res_error.is_nan();
    Ok(Judged {
        agrees: allclose || mended || within || both_nan,
        allclose,
        ref_error: Some(ref_error),
        res_error: Some(res_error),
        multiplier,
        reference: true,
    })
}

/// `torch.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)` over the `n` pairs `(a, b)`.
fn close_all(n: u64, pair: impl Fn(u64) -> (f64, f64), tol: f64) -> bool {
    (0..n).all(|i| {
        let (a, b) = pair(i);
        if a.is_nan() || b.is_nan() {
            a.is_nan() && b.is_nan()
        } else if !a.is_finite() || !b.is_finite() {
            a == b
        } else {
            (a - b).abs() <= tol + tol * b.abs()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tensor::TensorInfo;

    fn arr(v: &[f64], elem: Elem) -> NpyArray {
        let bytes: Vec<u8> = match elem {
            Elem::F64 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            _ => v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
        };
        let dtype = if elem == Elem::F64 { "<f8" } else { "<f4" };
        let info = TensorInfo {
            dtype: dtype.into(),
            shape: vec![v.len() as u64],
            fortran_order: false,
        };
        NpyArray::new(Box::new(bytes), 0, info, elem, false)
    }

    #[test]
    fn noise_the_original_also_has_agrees_and_a_larger_error_departs() {
        let exact: Vec<f64> = (0..8).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let reference = arr(&exact, Elem::F64);
        let original = arr(&exact, Elem::F32);
        // one fp32 rounding different: noise
        let noisy: Vec<f64> = exact.iter().map(|x| x * (1.0 + 1e-7)).collect();
        let j = judge(&original, &arr(&noisy, Elem::F32), Some(&reference)).unwrap();
        assert!(j.agrees && j.allclose, "{j:?}");
        // a 1e-3 relative error: beyond allclose and beyond 3× the original's own error
        let off: Vec<f64> = exact.iter().map(|x| x * (1.0 + 1e-3)).collect();
        let j = judge(&original, &arr(&off, Elem::F32), Some(&reference)).unwrap();
        assert!(!j.agrees && !j.allclose, "{j:?}");
        assert!(j.res_error.unwrap() > j.bound().unwrap());
        assert_eq!(j.multiplier, 3.0);
    }

    #[test]
    fn an_original_far_from_float64_widens_the_tolerance() {
        let exact: Vec<f64> = (0..8).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let reference = arr(&exact, Elem::F64);
        // the original itself is 1e-3 off (it stored bf16 values): 1.5e-3 is within 3×
        let orig: Vec<f64> = exact.iter().map(|x| x * (1.0 + 1e-3)).collect();
        let res: Vec<f64> = exact.iter().map(|x| x * (1.0 - 1.5e-3)).collect();
        let j = judge(
            &arr(&orig, Elem::F32),
            &arr(&res, Elem::F32),
            Some(&reference),
        )
        .unwrap();
        assert!(j.agrees && !j.allclose, "{j:?}");
        // without the reference only allclose is left, and it fails
        let j = judge(&arr(&orig, Elem::F32), &arr(&res, Elem::F32), None).unwrap();
        assert!(!j.agrees && !j.reference);
    }

    #[test]
    fn infinities_are_close_only_when_equal() {
        let j = |a: f64, b: f64| {
            judge(&arr(&[1.0, a], Elem::F32), &arr(&[1.0, b], Elem::F32), None)
                .unwrap()
                .agrees
        };
        assert!(j(f64::INFINITY, f64::INFINITY));
        assert!(!j(f64::INFINITY, f64::NEG_INFINITY));
        assert!(!j(f64::INFINITY, 1e30));
        assert!(
            j(f64::NAN, f64::NAN),
            "the same NaN in both stages is no pass's doing"
        );
    }

    #[test]
    fn nan_where_the_original_has_none_departs_and_shapes_must_match() {
        let reference = arr(&[1.0, 2.0], Elem::F64);
        let j = judge(
            &arr(&[1.0, 2.0], Elem::F32),
            &arr(&[1.0, f64::NAN], Elem::F32),
            Some(&reference),
        )
        .unwrap();
        assert!(!j.agrees);
        let e = judge(&arr(&[1.0, 2.0], Elem::F32), &arr(&[1.0], Elem::F32), None);
        assert!(matches!(e, Err(Unjudged::Shape(..))));
    }
}
