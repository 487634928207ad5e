//! Placing one fold state: a compound layered layout, module by module.
//!
//! Each expanded module lays out its own items (sub-module boxes and its nodes) with the
//! layered layout; a folded sub-module is a fixed-size box, an expanded one is as big as its
//! own layout plus a title bar. Local layouts are cached by the fold state of the module's
//! subtree, so opening one box re-lays out only the modules on its path to the root (a layer's
//! few hundred nodes and its ancestors' handful of boxes), not the graph.

use super::{FoldTree, Item, ModIx, ROOT};
use crate::analysis::layout::{self, Cancelled, LayoutInput, LayoutParams};
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A folded box: its name, counts, a family bar and the diff badge fit in it.
pub const FOLDED: (f32, f32) = (240.0, 86.0);
/// Title bar of an expanded box (its name; click to fold).
pub const TITLE_H: f32 = 34.0;
pub const PAD: f32 = 16.0;

/// What stands for a node on screen: the node itself, or the folded box hiding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rep {
    Node(u32),
    Box(ModIx),
}

/// A module's own layout, relative to its box's top-left corner.
#[derive(Debug)]
struct Local {
    size: (f32, f32),
    /// Centre of each item shown, in [`shown_items`] order.
    pos: Vec<[f32; 2]>,
    /// Route of each edge drawn between the module's items shown.
    routes: Vec<Vec<[f32; 2]>>,
    /// Per lifted edge of the module (`FoldTree::lifted[m]`): its route in `routes`, `None`
    /// when both its ends stand for one box (two members of a repeat group).
    route_of: Vec<Option<u32>>,
}

/// The items of module `m` on screen: its sub-modules but those a repeat group's shown member
/// stands in for, then its own nodes.
pub fn shown_items(tree: &FoldTree, m: ModIx, stand_in: &[Option<ModIx>]) -> Vec<Item> {
    let md = &tree.modules[m as usize];
    md.children
        .iter()
        .filter(|&&c| stand_in.get(c as usize).copied().flatten().is_none())
        .map(|&c| Item::Module(c))
        .chain(md.nodes.iter().map(|&n| Item::Node(n)))
        .collect()
}

/// The item standing for `item` on screen: a hidden group member's shown member, else itself.
fn shown_item(item: Item, stand_in: &[Option<ModIx>]) -> Item {
    match item {
        Item::Module(c) => Item::Module(stand_in.get(c as usize).copied().flatten().unwrap_or(c)),
        x => x,
    }
}

/// Local layouts kept between fold states, keyed by the fold state of their subtree.
#[derive(Debug, Default)]
pub struct FoldCache {
    local: HashMap<ModIx, (u64, Arc<Local>)>,
}

#[derive(Debug, Clone)]
pub struct PlacedBox {
    pub module: ModIx,
    /// Canvas `[x0, y0, x1, y1]`.
    pub rect: [f32; 4],
    pub folded: bool,
}

