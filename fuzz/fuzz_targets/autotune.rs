#![no_main]
//! `inductor_asc` autotune log lines and `optimize_tiling` cache files.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = fxray::sources::autotune::parse_asc_log(&text, "fuzz");
    let _ = fxray::sources::autotune::parse_optimize_tiling(std::path::Path::new("x"), &text);
    let _ = fxray::sources::autotune::kernel_in_path(&text);
});
