//! The module tree of the pass on screen, with its repeated blocks (what `fxray modules`
//! prints): built in the background for each pass the Module tree tab is shown with. A feature that
//! owns its state (`app::part`): no field of `App`, its own message, its commands on a `Cx`.

use super::jobs::Apply;
use super::part::Cx;
use super::{Loading, TabId};
pub use crate::pipeline::modules::ModuleReport;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The Module tree tab's id.
pub const TAB: TabId = TabId::new("modules");

/// The report of one pass.
#[derive(Default)]
pub struct ModulesState {
    /// The pass the report is of (or is being made for).
    pub pass: Option<PathBuf>,
    pub report: Loading<Arc<ModuleReport>>,
}

impl super::part::Feature for ModulesState {}

impl ModulesState {
    /// Makes the report of `pass` unless it is made or under way. Cheap to call every frame.
    pub fn want(&mut self, cx: &Cx, pass: &Path) {
        if self.pass.as_deref() == Some(pass) {
            return;
        }
        self.pass = Some(pass.to_path_buf());
        self.report = Loading::Loading;
        let pass = pass.to_path_buf();
        cx.spawn::<ModulesState>(move |out| {
            let result = crate::pipeline::modules::report(&pass).map(Arc::new);
            out.send(Report { pass, result });
        });
    }
}

/// A report made.
struct Report {
    pass: PathBuf,
    result: crate::error::Result<Arc<ModuleReport>>,
}

impl Apply<ModulesState> for Report {
    fn is_current(&self, state: &ModulesState) -> bool {
        state.pass.as_ref() == Some(&self.pass)
    }

    fn apply(self, state: &mut ModulesState) {
        state.report = self.result.into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::App;
    use std::time::Duration;

    #[test]
    fn the_report_of_the_pass_asked_for_arrives_and_an_older_one_is_dropped() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npugraph_ex");
        let forward = std::fs::read_dir(root.join("stress_24layer/torch_compile_debug"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("run_"))
            })
            .map(|run| run.join("npugraph_ex/model__0/forward"))
            .expect("the 24-layer fixture");
        let mut passes: Vec<PathBuf> = std::fs::read_dir(&forward)
            .expect("its forward")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        passes.sort();
        let mut app = App::new();
        let (state, cx) = app.part::<ModulesState>();
        state.want(&cx, &passes[1]);
        // The user moved on before the first report was made.
        state.want(&cx, &passes[0]);
        assert!(app.wait_idle(Duration::from_secs(60)));
        let (state, _) = app.part::<ModulesState>();
        assert_eq!(state.pass.as_deref(), Some(passes[0].as_path()));
        let report = state.report.ready().expect("a report");
        let layers = report
            .modules
            .iter()
            .find(|m| m.module == "layers")
            .expect("layers");
        assert_eq!(layers.groups.len(), 1, "{:?}", layers.groups);
        assert_eq!(layers.groups[0].label, "layers.0–23 ×24");
    }
}
