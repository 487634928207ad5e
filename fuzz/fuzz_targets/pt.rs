#![no_main]
//! `.pt` files (torch.save): the zip, the pickle read as data, the tensor's layout; then the
//! statistics the tensor panel shows.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(arr) = fxray::sources::pt::from_vec(data.to_vec()) {
        let _ = fxray::analysis::tensor_stats::summarize(&arr);
    }
    let _ = fxray::sources::pt::pickle::load(data);
});
