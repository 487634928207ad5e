#![no_main]
//! The archive readers (tar, tar.gz, zip) on any bytes: bounded, no panic, nothing written.
use fxray::sources::archive::{Format, from_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for format in [Format::TarGz, Format::Tar, Format::Zip] {
        let _ = from_bytes(format, data);
    }
});
