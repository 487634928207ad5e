//! The compile story of the open tree (issue 15): its trace logs read and joined to the
//! `model__N` folders in the background, the selected compile and graph break, and the
//! commands the Compiles view issues (open a model's graph, show the flame chart). A feature
//! that owns its state (`app::part`); adding the runs written from the trace to the tree's
//! index stays the app's, which owns the index.

use super::App;
use super::timeline::TimelineState;
use crate::analysis::compiles::{self, ModelLink};
use crate::analysis::timeline_stats::Timeline;
pub use crate::pipeline::compiles::Story;
use crate::pipeline::compiles::read_stories;
use crate::sources::trace_log;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A selected compile: (story, compile) indices.
pub type CompileRef = (usize, usize);

/// What the Compiles view shows and has loaded.
#[derive(Default)]
pub struct CompilesState {
    /// The tree (root, its indexed trace logs) the stories were read for.
    loaded_for: Option<(PathBuf, Vec<PathBuf>)>,
    pub stories: Vec<Arc<Story>>,
    pub loading: bool,
    pub load_time: Option<Duration>,
    pub selected: Option<CompileRef>,
    /// The selected graph break: its compile and its index in the compile's breaks.
    pub selected_break: Option<(CompileRef, usize)>,
    /// Why each model exists, by (run, model) — for the tree.
    pub notes: HashMap<(String, String), String>,
    /// Models written from graphs found only in the trace (`app::trace_graphs`): (story,
    /// link), and the runs holding them, shown in the tree beside the viewed folder's runs.
    pub extra_links: Vec<(usize, ModelLink)>,
    extra_runs: Vec<crate::model::index::Run>,
    /// Per story, one row per compile attempt (tlparse's `[0/0]`, `[0/0_1]`), each with the
    /// model folder it wrote, in the viewed tree or served from the trace.
    pub rows: Vec<Vec<crate::analysis::compile_rows::AttemptRow>>,
}

/// About the open tree: opening one (the same one again too) reads its trace logs afresh.
impl super::part::Feature for CompilesState {}

/// What the background job read for the tree `key` (root, its indexed trace logs).
pub struct CompilesMsg {
    key: (PathBuf, Vec<PathBuf>),
    stories: Vec<Story>,
    time: Duration,
    extra_links: Vec<(usize, ModelLink)>,
    extra_runs: Vec<crate::model::index::Run>,
}

impl super::jobs::Apply<CompilesState> for CompilesMsg {
    fn is_current(&self, st: &CompilesState) -> bool {
        st.loaded_for.as_ref() == Some(&self.key)
    }

    /// The runs written from the trace join the index at the next `want_compiles` (the same
    /// poll): the index is the app's.
    fn apply(self, st: &mut CompilesState) {
        st.notes = self.stories.iter().flat_map(Story::model_notes).collect();
        for (s, l) in &self.extra_links {
            st.notes.insert(
                (l.run.clone(), l.model.clone()),
                compiles::why(&self.stories[*s].trace, l.compile),
            );
        }
        st.rows = self
            .stories
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut links = s.links.clone();
                links.extend(
                    self.extra_links
                        .iter()
                        .filter(|(si, _)| *si == i)
                        .map(|(_, l)| l.clone()),
                );
                crate::analysis::compile_rows::attempt_rows(&s.path, &s.trace, &links)
            })
            .collect();
        st.stories = self.stories.into_iter().map(Arc::new).collect();
        st.extra_links = self.extra_links;
        st.extra_runs = self.extra_runs;
        st.load_time = Some(self.time);
        st.loading = false;
    }
}

/// Serves each story's trace-only graphs from memory (see `trace_graphs`) and indexes them.
fn materialize_all(stories: &[Story]) -> (Vec<(usize, ModelLink)>, Vec<crate::model::index::Run>) {
    let mut links = Vec::new();
    let mut runs = Vec::new();
    for (i, s) in stories.iter().enumerate() {
        let joined: Vec<usize> = s.links.iter().map(|l| l.compile).collect();
        if let Some((run, ls)) = super::trace_graphs::materialize(&s.path, &s.trace, &joined)
            && let Ok(idx) = crate::pipeline::tree::index(&run)
        {
            links.extend(ls.into_iter().map(|l| (i, l)));
            runs.extend(idx.runs);
        }
    }
    (links, runs)
}

