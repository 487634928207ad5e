//! The egui_graphs graph of one phase and how it reflects the app: which pass is on screen,
//! what is selected, which cone is highlighted. Rebuilt only when the layout changes; a change
//! of pass or selection only rewrites node flags.

use super::fold_view::{Change, FoldView, NodeFacts};
use super::shapes::{DiffMark, EdgeData, FxEdgeUi, FxGraphUi, FxNodeUi, Mark, NodeData, NodeLook};
use crate::analysis::diff::{GraphDiff, NodeStatus};
use crate::analysis::fold::{FoldTree, ModIx, Rep};
use crate::analysis::op_family;
use crate::analysis::phase_layout::PhaseLayout;
use crate::analysis::spatial::{Bins, Grid, Scratch};
use crate::model::fx::FxFile;
use crate::model::fx_fmt::{meta_text, short_target};
use egui::{Color32, Pos2, Vec2};
use petgraph::graph::{EdgeIndex, NodeIndex};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

mod fold;
mod marks;

/// Binned dots by cell size (log2 of canvas units).
type DotLevels = HashMap<i32, Arc<Bins<Color32>>>;

/// What the scene currently shows, to know when flags must be rewritten.
#[derive(Debug, Clone, PartialEq, Default)]
struct Applied {
    file: usize,
    selected: Option<String>,
    cone: bool,
    hits: u64,
    collapsed: Vec<String>,
    diff: usize,
    side: Side,
    tints: u64,
}

/// Which file of a compared pair this scene shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    /// The pass on screen (B): added and changed nodes marked, removed ones as ghosts.
    #[default]
    After,
    /// The compared graph (A), in side-by-side view: removed and changed nodes marked.
    Before,
}

/// A sub-graph (a branch of `cond`, a `while_loop` body, …) of the pass on screen.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    /// Canvas bounds of its nodes.
    pub rect: egui::Rect,
    pub nodes: usize,
    pub collapsed: bool,
}

/// What the view asks the scene to show besides the pass itself.
pub struct SceneView<'a> {
    /// The diff to overlay: A (the compared graph) and the diff A → shown file.
    pub diff: Option<(&'a FxFile, &'a GraphDiff)>,
    pub side: Side,
    pub selected: Option<&'a str>,
    pub cone: bool,
    pub hits_generation: u64,
    pub collapsed: &'a [String],
    /// Node fills from the data overlay.
    pub tints: Option<&'a super::data_overlay::Tints>,
}

/// Something the canvas draws and picks, as the spatial index holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// A union node.
    Node(u32),
    /// A union edge drawn node to node.
    Edge(u32),
    /// A module's box, folded or open.
    Box(ModIx),
    /// Edges to or from a folded box, drawn as one line (index into the fold's edges).
    Bundle(u32),
}

impl Item {
    pub fn node(self) -> Option<u32> {
        match self {
            Item::Node(n) => Some(n),
            _ => None,
        }
    }
}

pub struct Scene {
    pub layout: Arc<PhaseLayout>,
    pub graph: FxGraphUi,
    /// Union node id → egui_graphs node.
    node_idx: Vec<NodeIndex>,
    /// Union edge → egui_graphs edge.
    edge_idx: Vec<EdgeIndex>,
    edge_of: HashMap<(u32, u32), u32>,
    /// Per union node: present in the pass on screen.
    pub present: Vec<bool>,
    /// Edges of the pass on screen, as union ids (producer, consumer).
    pub pass_edges: Vec<(u32, u32)>,
    /// Sub-graphs of the pass on screen.
    pub groups: Vec<Group>,
    /// Removed nodes drawn as ghosts.
    pub ghosts: usize,
    applied: Option<Applied>,
    /// Grouped by module (`None`: the flat union layout).
    pub fold: Option<FoldView>,
    /// Whether the graph opened grouped by module (decided once, when its module tree came:
    /// resizing the window later must not fold or unfold it).
    pub opens_folded: Option<bool>,
    /// The phase whose preview (its pass on screen laid out alone) this scene draws.
    pub preview_of: Option<std::path::PathBuf>,
    /// Repeat groups are drawn as one box (the view's choice).
    pub group_repeats: bool,
    /// A line some module boxes carry, by module path (`data_overlay::box_lines`).
    pub box_lines: Arc<super::data_overlay::BoxLines>,
    grid: Grid,
    /// `grid` (and `coarse`) are of the current placement.
    indexed: bool,
    grid_items: Vec<Item>,
    /// Boxes and bundles only: all a view zoomed out past its nodes asks of the index.
    coarse: Grid,
    coarse_items: Vec<Item>,
    /// Bumped whenever what a node looks like may change (pass, diff, selection, tints).
    looks: u64,
    /// Nodes binned for the zoomed-out view by cell size (log2), valid for (generation, looks).
    dot_bins: Option<((u64, u64), DotLevels)>,
    scratch: Scratch,
    found: Vec<u32>,
    hovered: Option<u32>,
    /// Each union edge's route in the flat layout (folding reroutes them).
    flat_routes: Vec<Arc<[Pos2]>>,
    /// Bumped whenever the placement changes (caches of positions key on it).
    generation: u64,
    /// Figures of the pass on screen, counted when it changes (never per frame).
    pub counted: Counted,
}

