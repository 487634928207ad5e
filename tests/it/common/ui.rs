//! Driving the real app in egui_kittest: open a path, wait for the background jobs, read the
//! selection. Frames are stepped with `run_steps` while jobs finish; at rest the window asks
//! for no frame, so `run` settles.

use egui_kittest::Harness;
use fxray::app::App;
use fxray::ui::Fxray;
use std::path::Path;
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(60);

/// An app with `path` opened and its first phase loaded.
pub fn opened(path: &Path) -> App {
    let mut app = App::new();
    app.open(path);
    assert!(app.wait_idle(WAIT), "opening {} timed out", path.display());
    app
}

pub fn harness(app: App) -> Harness<'static, Fxray> {
    harness_sized(app, egui::vec2(1400., 900.))
}

pub fn harness_sized(app: App, size: egui::Vec2) -> Harness<'static, Fxray> {
    Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, s: &mut Fxray| s.ui(ui), Fxray::new(app))
}

/// Lets the background work started by the last frames finish, then draws its results.
pub fn settle(h: &mut Harness<'static, Fxray>) {
    h.run_steps(2);
    assert!(
        h.state_mut().app.wait_idle(WAIT),
        "background work timed out"
    );
    h.run_steps(3);
}

/// The on-screen size of the smallest box title drawn (folded boxes' titles are 28 px at zoom
/// 1, open boxes' 24 px; the root has none).
pub fn smallest_title_px(h: &Harness<'static, Fxray>) -> f32 {
    let zoom = fxray::ui::Viewport::load_ctx(&h.ctx).zoom;
    let any_open = h
        .state()
        .view
        .graph()
        .module_boxes()
        .iter()
        .any(|(p, _, folded)| !folded && !p.is_empty());
    zoom * if any_open { 24.0 } else { 28.0 }
}

/// The first pass of the first model's phase called `phase` in the opened workspace.
pub fn first_pass_of(app: &App, phase: &str) -> std::path::PathBuf {
    app.workspace
        .as_ref()
        .and_then(|ws| {
            ws.index.runs[0].models[0]
                .phases
                .iter()
                .find(|p| p.name == phase)
        })
        .map(|p| p.passes[0].path.clone())
        .unwrap_or_else(|| panic!("no {phase} phase"))
}

pub fn selected(h: &Harness<'static, Fxray>) -> Option<String> {
    h.state()
        .app
        .phase
        .as_ref()
        .and_then(|p| p.selected.clone())
}

pub fn current_pass(h: &Harness<'static, Fxray>) -> usize {
    h.state()
        .app
        .phase
        .as_ref()
        .map_or(usize::MAX, |p| p.current)
}

/// A rendered frame, kept to assert what the picture shows.
pub struct Shot {
    width: u32,
    height: u32,
    px: Vec<[u8; 4]>,
    /// Physical pixels per egui point.
    scale: f32,
}

impl Shot {
    /// How many pixels within `radius` points of `at` are `colour` (each channel within `tol`).
    pub fn count_near(&self, at: egui::Pos2, radius: f32, colour: egui::Color32, tol: u8) -> usize {
        let (cx, cy, r) = (at.x * self.scale, at.y * self.scale, radius * self.scale);
        let (x0, x1) = ((cx - r).max(0.0) as u32, ((cx + r) as u32).min(self.width));
        let (y0, y1) = ((cy - r).max(0.0) as u32, ((cy + r) as u32).min(self.height));
        let want = colour.to_array();
        let mut n = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                let p = self.px[(y * self.width + x) as usize];
                if (0..3).all(|i| p[i].abs_diff(want[i]) <= tol) {
                    n += 1;
                }
            }
        }
        n
    }
}

/// Renders, checks the picture has real content, writes it when asked to, and returns it so the
/// test can assert what must be in it.
pub fn shoot(h: &mut Harness<'static, Fxray>, name: &str) -> Shot {
    let img = h.render().expect("render with wgpu");
    let mut colours = std::collections::HashSet::new();
    for p in img.pixels().step_by(7) {
        colours.insert(p.0);
    }
    assert!(
        colours.len() > 50,
        "{name}: only {} colours: blank?",
        colours.len()
    );
    if std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("screenshots")
            .join(format!("{name}.png"));
        img.save(&path).expect("write screenshot");
    }
    Shot {
        width: img.width(),
        height: img.height(),
        px: img.pixels().map(|p| p.0).collect(),
        scale: h.ctx.pixels_per_point(),
    }
}

/// Brings node `name` on screen, clears the selection, and clicks the node where the view
/// draws it, as a user would. Returns where it clicked.
pub fn click_node(h: &mut Harness<'static, Fxray>, name: &str) -> egui::Pos2 {
    h.state_mut().app.reveal_node(name.into());
    h.run_steps(3);
    h.state_mut().app.select_node(None);
    h.run_steps(2);
    let pos = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, name)
        .unwrap_or_else(|| panic!("{name} is laid out"));
    click_at(h, pos);
    pos
}

/// A real mouse click (press and release) at a screen position.
pub fn click_at(h: &mut Harness<'static, Fxray>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.step();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
}

/// The model of the open workspace whose folder is named `name` (`model__4`).
pub fn model_named(h: &Harness<'static, Fxray>, name: &str) -> fxray::model::index::Model {
    let ws = h
        .state()
        .app
        .workspace
        .as_ref()
        .expect("a workspace is open");
    ws.index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .find(|m| m.path.ends_with(name))
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in the tree"))
}

/// The timeline feature's state (the test has opened a capture or a flame chart).
pub fn timeline<'h>(h: &'h Harness<'static, Fxray>) -> &'h fxray::app::timeline::TimelineState {
    h.state()
        .app
        .peek::<fxray::app::timeline::TimelineState>()
        .expect("the timeline was used")
}

/// The loaded timeline on screen.
pub fn loaded_timeline(
    h: &Harness<'static, Fxray>,
) -> std::sync::Arc<fxray::analysis::timeline_stats::Timeline> {
    timeline(h)
        .loaded()
        .expect("the timeline is loaded")
        .clone()
}

/// The compile story feature's state (the window has polled once a tree was open).
pub fn compiles<'h>(h: &'h Harness<'static, Fxray>) -> &'h fxray::app::compiles::CompilesState {
    h.state()
        .app
        .peek::<fxray::app::compiles::CompilesState>()
        .expect("the compile story was asked for")
}

/// Compares the open run with `golden`, as the window's Golden… button does.
pub fn compare_with_golden(app: &mut App, golden: &Path) {
    let (acc, mut cx) = app.part::<fxray::app::accuracy::AccuracyState>();
    acc.compare_with_golden(&mut cx, golden);
}

/// The compare with a golden the app holds (made by the first golden attached).
pub fn accuracy(app: &App) -> &fxray::app::accuracy::AccuracyState {
    app.peek().expect("a golden was attached")
}
