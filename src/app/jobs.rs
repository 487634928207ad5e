//! Background work: each job runs on its own thread (or rayon's pool) and reports through one
//! channel. The UI drains the channel once per frame.

use crate::analysis::diff::{GraphDiff, TextDiffLine};
use crate::analysis::phase_layout::PhaseLayout;
use crate::analysis::summary::GraphFacts;
use crate::error::Error;
use crate::model::fx::FxFile;
use crate::model::index::DebugIndex;
use crate::model::log::ParsedLog;
use crate::model::output_code::OutputCodeIndex;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// Something a background job finished.
pub enum Msg {
    /// The index of an opened path. `generation` tells stale results (an older open) apart.
    Indexed {
        generation: u64,
        result: Result<DebugIndex, Error>,
        /// The files the index was built from, for the watcher to start from.
        set: Option<Box<crate::sources::discover::FileSet>>,
    },
    /// One graph file parsed for its facts (node counts, problems).
    Facts {
        generation: u64,
        path: PathBuf,
        facts: GraphFacts,
    },
    /// Every graph file of an index has been parsed.
    FactsDone {
        generation: u64,
    },
    /// One pass of the open phase, parsed.
    PassLoaded {
        key: PathBuf,
        pass: usize,
        result: Result<Arc<FxFile>, String>,
    },
    /// What each pass of the open phase changed from the one before (`diffs[k]` = k−1 → k).
    PassDiffs {
        key: PathBuf,
        diffs: Vec<Arc<GraphDiff>>,
    },
    /// The chosen A graph loaded and diffed against pass `b_pass`.
    Compared {
        key: PathBuf,
        a_path: PathBuf,
        b_pass: usize,
        result: Result<(Arc<FxFile>, Arc<GraphDiff>), String>,
    },
    /// "Find first pass": the pass found and the node to select there.
    FoundFirstPass {
        key: PathBuf,
        query: crate::analysis::diff::FirstQuery,
        found: Option<(usize, Option<String>)>,
    },
    /// The text diff of two graph files.
    TextDiff {
        a: PathBuf,
        b: PathBuf,
        result: Result<Arc<Vec<TextDiffLine>>, String>,
    },
    /// The union layout of the open phase.
    Layout {
        key: PathBuf,
        result: Result<Arc<PhaseLayout>, String>,
    },
    /// The module tree of a phase, built on `layout`.
    Fold {
        key: PathBuf,
        layout: Arc<PhaseLayout>,
        tree: Arc<crate::analysis::fold::FoldTree>,
    },
    /// The phase's `output_code.py`, indexed, or why it could not be read.
    OutputCode {
        key: PathBuf,
        result: Result<Arc<OutputCodeIndex>, String>,
    },
    /// An export finished: what was written, or why not.
    Exported {
        result: Result<PathBuf, String>,
    },
    /// A log file, parsed.
    Log {
        path: PathBuf,
        result: Result<Arc<ParsedLog>, String>,
    },
    /// The diff of a pass appended while watching with the pass before it.
    PassDiff {
        key: PathBuf,
        pass: usize,
        diff: Arc<GraphDiff>,
    },
    /// The phase's layout extended to `passes` passes.
    LayoutExtended {
        key: PathBuf,
        passes: usize,
        layout: Arc<PhaseLayout>,
    },
    Run(super::run::RunMsg),
    Timeline(super::timeline::TimelineMsg),
    Tensors(super::tensors::TensorsMsg),
    Autotune(super::autotune::AutotuneMsg),
}

/// Wakes the UI when a message arrives (egui's `request_repaint`); a no-op headless.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

pub struct Jobs {
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    waker: Waker,
    running: Arc<std::sync::atomic::AtomicUsize>,
}

impl Default for Jobs {
    fn default() -> Self {
        let (tx, rx) = channel();
        Jobs {
            tx,
            rx,
            waker: Arc::new(|| {}),
            running: Arc::default(),
        }
    }
}

impl Jobs {
    pub fn set_waker(&mut self, waker: Waker) {
        self.waker = waker;
    }

    /// Runs `work` on a new thread; every message it sends wakes the UI.
    pub fn spawn(&self, work: impl FnOnce(&(dyn Fn(Msg) + Sync)) + Send + 'static) {
        use std::sync::atomic::Ordering;
        let tx = self.tx.clone();
        let waker = self.waker.clone();
        let running = self.running.clone();
        running.fetch_add(1, Ordering::SeqCst);
        std::thread::spawn(move || {
            let send = |m: Msg| {
                let _ = tx.send(m);
                waker();
            };
            work(&send);
            running.fetch_sub(1, Ordering::SeqCst);
            waker();
        });
    }

    /// The waker, for services that report through channels of their own.
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    pub fn try_recv(&self) -> Option<Msg> {
        self.rx.try_recv().ok()
    }

    /// Jobs still running (for a busy indicator, and for tests waiting on the app).
    pub fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }
}