/// What the status bar and the changes navigator show, counted once per change of the scene.
#[derive(Debug, Clone, Default)]
pub struct Counted {
    /// Nodes present in the pass on screen.
    pub present: usize,
    /// Nodes drawn as (added, changed, removed ghosts).
    pub diff: (usize, usize, usize),
    /// Added and changed nodes, top to bottom then left to right in the union layout.
    pub changed: Vec<u32>,
}

impl Scene {
    pub fn new(layout: Arc<PhaseLayout>) -> Self {
        let mut graph = FxGraphUi::new();
        let placeholder = Arc::new(NodeLook {
            name: String::new(),
            target: String::new(),
            subtitle: String::new(),
            fill: Color32::GRAY,
            family: op_family::OpFamily::Other,
            size: Vec2::new(100.0, 40.0),
        });
        let node_idx: Vec<NodeIndex> = (0..layout.union.names().len())
            .map(|i| {
                let [x, y] = layout.layout.pos.get(i).copied().unwrap_or([0.0, 0.0]);
                let data = NodeData {
                    look: placeholder.clone(),
                    present: false,
                    selected: false,
                    mark: Mark::Plain,
                    diff: DiffMark::Same,
                    tint: None,
                    tint_severity: None,
                };
                graph.add_node_with_location(data, Pos2::new(x, y))
            })
            .collect();
        let mut edge_of = HashMap::new();
        let mut flat_routes = Vec::new();
        let edge_idx: Vec<EdgeIndex> = layout
            .union
            .edges()
            .iter()
            .enumerate()
            .map(|(e, &(a, b))| {
                edge_of.insert((a, b), e as u32);
                let route: Arc<[Pos2]> = layout.layout.edge_paths.get(e).map_or_else(
                    || Arc::from(Vec::new()),
                    |p| p.iter().map(|&[x, y]| Pos2::new(x, y)).collect(),
                );
                flat_routes.push(route.clone());
                let direct = layout.layout.edge_kinds.get(e)
                    == Some(&crate::analysis::layout::EdgeKind::Direct);
                let data = EdgeData {
                    route,
                    present: false,
                    direct,
                    mark: Mark::Plain,
                    diff: DiffMark::Same,
                };
                graph.add_edge(node_idx[a as usize], node_idx[b as usize], data)
            })
            .collect();
        // egui_graphs sets "node N" labels; empty ones cost nothing to clone per edge.
        for &i in &node_idx {
            if let Some(n) = graph.node_mut(i) {
                n.set_label(String::new());
            }
        }
        for &e in &edge_idx {
            if let Some(x) = graph.edge_mut(e) {
                x.set_label(String::new());
            }
        }
        let n = node_idx.len();
        let mut scene = Scene {
            layout,
            graph,
            node_idx,
            edge_idx,
            edge_of,
            present: vec![false; n],
            pass_edges: Vec::new(),
            groups: Vec::new(),
            ghosts: 0,
            applied: None,
            fold: None,
            opens_folded: None,
            preview_of: None,
            group_repeats: true,
            grid: Grid::default(),
            indexed: false,
            grid_items: Vec::new(),
            box_lines: Arc::default(),
            coarse: Grid::default(),
            coarse_items: Vec::new(),
            looks: 0,
            dot_bins: None,
            scratch: Scratch::default(),
            found: Vec::new(),
            hovered: None,
            flat_routes,
            generation: 0,
            counted: Counted::default(),
        };
        scene.index();
        scene
    }

