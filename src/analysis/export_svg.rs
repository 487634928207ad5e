//! One pass drawn as SVG (and rasterised to PNG) with the phase layout's positions, so an
//! exported picture looks like the app's view and keeps every node where the app puts it.
//!
//! The SVG is self-contained: styles in one `<style>` block (small files for 20k-node graphs),
//! fonts named by family with generic fallbacks. The PNG renderer loads egui's bundled fonts
//! from memory because CI machines may have no system fonts at all.

use crate::analysis::layout::EdgeKind;
use crate::analysis::op_family;
use crate::analysis::phase_layout::{self, PhaseLayout};
use crate::model::fx::{FxFile, FxNode};
use crate::model::fx_fmt::{meta_text, short_target};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

/// What to draw besides the graph.
#[derive(Debug, Clone, Default)]
pub struct SvgOptions {
    /// Dark background, light edges and labels (the app's dark theme).
    pub dark: bool,
    /// Shown at the top left, usually the graph file's name.
    pub title: String,
}

/// Largest PNG side in pixels: bigger pictures are scaled down to fit.
pub const MAX_PNG_SIDE: u32 = 16_384;
/// Largest PNG area (64 Mpx = a 256 MiB pixmap): a 16k × 16k picture would need 1 GiB.
pub const MAX_PNG_PIXELS: u64 = 64 << 20;

/// Below this scale node labels (12 px) would be under 3 px high: the PNG leaves them out.
const MIN_LABEL_SCALE: f32 = 0.25;
/// Average glyph advance the layout sized boxes with (`phase_layout::node_size`).
const CHAR_WIDTH: f32 = 6.6;
/// Horizontal room `node_size` adds around the text.
const TEXT_PAD: f32 = 18.0;
const MARGIN: f32 = 24.0;
/// Height of the title band above the graph.
const TITLE_BAND: f32 = 44.0;
/// Room around a sub-graph's nodes; the top leaves space for its label.
const GROUP_PAD: f32 = 7.0;
const GROUP_LABEL: f32 = 16.0;
/// Family names as the bundled fonts declare them, then what other viewers likely have.
const FONT_STACK: &str = "Ubuntu, 'Ubuntu Light', 'DejaVu Sans', 'Segoe UI', Arial, sans-serif";

/// Draws pass `file` with the positions of `layout` (a layout of a union that contains it).
pub fn to_svg(file: &FxFile, layout: &PhaseLayout, options: &SvgOptions) -> String {
    let scene = Scene::new(file, layout);
    let theme = Theme::of(options.dark);
    let frame = scene.frame(layout);
    let mut out = String::with_capacity(512 + scene.nodes.len() * 600 + scene.edges.len() * 120);
    let class = file.graphs.first().map_or("", |g| g.name.as_str());
    let caption = format!(
        "{class} · {} nodes · {} edges",
        scene.nodes.len(),
        scene.edges.len()
    );
    write_header(&mut out, &frame, &theme, options, &caption);
    write_groups(&mut out, &scene, layout);
    write_edges(&mut out, &scene, layout);
    write_nodes(&mut out, &scene, layout);
    out.push_str("</svg>\n");
    out
}

/// A rasterised picture and the scale it was drawn at.
#[derive(Debug, Clone)]
pub struct PngImage {
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// Scale used: the one asked for, or less when the picture had to fit the size caps.
    pub scale: f32,
}

/// Why a picture could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PngError {
    #[error("SVG not understood: {0}")]
    Svg(String),
    #[error("cannot allocate a {0}x{1} picture")]
    TooLarge(u32, u32),
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}

/// Rasterises `svg` at `scale` (1.0 = one pixel per SVG unit) into PNG bytes, scaled down to
/// fit [`MAX_PNG_SIDE`] and [`MAX_PNG_PIXELS`].
pub fn to_png(svg: &str, scale: f32) -> Result<Vec<u8>, PngError> {
    render_png(svg, scale).map(|p| p.bytes)
}

