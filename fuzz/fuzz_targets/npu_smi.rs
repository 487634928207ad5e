#![no_main]
//! `npu-smi info` output of any version (or garbage).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = fxray::runner::npu::parse_npu_smi(&text);
});
