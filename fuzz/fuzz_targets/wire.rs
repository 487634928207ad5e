#![no_main]
//! The ssh link as a client reads an agent and an agent a client: whatever a hostile or broken
//! peer sends (a lying length, a deflate bomb, bad JSON, a stream item that does not read) is
//! an error, never a panic.
use fxray::sources::remote::{proto, wire};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    let _ = wire::read_greeting(&mut r);
    while let Ok(Some(_)) = wire::read_frame::<proto::Answer>(&mut r) {}
    let mut r = data;
    while let Ok(Some(_)) = wire::read_frame::<proto::Ask>(&mut r) {}
    // The items a phase and a compile story stream as.
    let _ = wire::from_item::<fxray::model::fx::FxFile>(data);
    let _ = wire::from_item::<fxray::analysis::diff::GraphDiff>(data).map(|d| d.is_well_formed());
    let _ = wire::from_item::<fxray::analysis::phase_layout::PhaseLayout>(data)
        .map(|l| l.is_well_formed());
    let _ = wire::from_item::<fxray::pipeline::compiles::Story>(data);
});
