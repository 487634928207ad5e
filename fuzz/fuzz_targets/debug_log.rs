#![no_main]
//! debug.log in any of the formats fxray reads.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = fxray::sources::read::decode(data.to_vec());
    let _ = fxray::sources::debug_log::parse_log(&text.text);
});
