#![no_main]
//! Capture JSON (raw, aligned, any Chrome trace): parse, pair, summarise, as the timeline does.
use fxray::analysis::timeline_stats as ts;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = fxray::sources::trace_json::parse(data) {
        let pairing = ts::pair_record_wait(&trace);
        let _ = ts::dependencies(&trace, &pairing);
        let _ = ts::stream_active(&trace);
        let _ = ts::summary(&trace, &pairing);
        let _ = trace.span();
    }
});