/// [`to_png`] with the size and the scale actually used, so a caller can say it shrank.
pub fn render_png(svg: &str, scale: f32) -> Result<PngImage, PngError> {
    use resvg::{tiny_skia, usvg};
    // The renderer has no bold face: a hairline stroke in the text's colour stands in.
    let mut style = String::from(".nm{stroke-width:0.45px} .title{stroke-width:0.6px}");
    if declared_size(svg).is_some_and(|(w, h)| fit_scale(w, h, scale) < MIN_LABEL_SCALE) {
        // Labels a pixel or two high are unreadable smudges, and shaping them is most of the
        // time on big graphs: leave them out, as the app's level of detail does.
        style.push_str(" .node text{display:none} .group text{display:none}");
    }
    let opt = usvg::Options {
        fontdb: font_db(),
        font_family: "Ubuntu".into(),
        style_sheet: Some(style),
        font_size: 12.0,
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| PngError::Svg(e.to_string()))?;
    let size = tree.size();
    let scale = fit_scale(size.width(), size.height(), scale);
    let width = ((size.width() * scale).ceil() as u32).max(1);
    let height = ((size.height() * scale).ceil() as u32).max(1);
    let mut pixmap =
        tiny_skia::Pixmap::new(width, height).ok_or(PngError::TooLarge(width, height))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let bytes = pixmap
        .encode_png()
        .map_err(|e| PngError::Encode(e.to_string()))?;
    Ok(PngImage {
        bytes,
        width,
        height,
        scale,
    })
}

/// `width` and `height` of the root element when they are plain numbers (as `to_svg` writes
/// them); read from the first tag so that a 10 MB SVG is not parsed twice.
fn declared_size(svg: &str) -> Option<(f32, f32)> {
    let start = svg.find("<svg")?;
    let tag = &svg[start..start + svg[start..].find('>')?];
    let attr = |name: &str| -> Option<f32> {
        let key = format!(" {name}=\"");
        let from = tag.find(&key)? + key.len();
        tag[from..from + tag[from..].find('"')?].parse().ok()
    };
    Some((attr("width")?, attr("height")?))
}

/// `wanted`, reduced so the picture stays within both caps. Non-positive or NaN means 1.
fn fit_scale(w: f32, h: f32, wanted: f32) -> f32 {
    let wanted = if wanted.is_finite() && wanted > 0.0 {
        wanted
    } else {
        1.0
    };
    let (w, h) = (w.max(1.0), h.max(1.0));
    let mut s = wanted
        .min(MAX_PNG_SIDE as f32 / w)
        .min(MAX_PNG_SIDE as f32 / h);
    let area = (w * s) as f64 * (h * s) as f64;
    if area > MAX_PNG_PIXELS as f64 {
        s *= (MAX_PNG_PIXELS as f64 / area).sqrt() as f32;
    }
    // Rounding up to whole pixels must not push a capped side over the cap.
    if s < wanted { s * 0.9999 } else { s }
}

/// The bundled fonts, loaded once: parsing them for every picture would waste time in tests
/// and batch exports.
fn font_db() -> Arc<resvg::usvg::fontdb::Database> {
    use resvg::usvg::fontdb::{Database, Source};
    static DB: OnceLock<Arc<Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = Database::new();
        db.load_font_source(Source::Binary(Arc::new(epaint_default_fonts::UBUNTU_LIGHT)));
        db.load_font_source(Source::Binary(Arc::new(epaint_default_fonts::HACK_REGULAR)));
        db.set_sans_serif_family("Ubuntu");
        db.set_monospace_family("Hack");
        Arc::new(db)
    })
    .clone()
}

/// What of the union a pass draws.
struct Scene<'a> {
    /// Union id and node of each node of the pass, each id once.
    nodes: Vec<(u32, &'a FxNode)>,
    /// Indices into `union.edges()` of the edges the pass has.
    edges: Vec<usize>,
}

impl<'a> Scene<'a> {
    fn new(file: &'a FxFile, layout: &PhaseLayout) -> Self {
        let n = layout.layout.pos.len();
        let mut seen = HashSet::new();
        let mut nodes = Vec::new();
        for (g, ids) in file.graphs.iter().zip(layout.ids_of(file)) {
            for (node, id) in g.nodes.iter().zip(ids) {
                // A duplicate name is one union node: draw it once.
                if let Some(id) = id.filter(|&i| (i as usize) < n && seen.insert(i)) {
                    nodes.push((id, node));
                }
            }
        }
        let own = pass_edges(file, layout);
        let edges = (layout.union.edges().iter().enumerate())
            .filter(|(_, e)| own.contains(e))
            .map(|(i, _)| i)
            .filter(|&i| {
                layout
                    .layout
                    .edge_paths
                    .get(i)
                    .is_some_and(|p| p.len() >= 2)
            })
            .collect();
        Scene { nodes, edges }
    }

