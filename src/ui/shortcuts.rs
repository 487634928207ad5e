//! Every shortcut key fxray answers, one table per place it answers them (keys typed into a
//! text field, such as Enter in the search box, belong to that field). The key handlers read these
//! tables and Help ▸ Keyboard shortcuts lists them, so what the window says a key does is
//! what the key does.

use egui::{Key, KeyboardShortcut, Modifiers};

/// One entry: the keys (any of them), what they do, in words for the list.
pub struct Shortcut<A: 'static> {
    pub keys: &'static [KeyboardShortcut],
    pub action: A,
    pub what: &'static str,
}

const fn on<A>(keys: &'static [KeyboardShortcut], action: A, what: &'static str) -> Shortcut<A> {
    Shortcut { keys, action, what }
}

const fn key(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::NONE, k)
}

const fn command(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::COMMAND, k)
}

const fn shift(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::SHIFT, k)
}

/// Keys of the whole window, whatever tab is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    OpenFolder,
    ShowShortcuts,
}

pub const WINDOW: &[Shortcut<Window>] = &[
    on(&[command(Key::O)], Window::OpenFolder, "Open a folder"),
    on(&[key(Key::F1)], Window::ShowShortcuts, "This list of keys"),
];

/// Keys of the graph tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graph {
    Search,
    Fit,
    PreviousPass,
    NextPass,
    // Before NextChange: N with Shift held is the previous change, not the next.
    PreviousChange,
    NextChange,
    Cone,
    DiffOverlay,
    SideBySide,
    Deselect,
    CloseSelectedBox,
    ToggleHoveredBox,
    ZoomToSelection,
    ZoomIn,
    ZoomOut,
    WalkUp,
    WalkDown,
    WalkLeft,
    WalkRight,
}

pub const GRAPH: &[Shortcut<Graph>] = &[
    on(
        &[command(Key::F), key(Key::Slash)],
        Graph::Search,
        "Search nodes",
    ),
    on(&[key(Key::F)], Graph::Fit, "Fit the graph to the window"),
    on(
        &[key(Key::OpenBracket)],
        Graph::PreviousPass,
        "Previous pass",
    ),
    on(&[key(Key::CloseBracket)], Graph::NextPass, "Next pass"),
    on(
        &[shift(Key::N)],
        Graph::PreviousChange,
        "Previous change of this pass",
    ),
    on(
        &[key(Key::N)],
        Graph::NextChange,
        "Next change of this pass",
    ),
    on(
        &[key(Key::C)],
        Graph::Cone,
        "Show only the selection's inputs and users (cone)",
    ),
    on(
        &[key(Key::D)],
        Graph::DiffOverlay,
        "Diff overlay against the previous pass",
    ),
    on(
        &[key(Key::S)],
        Graph::SideBySide,
        "Before and after side by side",
    ),
    on(&[key(Key::Escape)], Graph::Deselect, "Clear the selection"),
    on(
        &[key(Key::Backspace)],
        Graph::CloseSelectedBox,
        "Fold the module box around the selection",
    ),
    on(
        &[key(Key::Enter)],
        Graph::ToggleHoveredBox,
        "Open or fold the module box under the pointer",
    ),
    on(
        &[key(Key::Z)],
        Graph::ZoomToSelection,
        "Zoom to the selection",
    ),
    on(
        &[key(Key::Plus), key(Key::Equals)],
        Graph::ZoomIn,
        "Zoom in",
    ),
    on(&[key(Key::Minus)], Graph::ZoomOut, "Zoom out"),
    on(
        &[key(Key::ArrowUp)],
        Graph::WalkUp,
        "Select the first input",
    ),
    on(
        &[key(Key::ArrowDown)],
        Graph::WalkDown,
        "Select the first user",
    ),
    on(
        &[key(Key::ArrowLeft)],
        Graph::WalkLeft,
        "Select the neighbour on the left",
    ),
    on(
        &[key(Key::ArrowRight)],
        Graph::WalkRight,
        "Select the neighbour on the right",
    ),
];

/// Keys of the timeline tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeline {
    ZoomIn,
    ZoomOut,
    PanLeft,
    PanRight,
    Fit,
    ClearRange,
}

pub const TIMELINE: &[Shortcut<Timeline>] = &[
    on(&[key(Key::W)], Timeline::ZoomIn, "Zoom in"),
    on(&[key(Key::S)], Timeline::ZoomOut, "Zoom out"),
    on(&[key(Key::A)], Timeline::PanLeft, "Move left"),
    on(&[key(Key::D)], Timeline::PanRight, "Move right"),
    on(&[key(Key::F)], Timeline::Fit, "Fit the whole capture"),
    on(
        &[key(Key::Escape)],
        Timeline::ClearRange,
        "Clear the measured range",
    ),
];

/// Every table with its heading, in the order the list shows them.
pub fn sections(ctx: &egui::Context) -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    let rows = |t: &[(&'static [KeyboardShortcut], &'static str)]| {
        t.iter()
            .map(|(k, what)| (keys_text(k, ctx), *what))
            .collect()
    };
    vec![
        ("Anywhere", rows(&listed(WINDOW))),
        ("Graph tab", rows(&listed(GRAPH))),
        ("Timeline tab", rows(&listed(TIMELINE))),
    ]
}

fn listed<A>(t: &[Shortcut<A>]) -> Vec<(&'static [KeyboardShortcut], &'static str)> {
    t.iter().map(|s| (s.keys, s.what)).collect()
}

/// `Ctrl+F or /`: the keys as the list shows them (`Cmd` on a Mac, as egui names them; a
/// bare punctuation key as its symbol, `[` rather than `OpenBracket`).
pub fn keys_text(keys: &[KeyboardShortcut], ctx: &egui::Context) -> String {
    let one = |k: &KeyboardShortcut| {
        if !k.modifiers.is_none() {
            return ctx.format_shortcut(k);
        }
        match k.logical_key {
            Key::ArrowUp => "Up".to_string(),
            Key::ArrowDown => "Down".to_string(),
            Key::ArrowLeft => "Left".to_string(),
            Key::ArrowRight => "Right".to_string(),
            other => other.symbol_or_name().to_string(),
        }
    };
    keys.iter().map(one).collect::<Vec<_>>().join(" or ")
}

/// The actions of `table` whose keys were pressed this frame, in table order; their key
/// presses are consumed. Nothing while a text field has the keyboard.
pub fn pressed<A: Copy>(table: &[Shortcut<A>], ctx: &egui::Context) -> Vec<A> {
    if ctx.egui_wants_keyboard_input() {
        return Vec::new();
    }
    ctx.input_mut(|i| {
        table
            .iter()
            .filter(|s| s.keys.iter().any(|k| i.consume_shortcut(k)))
            .map(|s| s.action)
            .collect()
    })
}

/// Help ▸ Keyboard shortcuts.
pub fn window(open: &mut bool, ctx: &egui::Context) {
    egui::Window::new("Keyboard shortcuts")
        .open(open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            for (heading, rows) in sections(ctx) {
                ui.strong(heading);
                egui::Grid::new(heading).striped(true).show(ui, |ui| {
                    for (keys, what) in rows {
                        ui.monospace(keys);
                        ui.label(what);
                        ui.end_row();
                    }
                });
                ui.add_space(6.0);
            }
        });
}
