//! The integration tests, in one binary so CI links egui and wgpu once: every module is one
//! area (parser, diff, watch, UI…). Shared helpers live in `common`.

mod autotune;
mod cli;
mod common;
mod compiles;
mod diff;
mod discover;
mod e2e_torch;
mod e2e_torch_compiles;
mod e2e_torch_modules;
mod export_svg;
mod fonts;
mod fx_parser;
mod hostile;
mod layering;
mod layout;
mod logs;
mod modules;
mod phase_layout;
mod runner;
mod screenshots;
mod tensors;
mod timeline;
mod ui_autotune;
mod ui_compiles;
mod ui_diff;
mod ui_fold;
mod ui_graph;
mod ui_panels;
mod ui_run;
mod ui_scrub;
mod ui_status_bar;
mod ui_tensors;
mod ui_timeline;
mod ui_watch;
mod watch;
