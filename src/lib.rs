//! fxray: see inside a `torch.compile` run.
//!
//! Data flows one way: `sources` (find and read files) → `model` (plain types) → `analysis`
//! (pure functions) → `pipeline` (headless compositions) → `app` (state, background jobs) →
//! `ui` (egui panels). The CLI in `cli` drives the same core headless. Two services feed `app` through channels: the watcher
//! (`sources::watch`) and the runner (`runner`), which launches compiles.
//!
//! # Layers
//!
//! The rule, written once: each line names a top-level module and the modules it may use
//! (`-`: none, `*`: any). A module may always use itself and external crates. `ui` reaches
//! the files, the runner and the watcher only through `app`, which re-exports the few service
//! types the panels name. Unit tests (`#[cfg(test)] mod …`) are exempt: they are not shipped,
//! and reading a real graph through `sources` is the honest way for an `analysis` test to
//! build its input. `cli` reaches `app` only through the window (`ui`), so every headless
//! composition it needs lives in `pipeline`. `main.rs` is the binary, outside the library. `tests/it/layering.rs` reads
//! this block and fails on any `crate::` path in `src/` against it.
//!
//! ```text
//! error:    -
//! paths:    -
//! platform: -
//! model:    error
//! sources:  model, error, paths, platform
//! analysis: model, error
//! pipeline: sources, model, analysis, runner, error, paths
//! runner:   model, error, paths, platform
//! agent:    pipeline, sources, model, analysis, runner, error, paths
//! app:      pipeline, sources, model, analysis, runner, error, paths
//! ui:       app, model, analysis, error
//! cli:      agent, pipeline, sources, model, analysis, runner, ui, error, paths, platform
//! ```

pub mod agent;
pub mod analysis;
pub mod app;
pub mod cli;
pub mod error;
pub mod model;
pub mod paths;
pub mod pipeline;
pub mod platform;
pub mod runner;
pub mod sources;
pub mod ui;
