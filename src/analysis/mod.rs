//! Pure computations over `model` types: layout, summaries, exports. No I/O, no egui.

pub mod accuracy;
pub mod autotune;
pub mod backward_owner;
pub mod compile_rows;
pub mod compiles;
pub mod diff;
pub mod export;
pub mod export_svg;
pub mod fold;
pub mod graph_facts;
pub mod layout;
pub mod modules;
pub mod msprobe_link;
pub mod nan_trace;
pub mod op_family;
pub mod phase_layout;
pub mod provenance;
pub mod rank_spread;
pub mod ranks;
pub mod spatial;
pub mod summary;
pub mod task_nodes;
pub mod tensor_overlay;
pub mod tensor_stats;
pub mod timeline_stats;