/// Edges between the same two visible things, drawn as one line.
#[derive(Debug, Clone)]
pub struct DrawEdge {
    pub from: Rep,
    pub to: Rep,
    /// Canvas polyline, from `from`'s bottom to `to`'s top.
    pub path: Vec<[f32; 2]>,
    /// Union edges it stands for.
    pub edges: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct FoldLayout {
    pub expanded: Vec<bool>,
    /// Per module: the member of its repeat group shown in its stead (`None`: itself shown).
    pub stand_in: Vec<Option<ModIx>>,
    /// Centre of each union node shown, `None` when a folded box hides it.
    pub node_pos: Vec<Option<[f32; 2]>>,
    /// Boxes shown, parents before their children.
    pub boxes: Vec<PlacedBox>,
    /// Index in `boxes` of each module shown as a box.
    pub box_of: Vec<Option<u32>>,
    pub edges: Vec<DrawEdge>,
    /// What stands for each union node.
    pub rep: Vec<Rep>,
    pub bounds: [f32; 4],
}

/// Lays out `tree` with the modules `expanded` says open (the root always is); a module with
/// `stand_in[m] = Some(s)` is not drawn, `s` (a member of its repeat group) stands for it.
pub fn place(
    tree: &FoldTree,
    edges: &[(u32, u32)],
    sizes: &[(f32, f32)],
    expanded: &[bool],
    stand_in: &[Option<ModIx>],
    cache: &mut FoldCache,
) -> Result<FoldLayout, Cancelled> {
    let mut e = expanded.to_vec();
    e.resize(tree.modules.len(), false);
    e[ROOT as usize] = true;
    let mut si = stand_in.to_vec();
    si.resize(tree.modules.len(), None);
    let cancel = AtomicBool::new(false);
    let mut sigs = vec![0u64; tree.modules.len()];
    signatures(tree, ROOT, &e, &si, &mut sigs);
    let st = State {
        e: &e,
        stand_in: &si,
        sigs: &sigs,
    };
    let root = local(tree, ROOT, sizes, &st, cache, &cancel)?;
    let mut out = FoldLayout {
        node_pos: vec![None; tree.module_of.len()],
        box_of: vec![None; tree.modules.len()],
        ..FoldLayout::default()
    };
    let mut origin: Vec<Option<[f32; 2]>> = vec![None; tree.modules.len()];
    origin[ROOT as usize] = Some([0.0, 0.0]);
    // Breadth-first, so parents come before their children (paint order).
    let mut queue = std::collections::VecDeque::from([(ROOT, [0.0f32, 0.0f32], root)]);
    while let Some((m, o, loc)) = queue.pop_front() {
        for (i, item) in shown_items(tree, m, &si).into_iter().enumerate() {
            let c = [o[0] + loc.pos[i][0], o[1] + loc.pos[i][1]];
            match item {
                Item::Node(n) => out.node_pos[n as usize] = Some(c),
                Item::Module(k) => {
                    let open = e[k as usize];
                    let sub = if open {
                        Some(local(tree, k, sizes, &st, cache, &cancel)?)
                    } else {
                        None
                    };
                    let size = sub.as_ref().map_or(FOLDED, |s| s.size);
                    let rect = [
                        c[0] - size.0 / 2.0,
                        c[1] - size.1 / 2.0,
                        c[0] + size.0 / 2.0,
                        c[1] + size.1 / 2.0,
                    ];
                    out.box_of[k as usize] = Some(out.boxes.len() as u32);
                    out.boxes.push(PlacedBox {
                        module: k,
                        rect,
                        folded: !open,
                    });
                    if let Some(sub) = sub {
                        origin[k as usize] = Some([rect[0], rect[1]]);
                        queue.push_back((k, [rect[0], rect[1]], sub));
                    }
                }
            }
        }
    }
    out.rep = (0..tree.module_of.len() as u32)
        .map(|n| tree.rep_in(n, &e, &si))
        .collect();
    out.edges = draw_edges(tree, edges, &out, &origin, cache, &si);
    out.bounds = bounds(&out, sizes);
    out.expanded = e;
    out.stand_in = si;
    Ok(out)
}

/// What a module's local layout depends on besides the tree.
struct State<'a> {
    e: &'a [bool],
    stand_in: &'a [Option<ModIx>],
    sigs: &'a [u64],
}

fn signatures(
    tree: &FoldTree,
    m: ModIx,
    e: &[bool],
    stand_in: &[Option<ModIx>],
    sigs: &mut [u64],
) -> u64 {
    let mut h = DefaultHasher::new();
    m.hash(&mut h);
    for &c in &tree.modules[m as usize].children {
        if stand_in[c as usize].is_some() {
            continue;
        }
        let open = e[c as usize];
        (c, open).hash(&mut h);
        if open {
            signatures(tree, c, e, stand_in, sigs).hash(&mut h);
        }
    }
    sigs[m as usize] = h.finish();
    sigs[m as usize]
}