    /// `[min x, min y, max x, max y]` of what is drawn, groups included.
    fn frame(&self, layout: &PhaseLayout) -> [f32; 4] {
        let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for &(id, _) in &self.nodes {
            let r = node_rect(layout, id);
            grow(&mut b, [r[0] - GROUP_PAD, r[1] - GROUP_PAD - GROUP_LABEL]);
            grow(&mut b, [r[0] + r[2] + GROUP_PAD, r[1] + r[3] + GROUP_PAD]);
        }
        for &e in &self.edges {
            for &p in &layout.layout.edge_paths[e] {
                grow(&mut b, p);
            }
        }
        if b[0] > b[2] {
            return [0.0, 0.0, 200.0, 0.0];
        }
        b
    }
}

/// The edges of one pass as union id pairs: both ends in the pass, the edge in its inputs.
fn pass_edges(file: &FxFile, layout: &PhaseLayout) -> HashSet<(u32, u32)> {
    let mut out = HashSet::new();
    for (name, inputs) in phase_layout::pass_entries(file) {
        let Some(to) = layout.union.id(&name) else {
            continue;
        };
        out.extend(
            inputs
                .iter()
                .filter_map(|i| layout.union.id(i))
                .map(|from| (from, to)),
        );
    }
    out
}

fn grow(b: &mut [f32; 4], p: [f32; 2]) {
    if p[0].is_finite() && p[1].is_finite() {
        b[0] = b[0].min(p[0]);
        b[1] = b[1].min(p[1]);
        b[2] = b[2].max(p[0]);
        b[3] = b[3].max(p[1]);
    }
}

/// `[left, top, width, height]` of a node's box.
fn node_rect(layout: &PhaseLayout, id: u32) -> [f32; 4] {
    let [x, y] = layout.layout.pos[id as usize];
    let (w, h) = layout
        .sizes
        .get(id as usize)
        .copied()
        .unwrap_or((96.0, phase_layout::NODE_HEIGHT));
    [x - w / 2.0, y - h / 2.0, w, h]
}

/// Colours of one theme; node fills are the op-family colours in both.
struct Theme {
    background: &'static str,
    title: &'static str,
    subtitle: &'static str,
    edge: &'static str,
    direct: &'static str,
    group: &'static str,
    group_fill: &'static str,
}

impl Theme {
    /// egui's panel colours (27 and 248 grey), so exports sit well next to screenshots.
    fn of(dark: bool) -> Theme {
        if dark {
            Theme {
                background: "#1b1b1b",
                title: "#e6e6e6",
                subtitle: "#9a9a9a",
                edge: "#a4a9b0",
                direct: "#80858c",
                group: "#77797d",
                group_fill: "#ffffff",
            }
        } else {
            Theme {
                background: "#f8f8f8",
                title: "#1b1b1b",
                subtitle: "#666666",
                edge: "#5c636c",
                direct: "#9097a0",
                group: "#8c8c8c",
                group_fill: "#000000",
            }
        }
    }
}

fn write_header(out: &mut String, b: &[f32; 4], t: &Theme, options: &SvgOptions, caption: &str) {
    let (x0, y0) = (b[0] - MARGIN, b[1] - MARGIN - TITLE_BAND);
    let w = (b[2] - b[0] + 2.0 * MARGIN).max(240.0);
    let h = b[3] - b[1] + 2.0 * MARGIN + TITLE_BAND;
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"{x0:.1} {y0:.1} {w:.0} {h:.0}\" font-family=\"{FONT_STACK}\">"
    );
    let _ = writeln!(out, "<title>{}</title>", xml(&options.title));
    write_style(out, t);
    write_markers(out, t);
    let _ = writeln!(
        out,
        "<rect class=\"bg\" x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.0}\" height=\"{h:.0}\"/>"
    );
    let _ = writeln!(
        out,
        "<text class=\"title\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        x0 + MARGIN,
        y0 + MARGIN + 14.0,
        xml(&options.title)
    );
    let _ = writeln!(
        out,
        "<text class=\"caption\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        x0 + MARGIN,
        y0 + MARGIN + 32.0,
        xml(caption)
    );
}

