#![no_main]
//! output_code.py: the graph name and the identifier index.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = fxray::sources::read::decode(data.to_vec());
    let _ = fxray::sources::output_code::fx_graph_name(&text.text);
    let _ = fxray::sources::output_code::OutputCodeIndex::new(&text.text);
});
