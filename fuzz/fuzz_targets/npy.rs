#![no_main]
//! `.npy` files: header, every dtype, truncation; then the statistics the inspector shows.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(arr) = fxray::sources::npy::NpyArray::from_vec(data.to_vec()) {
        let _ = arr.truncation();
        let _ = fxray::analysis::tensor_stats::summarize(&arr);
        let _ = fxray::analysis::tensor_stats::stats(&arr, 32);
        let _ = fxray::analysis::tensor_stats::compare(&arr, &arr);
    }
});