fn local(
    tree: &FoldTree,
    m: ModIx,
    sizes: &[(f32, f32)],
    st: &State,
    cache: &mut FoldCache,
    cancel: &AtomicBool,
) -> Result<Arc<Local>, Cancelled> {
    if let Some((sig, l)) = cache.local.get(&m)
        && *sig == st.sigs[m as usize]
    {
        return Ok(l.clone());
    }
    let items = shown_items(tree, m, st.stand_in);
    let mut index: HashMap<Item, u32> = HashMap::with_capacity(items.len());
    let mut item_sizes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        index.insert(*item, i as u32);
        item_sizes.push(match *item {
            Item::Node(n) => sizes.get(n as usize).copied().unwrap_or((96.0, 46.0)),
            Item::Module(k) if st.e[k as usize] => local(tree, k, sizes, st, cache, cancel)?.size,
            Item::Module(_) => FOLDED,
        });
    }
    // The lifted edges between the items shown: a hidden group member's edges are its shown
    // member's, and the links from one member to the next (layer k → k+1) vanish into the box.
    let mut lifted: Vec<super::Lifted> = Vec::new();
    let mut merged: HashMap<(Item, Item), u32> = HashMap::new();
    let route_of: Vec<Option<u32>> = tree.lifted[m as usize]
        .iter()
        .map(|l| {
            let (from, to) = (
                shown_item(l.from, st.stand_in),
                shown_item(l.to, st.stand_in),
            );
            if from == to {
                return None;
            }
            Some(*merged.entry((from, to)).or_insert_with(|| {
                lifted.push(super::Lifted {
                    from,
                    to,
                    count: l.count,
                });
                lifted.len() as u32 - 1
            }))
        })
        .collect();
    if let Some(mut l) = chain_grid(m, &items, &item_sizes, &lifted, &index) {
        l.route_of = route_of;
        let l = Arc::new(l);
        cache.local.insert(m, (st.sigs[m as usize], l.clone()));
        return Ok(l);
    }
    let input = LayoutInput {
        sizes: item_sizes,
        edges: lifted
            .iter()
            .map(|l| (index[&l.from], index[&l.to]))
            .collect(),
        groups: Vec::new(),
    };
    let g = layout::layout(&input, &LayoutParams::default(), cancel)?;
    let [x0, y0, x1, y1] = g.bounds;
    let (dx, dy, w, h) = if m == ROOT {
        (0.0, 0.0, x1 - x0, y1 - y0)
    } else {
        (
            PAD - x0,
            TITLE_H + PAD - y0,
            (x1 - x0 + 2.0 * PAD).max(FOLDED.0),
            y1 - y0 + TITLE_H + 2.0 * PAD,
        )
    };
    let shift = |p: &[f32; 2]| [p[0] + dx, p[1] + dy];
    let l = Arc::new(Local {
        size: (w, h),
        pos: g.pos.iter().map(shift).collect(),
        routes: g
            .edge_paths
            .iter()
            .map(|r| r.iter().map(shift).collect())
            .collect(),
        route_of,
    });
    cache.local.insert(m, (st.sigs[m as usize], l.clone()));
    Ok(l)
}

/// Sub-modules that run one after another (`layers.0` → `layers.1` → …) would lay out as one
/// column thousands of pixels tall; at least this many are wrapped into rows instead.
const GRID_MIN: usize = 8;
const GRID_GAP: (f32, f32) = (48.0, 56.0);
/// Width : height of the wrapped block (about a landscape screen).
const GRID_ASPECT: f32 = 1.6;

