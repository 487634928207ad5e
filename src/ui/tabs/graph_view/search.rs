//! Finding nodes by name, target or regex, with next/previous.

use super::GraphViewState;
use super::scene::Scene;
use crate::app::App;
use crate::model::fx::FxFile;
use std::sync::Arc;

#[derive(Default)]
pub struct Search {
    pub text: String,
    /// Match the target (`aten.mm`) as well as the name.
    pub targets: bool,
    pub regex: bool,
    /// Qualified names of the matches in the pass on screen, in file order.
    pub hits: Vec<String>,
    /// Index into `hits` of the one last shown.
    pub current: Option<usize>,
    /// Ask the text box to take the keyboard focus (`/`, Ctrl+F).
    pub focus: bool,
    pub error: Option<String>,
    /// What `hits` was computed for: text, flags and file identity.
    key: Option<(String, bool, bool, usize)>,
    generation: u64,
}

impl Search {
    /// Recomputes the hits when the query or the pass changed.
    pub fn refresh(&mut self, file: &Arc<FxFile>) {
        let key = (
            self.text.clone(),
            self.targets,
            self.regex,
            Arc::as_ptr(file) as usize,
        );
        if self.key.as_ref() == Some(&key) {
            return;
        }
        self.key = Some(key);
        self.generation += 1;
        self.hits.clear();
        self.current = None;
        self.error = None;
        let query = self.text.trim();
        if query.is_empty() {
            return;
        }
        let matcher: Box<dyn Fn(&str) -> bool> = if self.regex {
            match regex::Regex::new(query) {
                Ok(re) => Box::new(move |s: &str| re.is_match(s)),
                Err(e) => {
                    self.error = Some(
                        e.to_string()
                            .lines()
                            .last()
                            .unwrap_or("bad regex")
                            .to_string(),
                    );
                    return;
                }
            }
        } else {
            let q = query.to_lowercase();
            Box::new(move |s: &str| s.to_lowercase().contains(&q))
        };
        for (gi, g) in file.graphs.iter().enumerate() {
            for n in &g.nodes {
                if matcher(&n.name) || (self.targets && matcher(&n.target)) {
                    let q = if gi == 0 {
                        n.name.to_string()
                    } else {
                        format!("{}/{}", g.name, n.name)
                    };
                    self.hits.push(q);
                }
            }
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn hit_ids(&self, scene: &Scene) -> Vec<u32> {
        self.hits
            .iter()
            .filter_map(|h| scene.layout.union.id(h))
            .collect()
    }

    fn step(&mut self, forward: bool) -> Option<String> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let next = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        };
        self.current = Some(next);
        self.hits.get(next).cloned()
    }
}

pub fn bar(app: &mut App, st: &mut GraphViewState, ui: &mut egui::Ui) {
    let s = &mut st.search;
    let edit = egui::TextEdit::singleline(&mut s.text)
        .id(egui::Id::new("graph_search"))
        .hint_text("search nodes  ( / )")
        .desired_width(150.0);
    let resp = ui
        .add(edit)
        .on_hover_text("Find nodes by name (and target): Enter for the next match");
    // A stable accessible name, so tests and screen readers find the box.
    resp.widget_info(|| {
        egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, "graph search")
    });
    if s.focus {
        resp.request_focus();
        s.focus = false;
    }
    let enter = resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    let shift = ui.input(|i| i.modifiers.shift);
    ui.checkbox(&mut s.targets, "targets")
        .on_hover_text("Match op targets (aten.mm…) too");
    ui.checkbox(&mut s.regex, "regex");
    let mut go = None;
    if ui
        .small_button("◀")
        .on_hover_text("Previous match (Shift+Enter)")
        .clicked()
    {
        go = s.step(false);
    }
    if ui
        .small_button("▶")
        .on_hover_text("Next match (Enter)")
        .clicked()
        || enter
    {
        go = s.step(!shift);
        if enter {
            resp.request_focus();
        }
    }
    if let Some(e) = &s.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    } else if !s.text.trim().is_empty() {
        let pos = s.current.map_or(0, |c| c + 1);
        ui.label(format!("{pos}/{} matches", s.hits.len()));
    }
    if let Some(name) = go {
        app.reveal_node(name);
    }
}
