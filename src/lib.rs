//! fxray: see inside a `torch.compile` run.
//!
//! Data flows one way: `sources` (find and read files) → `model` (plain types) → `analysis`
//! (pure functions) → `app` (state, background jobs) → `ui` (egui panels). The CLI in `cli`
//! drives the same core headless. Two services feed `app` through channels: the watcher
//! (`sources::watch`) and the runner (`runner`), which launches compiles.

pub mod analysis;
pub mod app;
pub mod cli;
pub mod error;
pub mod model;
pub mod runner;
pub mod sources;
pub mod ui;