/// A module made only of sub-modules chained in order, wrapped into rows that snake (left to
/// right, then right to left), so each link stays short. Rows and columns take the size of
/// their largest box: opening a box moves the others apart, never out of order.
fn chain_grid(
    m: ModIx,
    items: &[Item],
    sizes: &[(f32, f32)],
    lifted: &[super::Lifted],
    index: &HashMap<Item, u32>,
) -> Option<Local> {
    let n = items.len();
    if n < GRID_MIN || items.iter().any(|i| matches!(i, Item::Node(_))) {
        return None;
    }
    // Mostly links from each block to the next (a few others, e.g. a value the last block
    // hands back to the first, are drawn straight).
    // A backward runs its blocks last to first: then the chain runs against the item order,
    // and the rows start from the last item.
    let (mut ahead, mut back) = (0, 0);
    for l in lifted {
        let (a, b) = (index[&l.from], index[&l.to]);
        ahead += usize::from(b == a + 1);
        back += usize::from(a == b + 1);
    }
    let links = ahead.max(back);
    if links * 5 < (n - 1) * 4 || lifted.len() > 2 * n {
        return None;
    }
    let reversed = back > ahead;
    // Rows as long as when every box is folded, whatever is open: opening one box must not
    // reflow the others.
    let (w, h) = FOLDED;
    let per = ((GRID_ASPECT * n as f32 * (h + GRID_GAP.1) / (w + GRID_GAP.0))
        .sqrt()
        .round() as usize)
        .clamp(1, n);
    let rows = n.div_ceil(per);
    let cell = |i: usize| {
        let i = if reversed { n - 1 - i } else { i };
        let r = i / per;
        let c = if r.is_multiple_of(2) {
            i % per
        } else {
            per - 1 - i % per
        };
        (r, c)
    };
    let mut col_w = vec![0.0f32; per];
    let mut row_h = vec![0.0f32; rows];
    for (i, s) in sizes.iter().enumerate() {
        let (r, c) = cell(i);
        col_w[c] = col_w[c].max(s.0);
        row_h[r] = row_h[r].max(s.1);
    }
    let starts = |v: &[f32], gap: f32, first: f32| {
        let mut at = first;
        v.iter()
            .map(|x| {
                let s = at;
                at += x + gap;
                s
            })
            .collect::<Vec<f32>>()
    };
    let (x0, y0) = if m == ROOT {
        (0.0, 0.0)
    } else {
        (PAD, TITLE_H + PAD)
    };
    let xs = starts(&col_w, GRID_GAP.0, x0);
    let ys = starts(&row_h, GRID_GAP.1, y0);
    let pos: Vec<[f32; 2]> = (0..n)
        .map(|i| {
            let (r, c) = cell(i);
            // Top-aligned: an open box grows down, its row's folded boxes stay beside its title.
            [xs[c] + col_w[c] / 2.0, ys[r] + sizes[i].1 / 2.0]
        })
        .collect();
    let side = |i: usize, x: f32| [pos[i][0] + x * sizes[i].0 / 2.0, pos[i][1]];
    let routes = lifted
        .iter()
        .map(|l| {
            let (a, b) = (index[&l.from] as usize, index[&l.to] as usize);
            let ((ra, ca), (rb, cb)) = (cell(a), cell(b));
            if ra == rb {
                // Along the row, side to side.
                let dir = if cb > ca { 1.0 } else { -1.0 };
                vec![side(a, dir), side(b, -dir)]
            } else {
                let bottom = [pos[a][0], pos[a][1] + sizes[a].1 / 2.0];
                let top = [pos[b][0], pos[b][1] - sizes[b].1 / 2.0];
                vec![bottom, top]
            }
        })
        .collect();
    let width = xs.last().zip(col_w.last()).map_or(0.0, |(x, w)| x + w) + x0.min(PAD);
    let height = ys.last().zip(row_h.last()).map_or(0.0, |(y, h)| y + h) + x0.min(PAD);
    Some(Local {
        size: (width.max(FOLDED.0), height),
        pos,
        routes,
        route_of: Vec::new(),
    })
}

/// Beyond this many boxes or nodes behind one lifted edge (a value every layer reads, like the
/// rotary tables), the edge ends at the box that holds them instead of fanning out to each.
const FAN_MAX: usize = 4;

