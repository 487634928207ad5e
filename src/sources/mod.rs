//! Finding and reading files: folder discovery, file-name grammars and the text parsers that
//! turn each format into `model` types. Nothing here knows about egui.

pub mod autotune;
pub mod debug_log;
pub mod discover;
pub mod fx_text;
pub mod load;
pub mod names;
pub mod output_code;
pub mod read;
