//! Plain Rust types for everything fxray shows. No I/O, no egui: `sources` builds these,
//! `analysis` computes over them, `app`/`ui` display them.

pub mod autotune;
pub mod compile;
pub mod fx;
pub mod fx_fmt;
pub mod index;
pub mod launch;
pub mod log;
pub mod msprobe;
pub mod names;
pub mod npy;
pub mod output_code;
pub mod progress;
pub mod size;
pub mod tensor;
pub mod timeline;