    /// Canvas bounds of what is drawn: the folded placement, or the union layout.
    pub fn bounds(&self) -> egui::Rect {
        let [x0, y0, x1, y1] = self
            .fold
            .as_ref()
            .map_or(self.layout.layout.bounds, |f| f.layout.bounds);
        egui::Rect::from_min_max(Pos2::new(x0, y0), Pos2::new(x1, y1))
    }

    /// Node locations and edge routes for the current placement; the spatial index follows
    /// when first asked for (`ensure_index`). A new layout is folded in the same frame, so its
    /// flat index was built for nothing: the 415-layer union's 115k routes took 0.7 s of the
    /// UI thread, and more per edge the taller the graph.
    fn index(&mut self) {
        self.place();
        self.indexed = false;
        self.generation += 1;
    }

    fn ensure_index(&mut self) {
        if !self.indexed {
            self.build_index();
            self.indexed = true;
        }
    }

    /// Puts the graph's nodes and edge routes where the current placement has them.
    fn place(&mut self) {
        match &self.fold {
            None => {
                for (e, &idx) in self.edge_idx.iter().enumerate() {
                    if let Some(x) = self.graph.edge_mut(idx) {
                        x.payload_mut().route = self.flat_routes[e].clone();
                    }
                }
                for (i, &idx) in self.node_idx.iter().enumerate() {
                    let p = self.layout.layout.pos.get(i).map(|&[x, y]| Pos2::new(x, y));
                    if let (Some(n), Some(p)) = (self.graph.node_mut(idx), p) {
                        n.set_location(p);
                    }
                }
            }
            Some(f) => {
                for (i, p) in f.layout.node_pos.iter().enumerate() {
                    if let (Some([x, y]), Some(n)) = (*p, self.graph.node_mut(self.node_idx[i])) {
                        n.set_location(Pos2::new(x, y));
                    }
                }
                for d in &f.layout.edges {
                    if let (2.., Some(e)) = (d.path.len(), one_edge(d))
                        && let Some(x) = self.graph.edge_mut(self.edge_idx[e as usize])
                    {
                        x.payload_mut().route =
                            d.path.iter().map(|&[x, y]| Pos2::new(x, y)).collect();
                    }
                }
            }
        }
    }