fn draw_edges(
    tree: &FoldTree,
    edges: &[(u32, u32)],
    out: &FoldLayout,
    origin: &[Option<[f32; 2]>],
    cache: &FoldCache,
    stand_in: &[Option<ModIx>],
) -> Vec<DrawEdge> {
    // What each visible union edge joins, and how many distinct ends share a lifted edge and
    // the other end.
    let mut ends: Vec<(u32, ModIx, u32, Rep, Rep)> = Vec::new();
    let mut fan_out: HashMap<(ModIx, u32, Rep), Vec<Rep>> = HashMap::new();
    let mut fan_in: HashMap<(ModIx, u32, Rep), Vec<Rep>> = HashMap::new();
    for (ei, (&(a, b), lift)) in edges.iter().zip(&tree.edge_lift).enumerate() {
        let Some((l, k)) = *lift else { continue };
        if origin[l as usize].is_none() {
            continue;
        }
        let (ra, rb) = (out.rep[a as usize], out.rep[b as usize]);
        if ra == rb {
            continue;
        }
        ends.push((ei as u32, l, k, ra, rb));
        let to = fan_out.entry((l, k, ra)).or_default();
        if to.len() <= FAN_MAX && !to.contains(&rb) {
            to.push(rb);
        }
        let from = fan_in.entry((l, k, rb)).or_default();
        if from.len() <= FAN_MAX && !from.contains(&ra) {
            from.push(ra);
        }
    }
    let mut merged: HashMap<(Rep, Rep), usize> = HashMap::new();
    let mut list: Vec<DrawEdge> = Vec::new();
    for (ei, l, k, ra, rb) in ends {
        let (Some(o), Some((_, loc))) = (origin[l as usize], cache.local.get(&l)) else {
            continue;
        };
        let lifted = &tree.lifted[l as usize][k as usize];
        let (item_a, item_b) = (
            rep_of_item(shown_item(lifted.from, stand_in), out),
            rep_of_item(shown_item(lifted.to, stand_in), out),
        );
        let (ra, rb) = (
            if fan_in[&(l, k, rb)].len() > FAN_MAX {
                item_a
            } else {
                ra
            },
            if fan_out[&(l, k, ra)].len() > FAN_MAX {
                item_b
            } else {
                rb
            },
        );
        if ra == rb {
            continue;
        }
        if let Some(&i) = merged.get(&(ra, rb)) {
            list[i].edges.push(ei);
            continue;
        }
        let mut path: Vec<[f32; 2]> = Vec::new();
        if item_a != ra {
            path.extend(anchor(ra, out, true));
        }
        path.extend(
            loc.route_of
                .get(k as usize)
                .copied()
                .flatten()
                .and_then(|r| loc.routes.get(r as usize))
                .into_iter()
                .flatten()
                .map(|p| [p[0] + o[0], p[1] + o[1]]),
        );
        if item_b != rb {
            path.extend(anchor(rb, out, false));
        }
        merged.insert((ra, rb), list.len());
        list.push(DrawEdge {
            from: ra,
            to: rb,
            path,
            edges: vec![ei],
        });
    }
    list
}

fn rep_of_item(item: Item, out: &FoldLayout) -> Rep {
    match item {
        Item::Node(n) => out.rep.get(n as usize).copied().unwrap_or(Rep::Node(n)),
        Item::Module(m) => Rep::Box(m),
    }
}

/// Bottom centre (`out_going`) or top centre of what stands for a node.
fn anchor(r: Rep, out: &FoldLayout, outgoing: bool) -> Option<[f32; 2]> {
    let rect = match r {
        Rep::Node(n) => {
            let c = out.node_pos.get(n as usize).copied().flatten()?;
            // Node boxes are NODE_HEIGHT tall; the end sits on their edge.
            let h = crate::analysis::phase_layout::NODE_HEIGHT / 2.0;
            [c[0], c[1] - h, c[0], c[1] + h]
        }
        Rep::Box(m) => out.boxes[out.box_of.get(m as usize).copied().flatten()? as usize].rect,
    };
    let x = (rect[0] + rect[2]) / 2.0;
    Some([x, if outgoing { rect[3] } else { rect[1] }])
}

fn bounds(out: &FoldLayout, sizes: &[(f32, f32)]) -> [f32; 4] {
    let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    let mut grow = |r: [f32; 4]| {
        b[0] = b[0].min(r[0]);
        b[1] = b[1].min(r[1]);
        b[2] = b[2].max(r[2]);
        b[3] = b[3].max(r[3]);
    };
    for bx in &out.boxes {
        grow(bx.rect);
    }
    for (n, p) in out.node_pos.iter().enumerate() {
        if let Some(c) = p {
            let (w, h) = sizes.get(n).copied().unwrap_or((96.0, 46.0));
            grow([
                c[0] - w / 2.0,
                c[1] - h / 2.0,
                c[0] + w / 2.0,
                c[1] + h / 2.0,
            ]);
        }
    }
    if b[0] > b[2] { [0.0; 4] } else { b }
}

#[cfg(test)]
mod tests {
    use super::super::FoldTree;
    use super::*;

