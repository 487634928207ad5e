#![no_main]
//! msprobe `dump.json`, `stack.json` and `construct.json`, and npy dump file names.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = fxray::sources::msprobe::parse(data, 0, "rank0");
    let _ = fxray::sources::msprobe::beside::stacks(data, &mut Vec::new());
    let _ = fxray::sources::msprobe::beside::parents(data, &mut Vec::new());
    let name = String::from_utf8_lossy(data);
    let _ = fxray::sources::data_dump::parse_name(&name);
    let _ = fxray::sources::msprobe::module_path(&name);
});