impl App {
    /// Starts reading the open tree's trace logs when they are not the ones read. Called once
    /// per frame; cheap when nothing changed.
    pub(super) fn want_compiles(&mut self) {
        let (st, cx) = self.part::<CompilesState>();
        let Some(ws) = cx.workspace else {
            return;
        };
        // Compared without cloning: this runs every frame. The trace logs are looked for (in
        // the folders above, which is I/O) by the job, not here.
        if st
            .loaded_for
            .as_ref()
            .is_some_and(|(r, t)| *r == ws.index.root && *t == ws.index.traces)
        {
            self.add_extra_runs();
            return;
        }
        let key = (ws.index.root.clone(), ws.index.traces.clone());
        let index = ws.index.clone();
        st.stories.clear();
        st.notes.clear();
        st.extra_links.clear();
        st.extra_runs.clear();
        st.rows.clear();
        st.selected = None;
        st.selected_break = None;
        st.loaded_for = Some(key.clone());
        st.loading = true;
        cx.spawn::<CompilesState>(move |out| {
            let t = std::time::Instant::now();
            let traces = trace_log::find_beside(&key.0, &index);
            let stories = read_stories(&traces, Some(&index));
            let time = t.elapsed();
            let (extra_links, extra_runs) = materialize_all(&stories);
            out.send(CompilesMsg {
                key,
                stories,
                time,
                extra_links,
                extra_runs,
            });
        });
    }

    /// A re-index (the watcher) drops the runs added from the cache: adds them again.
    fn add_extra_runs(&mut self) {
        let (Some(ws), Some(st)) = (&mut self.workspace, self.parts.peek::<CompilesState>()) else {
            return;
        };
        for run in &st.extra_runs {
            if !ws.index.runs.iter().any(|r| r.path == run.path) {
                ws.index.runs.push(run.clone());
            }
        }
    }
}

impl CompilesState {
    pub fn story(&self, s: usize) -> Option<&Arc<Story>> {
        self.stories.get(s)
    }

    /// Selects a graph break (and its compile).
    pub fn select_break(&mut self, c: CompileRef, b: usize) {
        self.selected = Some(c);
        self.selected_break = Some((c, b));
    }

    pub fn select(&mut self, c: CompileRef) {
        self.selected = Some(c);
        if self.selected_break.is_some_and(|(bc, _)| bc != c) {
            self.selected_break = None;
        }
    }

    /// The model folder compile `c` went to: in the viewed tree, else written from the trace.
    pub fn link_of(&self, c: CompileRef) -> Option<&ModelLink> {
        let story = self.stories.get(c.0)?;
        compiles::model_of(&story.links, c.1).or_else(|| {
            self.extra_links
                .iter()
                .find(|(s, l)| *s == c.0 && l.compile == c.1)
                .map(|(_, l)| l)
        })
    }

    /// The Dynamo graph file of the model compile `c` went to.
    pub fn model_graph(&self, ws: Option<&super::Workspace>, c: CompileRef) -> Option<PathBuf> {
        let link = self.link_of(c)?;
        let ws = ws?;
        ws.index
            .runs
            .iter()
            .filter(|r| r.name == link.run)
            .flat_map(|r| &r.models)
            .find(|m| m.name == link.model)?
            .dynamo_graph
            .clone()
    }
}

impl App {
    /// Follows the Compiles tab's requests for a flame chart ([`Nav::Flame`](super::Nav::Flame)):
    /// the chart is drawn by the timeline, a feature the tab does not see.
    pub fn follow_flame(&mut self) {
        while let Some((path, compile)) = self.nav.take(|r| match r {
            super::Nav::Flame { story, compile } => Some((story.clone(), compile.clone())),
            _ => None,
        }) {
            let story = self
                .peek::<CompilesState>()
                .and_then(|s| s.stories.iter().find(|s| s.path == path).cloned());
            if let Some(story) = story {
                self.show_flame(&story, compile.as_deref());
            }
        }
    }

    /// Shows the compile-time spans of `story` (all compiles, or only `compile_id`) as a flame
    /// chart in the timeline view.
    pub fn show_flame(&mut self, story: &Story, compile_id: Option<&str>) {
        let t = std::time::Instant::now();
        let flame = Arc::new(Timeline::new(compiles::flame_of(&story.trace, compile_id)));
        let path = match compile_id {
            // Distinct paths make the view fit each chart once.
            Some(id) => {
                let mut p = story.path.clone().into_os_string();
                p.push(format!("#{}", id.replace('/', "_")));
                PathBuf::from(p)
            }
            None => story.path.clone(),
        };
        self.part::<TimelineState>()
            .0
            .show(path, flame, t.elapsed());
        self.nav
            .push(super::Nav::ShowTab(crate::app::TabId::TIMELINE));
    }
}
