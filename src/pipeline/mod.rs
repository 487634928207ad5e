//! Headless compositions of `sources` and `analysis`: what both the CLI and the window need
//! done, start to finish, with no UI state (a compile story read and joined, the autotune
//! report, tensor summaries, the module context of a phase, an accuracy compare).
//!
//! A pipeline takes paths or model values and returns model/analysis values; it may read files
//! (through `sources`) and use rayon, but it keeps no state between calls and never touches
//! `app`: the app runs a pipeline inside a job, the CLI calls it directly. Work on a remote
//! tree's files runs on its server through [`remote`] (one trait, one runner, one table).

pub mod autotune;
pub mod backward_owner;
pub mod bisect;
pub mod compare;
pub mod compiles;
pub mod facts;
pub mod failure;
pub mod module_guards;
pub mod modules;
pub mod phase;
pub mod remote;
pub mod run;
pub mod same_text;
pub mod sample;
pub mod stages;
pub mod summary;
pub mod tensors;
pub mod tree;
