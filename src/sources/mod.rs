//! Finding and reading files: folder discovery, file-name grammars and the text parsers that
//! turn each format into `model` types. Nothing here knows about egui.

pub mod archive;
pub mod autotune;
pub mod data_dump;
pub mod debug_log;
pub mod discover;
pub mod entry;
pub mod fx_text;
pub mod load;
pub mod msprobe;
pub mod names;
pub mod npy;
pub mod output_code;
pub mod pt;
pub mod read;
pub mod remote;
pub mod tensor_file;
pub mod trace_json;
pub mod trace_log;
pub mod vfs;
pub mod watch;