/// One stylesheet instead of per-element attributes keeps 20k-node files about half as big.
fn write_style(out: &mut String, t: &Theme) {
    let _ = writeln!(
        out,
        "<style>\n\
         .bg{{fill:{bg}}}\n\
         .title{{fill:{title};stroke:{title};font-size:16px;font-weight:bold}}\n\
         .caption{{fill:{subtitle};font-size:11px}}\n\
         .edge{{fill:none;stroke:{edge};stroke-width:1.2px;marker-end:url(#arrow)}}\n\
         .edge.direct{{stroke:{direct};stroke-width:1px;stroke-dasharray:5 4;stroke-opacity:0.6;marker-end:url(#arrow-direct)}}\n\
         .group rect{{fill:{gfill};fill-opacity:0.04;stroke:{group};stroke-width:1px;stroke-dasharray:6 4}}\n\
         .group text{{fill:{group};font-size:11px}}\n\
         .node rect{{stroke:#000000;stroke-opacity:0.3;stroke-width:1px}}\n\
         .node text{{text-anchor:middle}}\n\
         text{{stroke-width:0}}\n\
         .w{{fill:#ffffff;stroke:#ffffff}}\n\
         .k{{fill:#161616;stroke:#161616}}\n\
         .nm{{font-size:12px;font-weight:bold}}\n\
         .tg{{font-size:11px}}\n\
         .mt{{font-size:10px;fill-opacity:0.8}}\n\
         </style>",
        bg = t.background,
        title = t.title,
        subtitle = t.subtitle,
        edge = t.edge,
        direct = t.direct,
        group = t.group,
        gfill = t.group_fill,
    );
}

/// Arrowheads whose tip is the path's end (the target box's edge).
fn write_markers(out: &mut String, t: &Theme) {
    out.push_str("<defs>\n");
    for (id, colour, opacity) in [("arrow", t.edge, 1.0), ("arrow-direct", t.direct, 0.6)] {
        let _ = writeln!(
            out,
            "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" \
             markerHeight=\"8\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">\
             <path d=\"M0,0L10,5L0,10z\" fill=\"{colour}\" fill-opacity=\"{opacity}\"/></marker>"
        );
    }
    out.push_str("</defs>\n");
}

/// Dashed boxes around each sub-graph's nodes, behind everything else.
fn write_groups(out: &mut String, scene: &Scene, layout: &PhaseLayout) {
    let mut boxes: BTreeMap<&str, [f32; 4]> = BTreeMap::new();
    for &(id, _) in &scene.nodes {
        let Some(Some(name)) = layout.groups.get(id as usize) else {
            continue;
        };
        let r = node_rect(layout, id);
        let b = boxes
            .entry(name)
            .or_insert([f32::MAX, f32::MAX, f32::MIN, f32::MIN]);
        grow(b, [r[0], r[1]]);
        grow(b, [r[0] + r[2], r[1] + r[3]]);
    }
    for (name, b) in boxes {
        let (x, y) = (b[0] - GROUP_PAD, b[1] - GROUP_PAD - GROUP_LABEL);
        let (w, h) = (
            b[2] - b[0] + 2.0 * GROUP_PAD,
            b[3] - b[1] + 2.0 * GROUP_PAD + GROUP_LABEL,
        );
        let _ = writeln!(
            out,
            "<g class=\"group\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"8\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            x + 8.0,
            y + 14.0,
            xml(name)
        );
    }
}

fn write_edges(out: &mut String, scene: &Scene, layout: &PhaseLayout) {
    for &e in &scene.edges {
        let direct = layout.layout.edge_kinds.get(e) == Some(&EdgeKind::Direct);
        out.push_str(if direct {
            "<path class=\"edge direct\" d=\""
        } else {
            "<path class=\"edge\" d=\""
        });
        for (i, p) in layout.layout.edge_paths[e].iter().enumerate() {
            let _ = write!(
                out,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                p[0],
                p[1]
            );
        }
        out.push_str("\"/>\n");
    }
}