    #[test]
    fn opening_a_box_moves_others_apart_but_keeps_their_order() {
        let paths: Vec<String> = (0..6)
            .flat_map(|l| (0..5).map(move |_| format!("layers.{l}")))
            .collect();
        let edges: Vec<(u32, u32)> = (0..29).map(|i| (i, i + 1)).collect();
        let sizes = vec![(100.0, 46.0); 30];
        let t = FoldTree::new(&paths, &edges);
        let mut cache = FoldCache::default();
        let folded = t.expanded_to(2);
        let a = place(&t, &edges, &sizes, &folded, &[], &mut cache).unwrap();
        assert_eq!(a.boxes.iter().filter(|b| b.folded).count(), 6);
        // Chained layers: each box below the previous; one bundled edge between neighbours.
        let ys: Vec<f32> = a
            .boxes
            .iter()
            .filter(|b| b.folded)
            .map(|b| b.rect[1])
            .collect();
        assert!(ys.windows(2).all(|w| w[0] < w[1]), "{ys:?}");
        assert_eq!(a.edges.len(), 5);
        let l3 = t.find("layers.3").unwrap();
        let mut open = folded.clone();
        open[l3 as usize] = true;
        let b = place(&t, &edges, &sizes, &open, &[], &mut cache).unwrap();
        let ys2: Vec<f32> = b
            .boxes
            .iter()
            .filter(|x| x.module != t.find("layers").unwrap())
            .map(|x| x.rect[1])
            .collect();
        assert!(ys2.windows(2).all(|w| w[0] < w[1]), "{ys2:?}");
        // The five nodes of layers.3 are shown inside its box; the rest are hidden.
        let inside = b.boxes[b.box_of[l3 as usize].unwrap() as usize].rect;
        for n in 15..20 {
            let p = b.node_pos[n].unwrap();
            assert!(p[0] > inside[0] && p[0] < inside[2] && p[1] > inside[1] && p[1] < inside[3]);
        }
        assert!(b.node_pos[0].is_none());
        // Edges into and out of the open box end at its nodes.
        assert!(
            b.edges
                .iter()
                .any(|d| d.from == Rep::Box(t.find("layers.2").unwrap()) && d.to == Rep::Node(15))
        );
    }

    #[test]
    fn a_long_chain_of_blocks_wraps_into_snaking_rows() {
        let paths: Vec<String> = (0..30)
            .flat_map(|l| (0..3).map(move |_| format!("layers.{l}")))
            .collect();
        let edges: Vec<(u32, u32)> = (0..89).map(|i| (i, i + 1)).collect();
        let sizes = vec![(100.0, 46.0); 90];
        let t = FoldTree::new(&paths, &edges);
        let mut cache = FoldCache::default();
        let folded = t.expanded_to(2);
        let a = place(&t, &edges, &sizes, &folded, &[], &mut cache).unwrap();
        let [x0, y0, x1, y1] = a.bounds;
        let (w, h) = (x1 - x0, y1 - y0);
        assert!(w / h > 0.8 && w / h < 3.0, "{w} x {h}");
        let centre = |l: usize| {
            let m = t.find(&format!("layers.{l}")).unwrap();
            let r = a.boxes[a.box_of[m as usize].unwrap() as usize].rect;
            ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0)
        };
        // Row 0 runs left to right, row 1 back right to left, under it.
        let per = (0..30).take_while(|&l| centre(l).1 == centre(0).1).count();
        assert!(per > 1 && per < 30);
        assert!(centre(1).0 > centre(0).0);
        assert!(centre(per).1 > centre(0).1);
        assert_eq!(centre(per).0, centre(per - 1).0, "the snake turns down");
        assert!(centre(per + 1).0 < centre(per).0);
        // Opening one block moves its neighbours apart but keeps every row and column.
        let mut open = folded.clone();
        open[t.find("layers.1").unwrap() as usize] = true;
        let b = place(&t, &edges, &sizes, &open, &[], &mut cache).unwrap();
        let centre_b = |l: usize| {
            let m = t.find(&format!("layers.{l}")).unwrap();
            let r = b.boxes[b.box_of[m as usize].unwrap() as usize].rect;
            ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0)
        };
        assert_eq!(centre_b(0).1, centre_b(2).1);
        assert!(centre_b(2).0 > centre_b(1).0 && centre_b(1).0 > centre_b(0).0);
        assert!(centre_b(per).1 > centre_b(0).1);
    }
}
