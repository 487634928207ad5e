#![no_main]
//! FX `print_readable` text: any bytes, decoded as fxray decodes files.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = fxray::sources::read::decode(data.to_vec());
    let file = fxray::sources::fx_text::parse_fx(&text.text);
    // What the app does next with a parsed pass.
    let _ = fxray::analysis::summary::GraphFacts::of(&file);
    let _ = fxray::analysis::phase_layout::pass_entries(&file);
    // What pairing a backward with its forward reads first.
    let _ = fxray::sources::fx_text::interface(&text.text);
});
