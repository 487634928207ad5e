//! A node's arguments, drawn as text with every node they name a link.

use super::*;

pub(super) fn args_view(ui: &mut egui::Ui, links: &mut Links, node: &FxNode) -> Option<Action> {
    let mut action = None;
    if node.args.is_empty() && node.kwargs.is_empty() {
        return None;
    }
    let mut budget = MAX_ARG_LINKS;
    key_value(ui, "args", |ui| {
        ui.spacing_mut().item_spacing.x = 0.0;
        let mut w = ArgWriter::new(links, &mut budget);
        // Call syntax, `f(x)`: no one-tuple comma.
        w.seq(ui, "(", &node.args, ")", false);
        w.flush(ui);
        action = w.action;
    });
    for (k, v) in &node.kwargs {
        key_value(ui, "kwarg", |ui| {
            ui.spacing_mut().item_spacing.x = 0.0;
            let mut w = ArgWriter::new(links, &mut budget);
            w.text.push_str(k);
            w.text.push_str(" = ");
            w.arg(ui, v);
            w.flush(ui);
            merge(&mut action, w.action.take());
        });
    }
    action
}

/// Writes an argument the way `print_readable` does, with each node reference a link.
/// Plain text between links is gathered into one label, so a long list stays a few widgets.
pub(super) struct ArgWriter<'a, 'g> {
    pub(super) links: &'a mut Links<'g>,
    pub(super) budget: &'a mut usize,
    pub(super) text: String,
    pub(super) action: Option<Action>,
}

impl<'a, 'g> ArgWriter<'a, 'g> {
    pub(super) fn new(links: &'a mut Links<'g>, budget: &'a mut usize) -> Self {
        ArgWriter {
            links,
            budget,
            text: String::new(),
            action: None,
        }
    }

    pub(super) fn flush(&mut self, ui: &mut egui::Ui) {
        if !self.text.is_empty() {
            ui.add(
                egui::Label::new(RichText::new(std::mem::take(&mut self.text)).monospace())
                    .selectable(true),
            );
        }
    }

    pub(super) fn arg(&mut self, ui: &mut egui::Ui, a: &Arg) {
        match a {
            Arg::Node(n) if *self.budget > 0 => {
                *self.budget -= 1;
                self.flush(ui);
                if let Some(q) = self.links.link(ui, n, "argument") {
                    merge(&mut self.action, Some(Action::Reveal(q)));
                }
            }
            Arg::List(items) => self.seq(ui, "[", items, "]", false),
            Arg::Tuple(items) => self.seq(ui, "(", items, ")", items.len() == 1),
            other => self.text.push_str(&other.to_string()),
        }
    }

    pub(super) fn seq(
        &mut self,
        ui: &mut egui::Ui,
        open: &str,
        items: &[Arg],
        close: &str,
        trailing_comma: bool,
    ) {
        self.text.push_str(open);
        for (i, a) in items.iter().enumerate() {
            if i > 0 {
                self.text.push_str(", ");
            }
            self.arg(ui, a);
        }
        if trailing_comma {
            self.text.push(',');
        }
        self.text.push_str(close);
    }
}

/// Node links of one inspector frame.
///
/// A link's text is always the node's (or sub-graph's) name. UI tests and screen readers find
/// a link by that name, so only the first link with a given text carries it as its accessible
/// label; later ones (an input named in the args and again in the inputs list) get a context
/// suffix, e.g. `rsqrt (input)`. Clicking either does the same thing.
pub(super) struct Links<'g> {
    /// `true_graph_0/` inside a sub-graph, empty at the top level.
    pub(super) prefix: String,
    pub(super) graph: &'g FxGraph,
    pub(super) seen: HashSet<String>,
}

impl<'g> Links<'g> {
    pub(super) fn new(graph: &'g FxGraph) -> Self {
        let prefix = if graph.parent.is_some() {
            format!("{}/", graph.name)
        } else {
            String::new()
        };
        Links {
            prefix,
            graph,
            seen: HashSet::new(),
        }
    }

    /// Draws a link to node `name` of this graph; its qualified name when clicked.
    pub(super) fn link(&mut self, ui: &mut egui::Ui, name: &str, context: &str) -> Option<String> {
        let target = self
            .graph
            .by_name
            .get(name)
            .and_then(|i| self.graph.nodes.get(i));
        let Some(target) = target else {
            // A name the parser could not resolve: show it, but there is nowhere to go.
            ui.add(egui::Label::new(RichText::new(name).monospace()).selectable(true))
                .on_hover_text("not a node of this graph");
            return None;
        };
        let r = self.draw(ui, name, context);
        let r = r.on_hover_ui(|ui| node_tooltip(ui, target));
        r.clicked().then(|| format!("{}{name}", self.prefix))
    }

    /// Draws a link reading `text`; a repeat of a text already linked this frame gets
    /// `text (context)` as its accessible label.
    pub(super) fn draw(&mut self, ui: &mut egui::Ui, text: &str, context: &str) -> egui::Response {
        let r = link(ui, RichText::new(text).monospace());
        if !self.seen.insert(text.to_string()) {
            let label = format!("{text} ({context})");
            r.widget_info(|| {
                egui::WidgetInfo::labeled(egui::WidgetType::Link, ui.is_enabled(), &label)
            });
        }
        r
    }
}