    /// The spatial index of the current placement, and its coarse twin of boxes and bundles.
    fn build_index(&mut self) {
        let b = self.bounds().expand(200.0);
        let extent = [b.min.x, b.min.y, b.max.x, b.max.y];
        let mut grid = Grid::new(extent, 600.0);
        let mut items = Vec::new();
        let rect_of = |c: Pos2, (w, h): (f32, f32)| {
            [c.x - w / 2.0, c.y - h / 2.0, c.x + w / 2.0, c.y + h / 2.0]
        };
        match &self.fold {
            None => {
                for i in 0..self.node_idx.len() {
                    if let Some(p) = self.flat_pos(i as u32) {
                        grid.push(rect_of(p, self.size(i)));
                        items.push(Item::Node(i as u32));
                    }
                }
                for (e, route) in self.flat_routes.iter().enumerate() {
                    if route.len() >= 2 {
                        let points: Vec<[f32; 2]> = route.iter().map(|p| [p.x, p.y]).collect();
                        grid.push_path(&points);
                        items.push(Item::Edge(e as u32));
                    }
                }
            }
            Some(f) => {
                for b in &f.layout.boxes {
                    grid.push(b.rect);
                    items.push(Item::Box(b.module));
                }
                for (i, p) in f.layout.node_pos.iter().enumerate() {
                    if let Some([x, y]) = *p {
                        grid.push(rect_of(Pos2::new(x, y), self.size(i)));
                        items.push(Item::Node(i as u32));
                    }
                }
                for (k, d) in f.layout.edges.iter().enumerate() {
                    if d.path.len() >= 2 {
                        grid.push_path(&d.path);
                        items.push(one_edge(d).map_or(Item::Bundle(k as u32), Item::Edge));
                    }
                }
            }
        }
        let mut coarse = Grid::new(extent, 600.0);
        let mut coarse_items = Vec::new();
        for (id, &item) in items.iter().enumerate() {
            if let (Item::Box(_) | Item::Bundle(_), Some(bounds)) = (item, grid.bounds(id as u32)) {
                coarse.push(bounds);
                coarse_items.push(item);
            }
        }
        self.grid = grid;
        self.grid_items = items;
        self.coarse = coarse;
        self.coarse_items = coarse_items;
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn size(&self, i: usize) -> (f32, f32) {
        self.layout.sizes.get(i).copied().unwrap_or((100.0, 40.0))
    }

    /// What lies in canvas rect `area` (`[x0, y0, x1, y1]`).
    pub fn visible(&mut self, area: [f32; 4]) -> Vec<Item> {
        self.ensure_index();
        let found = &mut self.found;
        query(&self.grid, &self.grid_items, area, &mut self.scratch, found)
    }

    /// The boxes and bundles meeting canvas `area`, without the nodes and edges.
    pub fn visible_boxes(&mut self, area: [f32; 4]) -> Vec<Item> {
        self.ensure_index();
        let found = &mut self.found;
        query(
            &self.coarse,
            &self.coarse_items,
            area,
            &mut self.scratch,
            found,
        )
    }

    /// The nodes on screen binned into cells of 2–4 screen points at `zoom`, each cell in the
    /// colour of its most telling node (see [`dot_fill`]). Built once per cell size and look of
    /// the scene, so a zoomed-out frame costs the cells on screen, not the nodes.
    pub fn dot_bins(&mut self, zoom: f32) -> Arc<Bins<Color32>> {
        let level = (2.0 / zoom.max(1e-6)).log2().ceil().clamp(-30.0, 60.0) as i32;
        self.ensure_index();
        let key = (self.generation, self.looks);
        let cache = match &mut self.dot_bins {
            Some((k, cache)) if *k == key => cache,
            slot => &mut slot.insert((key, HashMap::new())).1,
        };
        if let Some(bins) = cache.get(&level) {
            return bins.clone();
        }
        let (grid, graph, node_idx) = (&self.grid, &self.graph, &self.node_idx);
        let nodes = self
            .grid_items
            .iter()
            .enumerate()
            .filter_map(|(gid, item)| {
                let Item::Node(id) = *item else { return None };
                let d = graph.node(*node_idx.get(id as usize)?)?.payload();
                if !d.present {
                    return None;
                }
                let (fill, rank) = dot_fill(d);
                Some((grid.bounds(gid as u32)?, fill, rank))
            });
        let bins = Arc::new(Bins::build(2f32.powi(level), nodes));
        cache.insert(level, bins.clone());
        bins
    }

    /// The node (or else box) under canvas point `p`. Ghosts and absent nodes are not picked.
    pub fn pick(&mut self, p: Pos2) -> Option<Item> {
        self.ensure_index();
        let id =
            self.grid
                .pick([p.x, p.y], |i| match self.grid_items[i as usize] {
                    Item::Node(n) => self.graph.node(self.node_idx[n as usize]).is_some_and(|x| {
                        x.payload().present && x.payload().diff != DiffMark::Removed
                    }),
                    Item::Box(_) => true,
                    _ => false,
                })?;
        Some(self.grid_items[id as usize])
    }

    pub fn set_hovered(&mut self, node: Option<u32>) {
        if self.hovered == node {
            return;
        }
        for (id, on) in [(self.hovered, false), (node, true)] {
            if let Some(n) = id.and_then(|i| self.node_idx.get(i as usize).copied())
                && let Some(x) = self.graph.node_mut(n)
            {
                x.set_hovered(on);
            }
        }
        self.hovered = node;
    }

    pub fn hovered(&self) -> Option<u32> {
        self.hovered
    }

    pub fn node_mut(&mut self, id: u32) -> Option<&mut FxNodeUi> {
        let idx = *self.node_idx.get(id as usize)?;
        self.graph.node_mut(idx)
    }

    pub fn node_data(&self, id: u32) -> Option<&NodeData> {
        let idx = *self.node_idx.get(id as usize)?;
        self.graph.node(idx).map(|n| n.payload())
    }

    /// Union edge `e` with its two end nodes, for the edge shape.
    pub fn edge_parts(&self, e: u32) -> Option<(&FxEdgeUi, &FxNodeUi, &FxNodeUi)> {
        let &(a, b) = self.layout.union.edges().get(e as usize)?;
        let edge = self.graph.edge(*self.edge_idx.get(e as usize)?)?;
        let start = self.graph.node(self.node_idx[a as usize])?;
        let end = self.graph.node(self.node_idx[b as usize])?;
        Some((edge, start, end))
    }

    /// Per-box figures for the pass on screen.
    fn recount(&mut self) {
        let Some(mut f) = self.fold.take() else {
            return;
        };
        let present_edges: std::collections::HashSet<(u32, u32)> =
            self.pass_edges.iter().copied().collect();
        let union_edges = self.layout.union.edges();
        f.bundle_present = f
            .layout
            .edges
            .iter()
            .map(|d| {
                d.edges
                    .iter()
                    .filter(|&&e| present_edges.contains(&union_edges[e as usize]))
                    .count() as u32
            })
            .collect();
        f.recount(|i| {
            let p = self.graph.node(self.node_idx[i])?.payload();
            Some(NodeFacts {
                present: self.present[i],
                diff: match p.diff {
                    DiffMark::Same => None,
                    DiffMark::Added => Some(Change::Added),
                    DiffMark::Changed => Some(Change::Changed),
                    DiffMark::Removed => Some(Change::Removed),
                },
                fill: p.look.fill,
                tint: p.tint_severity.zip(p.tint),
                selected: p.selected,
                hit: p.mark == Mark::Hit,
            })
        });
        self.fold = Some(f);
    }

    /// Makes the scene show `file` as `view` asks: selection, cone highlight (the selection's
    /// upstream/downstream), search hits, folded sub-graphs. Cheap when nothing changed.
    pub fn apply(&mut self, file: &Arc<FxFile>, view: &SceneView, hits: &[u32]) {
        let want = Applied {
            file: Arc::as_ptr(file) as usize,
            selected: view.selected.map(str::to_owned),
            cone: view.cone,
            hits: view.hits_generation,
            collapsed: view.collapsed.to_vec(),
            diff: view.diff.map_or(0, |(_, d)| d as *const GraphDiff as usize),
            side: view.side,
            tints: view.tints.map_or(0, |t| t.generation),
        };
        if self.applied.as_ref() == Some(&want) {
            return;
        }
        self.looks += 1;
        let redraw_pass = self.applied.as_ref().is_none_or(|a| {
            a.file != want.file
                || a.collapsed != want.collapsed
                || a.diff != want.diff
                || a.side != want.side
        });
        if redraw_pass {
            let ids = self.layout.ids_of(file);
            self.show_pass(file, &ids, view.collapsed);
            self.overlay(file, &ids, view.diff, view.side);
        }
        if redraw_pass || self.applied.as_ref().is_none_or(|a| a.tints != want.tints) {
            self.tint(view.tints);
        }
        self.mark(view.selected, view.cone, hits);
        self.applied = Some(want);
        self.recount();
        self.counted = self.count();
    }

    fn count(&self) -> Counted {
        let mut c = Counted {
            present: self.present.iter().filter(|p| **p).count(),
            ..Counted::default()
        };
        for (i, &idx) in self.node_idx.iter().enumerate() {
            let Some(n) = self.graph.node(idx) else {
                continue;
            };
            let p = n.payload();
            if !p.present {
                continue;
            }
            match p.diff {
                DiffMark::Added => c.diff.0 += 1,
                DiffMark::Changed => c.diff.1 += 1,
                DiffMark::Removed => c.diff.2 += 1,
                DiffMark::Same => {}
            }
            if matches!(p.diff, DiffMark::Added | DiffMark::Changed) && self.present[i] {
                c.changed.push(i as u32);
            }
        }
        let key = |i: u32| self.flat_pos(i).map_or((0.0, 0.0), |p| (p.y, p.x));
        c.changed.sort_by(|&a, &b| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        c
    }

    fn tint(&mut self, tints: Option<&super::data_overlay::Tints>) {
        for (i, &idx) in self.node_idx.iter().enumerate() {
            let name = &self.layout.union.names()[i];
            let tint = tints.and_then(|t| t.by_name.get(name)).copied();
            let severity = tints.and_then(|t| t.severity.get(name)).copied();
            if let Some(n) = self.graph.node_mut(idx) {
                n.payload_mut().tint = tint;
                n.payload_mut().tint_severity = severity;
            }
        }
    }

    fn look(&self, node: &crate::model::fx::FxNode, id: usize) -> Arc<NodeLook> {
        let size = self.layout.sizes.get(id).copied().unwrap_or((100.0, 40.0));
        let family = op_family::family(node);
        let [r, g, b] = family.rgb();
        Arc::new(NodeLook {
            name: node.name.to_string(),
            target: short_target(node),
            subtitle: meta_text(node).unwrap_or_default(),
            fill: Color32::from_rgb(r, g, b),
            family,
            size: Vec2::new(size.0, size.1),
        })
    }

    /// Canvas centre of a union node as drawn now (`None` when a folded box hides it).
    pub fn pos(&self, id: u32) -> Option<Pos2> {
        match &self.fold {
            Some(f) => f
                .layout
                .node_pos
                .get(id as usize)
                .copied()
                .flatten()
                .map(|[x, y]| Pos2::new(x, y)),
            None => self.flat_pos(id),
        }
    }

    /// Canvas centre of a union node in the flat union layout.
    pub fn flat_pos(&self, id: u32) -> Option<Pos2> {
        self.layout
            .layout
            .pos
            .get(id as usize)
            .map(|&[x, y]| Pos2::new(x, y))
    }

    pub fn node_of(&self, idx: NodeIndex) -> Option<u32> {
        self.node_idx
            .iter()
            .position(|&i| i == idx)
            .map(|i| i as u32)
    }

    /// Union id of the node egui_graphs calls `idx`: node indices are assigned in order.
    pub fn id_of_index(&self, idx: NodeIndex) -> Option<u32> {
        let i = idx.index();
        (self.node_idx.get(i) == Some(&idx))
            .then_some(i as u32)
            .or_else(|| self.node_of(idx))
    }
}

/// A node's colour as a dot, and how much it matters when dots share a cell: the selection,
/// then what the pass changed, then the data overlay, then the op family, where the heavy ops
/// (matmuls, collectives) are the landmarks a zoomed-out model is read by.
pub fn dot_fill(d: &NodeData) -> (Color32, u8) {
    use op_family::OpFamily as F;
    if d.selected {
        (crate::ui::palette::SELECTED, 8)
    } else if let Some(c) = d.diff.color() {
        (c, 7)
    } else if let Some(t) = d.tint {
        (t, 6)
    } else {
        let rank = match d.look.family {
            F::MatmulConv | F::Communication => 3,
            F::Reduction | F::NpuCustom => 2,
            F::Elementwise | F::Control => 1,
            F::Input | F::Output | F::ViewLayout | F::Other => 0,
        };
        (d.look.fill, rank)
    }
}

/// The one union edge a drawn edge between two nodes stands for (`None`: a bundle, or an edge
/// to or from a box).
fn one_edge(d: &crate::analysis::fold::layout::DrawEdge) -> Option<u32> {
    match (d.from, d.to, d.edges.as_slice()) {
        (Rep::Node(_), Rep::Node(_), &[e]) => Some(e),
        _ => None,
    }
}

/// The items of `grid` meeting `area` (`items[id]` is what grid item `id` stands for), with the
/// query's buffers reused frame to frame.
fn query(
    grid: &Grid,
    items: &[Item],
    area: [f32; 4],
    scratch: &mut Scratch,
    found: &mut Vec<u32>,
) -> Vec<Item> {
    grid.query(area, scratch, found);
    found.iter().map(|&i| items[i as usize]).collect()
}