fn write_nodes(out: &mut String, scene: &Scene, layout: &PhaseLayout) {
    for &(id, node) in &scene.nodes {
        let [x, y, w, h] = node_rect(layout, id);
        let fill = op_family::family(node).rgb();
        let ink = if brightness(fill) > 150.0 { "k" } else { "w" };
        let cx = x + w / 2.0;
        let target = short_target(node);
        let _ = write!(
            out,
            "<g class=\"node\" data-node=\"{}\"><title>{}</title>\
             <rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"6\" fill=\"#{:02x}{:02x}{:02x}\"/>\
             <text class=\"nm {ink}\" x=\"{cx:.1}\" y=\"{:.1}\">{}</text>\
             <text class=\"tg {ink}\" x=\"{cx:.1}\" y=\"{:.1}\">{}</text>",
            xml(&layout.union.names()[id as usize]),
            xml(&tooltip(node)),
            fill[0],
            fill[1],
            fill[2],
            y + 15.0,
            xml(&clip(&node.name, fits(w, 12.0))),
            y + 28.5,
            xml(&clip(&target, fits(w, 11.0))),
        );
        if let Some(meta) = meta_text(node) {
            let _ = write!(
                out,
                "<text class=\"mt {ink}\" x=\"{cx:.1}\" y=\"{:.1}\">{}</text>",
                y + 41.0,
                xml(&clip(&meta, fits(w, 10.0)))
            );
        }
        out.push_str("</g>\n");
    }
}

/// What a browser shows on hover: the full target and annotation the label may have cut.
fn tooltip(node: &FxNode) -> String {
    let mut s = format!("{}: {}", node.name, node.target);
    if let Some(a) = &node.annotation {
        let _ = write!(s, " '{a}'");
    }
    s
}

/// Characters of a `font_size` px line that fit a box `width` wide, by the layout's own
/// measure (it sized boxes for 12 px text); a little of the box's padding may be used.
fn fits(width: f32, font_size: f32) -> usize {
    let advance = CHAR_WIDTH * font_size / 12.0;
    // The epsilon keeps a text the box was sized for from losing its last character.
    ((width - TEXT_PAD / 2.0) / advance + 0.01).floor().max(4.0) as usize
}

/// Perceived brightness (0–255) of a fill: dark text on light fills (yellow, light grey).
fn brightness([r, g, b]: [u8; 3]) -> f32 {
    0.299 * r as f32 + 0.587 * g as f32 + 0.114 * b as f32
}

/// `text` cut to `max` characters with an ellipsis, like the box it has to fit in.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Escapes text for XML content and attributes; drops characters XML 1.0 cannot hold at all
/// (control characters from a binary or corrupt file would make the whole SVG unreadable).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_and_drops_invalid_chars() {
        assert_eq!(
            xml("<lambda> & 'a' \"b\""),
            "&lt;lambda&gt; &amp; &apos;a&apos; &quot;b&quot;"
        );
        assert_eq!(xml("a\u{0}b\tc"), "a\u{FFFD}b c");
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcdef", 4), "abc…");
    }

    #[test]
    fn declared_size_reads_the_root_tag() {
        let svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"x\" width=\"120\" height=\"80.5\" viewBox=\"0 0 1 1\">";
        assert_eq!(declared_size(svg), Some((120.0, 80.5)));
        assert_eq!(declared_size("<svg width=\"10%\" height=\"5\">"), None);
    }

    #[test]
    fn fit_scale_respects_both_caps() {
        assert!((fit_scale(100.0, 100.0, 2.0) - 2.0).abs() < 0.01);
        let s = fit_scale(1000.0, 100_000.0, 1.0);
        assert!(100_000.0 * s <= MAX_PNG_SIDE as f32);
        let s = fit_scale(16_000.0, 16_000.0, 1.0);
        assert!((16_000.0 * s).powi(2) as u64 <= MAX_PNG_PIXELS);
        assert_eq!(fit_scale(10.0, 10.0, f32::NAN), 1.0);
    }
}
