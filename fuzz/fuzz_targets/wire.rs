#![no_main]
//! The ssh link as a client reads an agent and an agent a client: whatever a hostile or broken
//! peer sends (a lying length, a deflate bomb, bad JSON) is an error, never a panic.
use fxray::sources::remote::{proto, wire};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    let _ = wire::read_greeting(&mut r);
    while let Ok(Some(_)) = wire::read_frame::<proto::Answer>(&mut r) {}
    let mut r = data;
    while let Ok(Some(_)) = wire::read_frame::<proto::Ask>(&mut r) {}
});
