//! Tests of the layered layout engine (`analysis::layout`).
//!
//! Timings are printed, never asserted, by the `#[ignore]` benchmarks at the end:
//! `cargo test --release --test it layout:: -- --ignored --nocapture`.

use fxray::analysis::layout::{
    Cancelled, EdgeKind, GraphLayout, LayoutInput, LayoutParams, UnionGraph, build_union,
    count_crossings, layout, relayout,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Helpers

/// Deterministic pseudo-random numbers (xorshift64*), so every test graph is reproducible.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A layered random DAG shaped like an FX graph: ops in ranks of 1..5 along a spine (the
/// residual stream: the first op of each rank reads the first of the previous one), each op
/// reading one or two ops of the previous ranks, a few long skip edges (saved activations)
/// and some weights (sources) read once deep down. Node ids follow "file order".
fn fx_like_dag(n: usize, seed: u64) -> LayoutInput {
    let mut rng = XorShift::new(seed);
    let mut edges = Vec::new();
    let mut sizes = Vec::with_capacity(n);
    let mut ranks: Vec<Vec<u32>> = Vec::new();
    let mut next = 0u32;
    while (next as usize) < n {
        let width = 1 + rng.below(5).min(n - next as usize - 1);
        let mut rank = Vec::with_capacity(width);
        for k in 0..width {
            let v = next;
            next += 1;
            sizes.push((60.0 + rng.below(120) as f32, 30.0 + rng.below(20) as f32));
            rank.push(v);
            if ranks.is_empty() || (k > 0 && rng.chance(8)) {
                continue; // a source: weight or graph input, wired below when used
            }
            let prev = &ranks[ranks.len() - 1];
            let from = if k == 0 {
                prev[0]
            } else {
                prev[rng.below(prev.len())]
            };
            edges.push((from, v));
            if rng.chance(35) {
                let back = 1 + rng.below(ranks.len().min(4));
                let r = &ranks[ranks.len() - back];
                edges.push((r[rng.below(r.len())], v));
            }
            if rng.chance(3) {
                let r = &ranks[rng.below(ranks.len())];
                edges.push((r[rng.below(r.len())], v));
            }
        }
        ranks.push(rank);
    }
    // Sources feed a consumer somewhere later (weights used once, deep in the graph).
    let has_pred: HashSet<u32> = edges.iter().map(|e| e.1).collect();
    for v in 1..n as u32 {
        if !has_pred.contains(&v) && v + 1 < n as u32 {
            let consumer = v + 1 + rng.below((n as u32 - v - 1) as usize) as u32;
            edges.push((v, consumer));
        }
    }
    LayoutInput {
        sizes,
        edges,
        groups: Vec::new(),
    }
}

fn boxes(n: usize) -> Vec<(f32, f32)> {
    vec![(80.0, 30.0); n]
}

fn input(n: usize, edges: &[(u32, u32)]) -> LayoutInput {
    LayoutInput {
        sizes: boxes(n),
        edges: edges.to_vec(),
        groups: Vec::new(),
    }
}

fn run(input: &LayoutInput) -> GraphLayout {
    layout(input, &LayoutParams::default(), &AtomicBool::new(false)).expect("not cancelled")
}

/// Nodes of each layer, left to right.
fn layers_of(l: &GraphLayout) -> Vec<Vec<u32>> {
    let count = l.layer.iter().map(|&x| x as usize + 1).max().unwrap_or(0);
    let mut layers = vec![Vec::new(); count];
    for (v, &ly) in l.layer.iter().enumerate() {
        layers[ly as usize].push(v as u32);
    }
    for layer in &mut layers {
        layer.sort_by(|&a, &b| l.pos[a as usize][0].total_cmp(&l.pos[b as usize][0]));
    }
    layers
}

fn assert_edges_point_down(inp: &LayoutInput, l: &GraphLayout) {
    let reversed: HashSet<u32> = l.reversed_edges.iter().copied().collect();
    for (i, &(s, t)) in inp.edges.iter().enumerate() {
        if s == t || s as usize >= inp.sizes.len() || t as usize >= inp.sizes.len() {
            continue;
        }
        let (ls, lt) = (l.layer[s as usize], l.layer[t as usize]);
        if reversed.contains(&(i as u32)) {
            assert!(
                ls > lt,
                "reversed edge {i} {s}->{t} must go up: {ls} -> {lt}"
            );
        } else {
            assert!(lt > ls, "edge {i} {s}->{t} must go down: {ls} -> {lt}");
        }
    }
}

fn assert_no_overlap(inp: &LayoutInput, l: &GraphLayout, node_gap: f32) {
    for layer in layers_of(l) {
        for w in layer.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            let need = (inp.sizes[a].0 + inp.sizes[b].0) / 2.0 + node_gap;
            let got = l.pos[b][0] - l.pos[a][0];
            assert!(
                got >= need - 1e-3 * need.max(1.0),
                "nodes {a} and {b} of layer {} overlap: {got} < {need}",
                l.layer[a]
            );
        }
    }
}

/// Every polyline starts at the bottom of its source and ends at the top of its target (the
/// reverse for reversed edges).
fn assert_paths_attach(inp: &LayoutInput, l: &GraphLayout) {
    let reversed: HashSet<u32> = l.reversed_edges.iter().copied().collect();
    for (i, &(s, t)) in inp.edges.iter().enumerate() {
        let path = &l.edge_paths[i];
        if l.edge_kinds[i] == EdgeKind::Invalid {
            assert!(path.is_empty());
            continue;
        }
        let (s, t) = (s as usize, t as usize);
        let bottom = |v: usize| [l.pos[v][0], l.pos[v][1] + inp.sizes[v].1 / 2.0];
        let top = |v: usize| [l.pos[v][0], l.pos[v][1] - inp.sizes[v].1 / 2.0];
        let (first, last) = (path[0], path[path.len() - 1]);
        if reversed.contains(&(i as u32)) {
            assert_eq!((first, last), (top(s), bottom(t)), "edge {i}");
        } else {
            assert_eq!((first, last), (bottom(s), top(t)), "edge {i}");
        }
    }
}

/// Everything but the timings.
fn same_layout(a: &GraphLayout, b: &GraphLayout) -> bool {
    let strip = |l: &GraphLayout| {
        let mut l = l.clone();
        l.stats.phase_times.clear();
        l
    };
    strip(a) == strip(b)
}

/// Crossings of two segments that do not share an endpoint, by orientation tests.
fn segments_cross(p: [[f32; 2]; 2], q: [[f32; 2]; 2]) -> bool {
    let orient = |a: [f32; 2], b: [f32; 2], c: [f32; 2]| {
        let v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
        if v.abs() < 1e-3 { 0 } else { v.signum() as i32 }
    };
    let shares = p.iter().any(|a| q.iter().any(|b| a == b));
    if shares {
        return false;
    }
    let (d1, d2) = (orient(q[0], q[1], p[0]), orient(q[0], q[1], p[1]));
    let (d3, d4) = (orient(p[0], p[1], q[0]), orient(p[0], p[1], q[1]));
    d1 * d2 < 0 && d3 * d4 < 0
}

/// Crossings of the drawn polylines, counted geometrically: independent of the engine's own
/// counter.
fn drawn_crossings(l: &GraphLayout) -> usize {
    let segs: Vec<(usize, [[f32; 2]; 2])> = l
        .edge_paths
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.windows(2).map(move |w| (i, [w[0], w[1]])))
        .collect();
    let mut count = 0;
    for a in 0..segs.len() {
        for b in a + 1..segs.len() {
            if segs[a].0 != segs[b].0 && segments_cross(segs[a].1, segs[b].1) {
                count += 1;
            }
        }
    }
    count
}

/// Brute-force reference for `count_crossings`: every pair of edges between adjacent layers.
fn brute_crossings(layers: &[Vec<u32>], edges: &[(u32, u32)]) -> u64 {
    let mut at = std::collections::HashMap::new();
    for (l, nodes) in layers.iter().enumerate() {
        for (p, &v) in nodes.iter().enumerate() {
            at.insert(v, (l, p));
        }
    }
    let adjacent: Vec<(usize, usize, usize)> = edges
        .iter()
        .filter_map(|(a, b)| {
            let (&(la, pa), &(lb, pb)) = (at.get(a)?, at.get(b)?);
            if lb == la + 1 {
                Some((la, pa, pb))
            } else if la == lb + 1 {
                Some((lb, pb, pa))
            } else {
                None
            }
        })
        .collect();
    let mut count = 0;
    for i in 0..adjacent.len() {
        for j in i + 1..adjacent.len() {
            let (l1, u1, d1) = adjacent[i];
            let (l2, u2, d2) = adjacent[j];
            if l1 == l2 && ((u1 < u2 && d1 > d2) || (u1 > u2 && d1 < d2)) {
                count += 1;
            }
        }
    }
    count
}

// ---------------------------------------------------------------------------------------------
// Structure

#[test]
fn edges_point_down_and_reversed_edges_are_reported() {
    let mut inp = fx_like_dag(600, 7);
    // Feedback edges: from deep nodes back up, as a pass rewiring across the union would.
    let mut rng = XorShift::new(99);
    for _ in 0..40 {
        let a = 300 + rng.below(300) as u32;
        let b = rng.below(300) as u32;
        inp.edges.push((a, b));
    }
    let l = run(&inp);
    assert!(
        !l.reversed_edges.is_empty(),
        "cycles were added, some edge must be reversed"
    );
    assert_edges_point_down(&inp, &l);
    assert_paths_attach(&inp, &l);
}

#[test]
fn a_two_cycle_reverses_exactly_one_edge() {
    let inp = input(2, &[(0, 1), (1, 0)]);
    let l = run(&inp);
    assert_eq!(l.reversed_edges, vec![1]);
    assert_eq!(l.layer, vec![0, 1]);
    assert_edges_point_down(&inp, &l);
}

#[test]
fn nodes_of_a_layer_never_overlap() {
    let inp = fx_like_dag(1500, 3);
    let params = LayoutParams {
        node_gap: 13.0,
        ..LayoutParams::default()
    };
    let l = layout(&inp, &params, &AtomicBool::new(false)).unwrap();
    assert_no_overlap(&inp, &l, 13.0);
}

#[test]
fn sources_sit_just_above_their_first_consumer() {
    let inp = fx_like_dag(1500, 11);
    let l = run(&inp);
    let has_pred: HashSet<u32> = inp.edges.iter().map(|e| e.1).collect();
    let mut checked = 0;
    for s in 0..inp.sizes.len() as u32 {
        if has_pred.contains(&s) {
            continue;
        }
        let first = inp
            .edges
            .iter()
            .filter(|e| e.0 == s)
            .map(|e| l.layer[e.1 as usize])
            .min();
        if let Some(first) = first {
            assert_eq!(l.layer[s as usize] + 1, first, "source {s}");
            checked += 1;
        }
    }
    assert!(checked > 50, "the generator makes many sources ({checked})");
}

#[test]
fn a_weight_chain_follows_its_consumer_down() {
    // 0..10 is the main chain; weight 10 -> permute 11 -> consumed by chain node 9.
    let mut edges: Vec<(u32, u32)> = (0..9).map(|i| (i, i + 1)).collect();
    edges.push((10, 11));
    edges.push((11, 9));
    let l = run(&input(12, &edges));
    assert_eq!(l.layer[11], l.layer[9] - 1);
    assert_eq!(l.layer[10], l.layer[9] - 2);
    assert_eq!(l.stats.dummies, 0);
}

// ---------------------------------------------------------------------------------------------
// Crossings

#[test]
fn crossing_counter_matches_brute_force() {
    let mut rng = XorShift::new(5);
    for trial in 0..200 {
        let layer_count = 2 + rng.below(4);
        let mut layers: Vec<Vec<u32>> = Vec::new();
        let mut next = 0;
        for _ in 0..layer_count {
            let w = 1 + rng.below(7);
            layers.push((next..next + w as u32).collect());
            next += w as u32;
        }
        for layer in &mut layers {
            for i in (1..layer.len()).rev() {
                let j = rng.below(i + 1);
                layer.swap(i, j);
            }
        }
        let edges: Vec<(u32, u32)> = (0..rng.below(30))
            .map(|_| {
                (
                    rng.below(next as usize) as u32,
                    rng.below(next as usize) as u32,
                )
            })
            .collect();
        assert_eq!(
            count_crossings(&layers, &edges),
            brute_crossings(&layers, &edges),
            "trial {trial}: {layers:?} {edges:?}"
        );
    }
}

#[test]
fn crossing_counter_ignores_junk() {
    assert_eq!(count_crossings(&[], &[(0, 1)]), 0);
    let layers = vec![vec![0, 1], vec![2, 3], vec![1]];
    assert_eq!(
        count_crossings(&layers, &[(0, 3), (1, 2), (7, 9), (2, 2)]),
        0
    );
    assert_eq!(
        count_crossings(&[vec![0, 1], vec![2, 3]], &[(0, 3), (1, 2)]),
        1
    );
}

#[test]
fn a_diamond_has_no_crossings() {
    let inp = input(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    let l = run(&inp);
    assert_eq!(l.layer, vec![0, 1, 1, 2]);
    assert_eq!(l.stats.crossings_final, 0);
    assert_eq!(drawn_crossings(&l), 0);
    // Centred: the top and bottom sit midway between the two middle nodes.
    let mid = (l.pos[1][0] + l.pos[2][0]) / 2.0;
    assert!((l.pos[0][0] - mid).abs() < 1.0 && (l.pos[3][0] - mid).abs() < 1.0);
}

#[test]
fn a_small_attention_block_has_no_crossings() {
    // x -> {q, k, v}; q,k -> scores -> softmax; softmax,v -> out; x,out -> residual.
    // The initial order deliberately lists producers so that a naive order crosses.
    let names = [
        "x", "v", "k", "q", "scores", "softmax", "attn", "out", "residual",
    ];
    let e = |a: usize, b: usize| (a as u32, b as u32);
    let edges = vec![
        e(0, 3),
        e(0, 2),
        e(0, 1),
        e(3, 4),
        e(2, 4),
        e(4, 5),
        e(5, 6),
        e(1, 6),
        e(6, 7),
        e(7, 8),
        e(0, 8),
    ];
    let l = run(&input(names.len(), &edges));
    assert_eq!(l.stats.crossings_final, 0, "{:?}", layers_of(&l));
    assert_eq!(drawn_crossings(&l), 0);
}

#[test]
fn crossing_reduction_never_makes_things_worse() {
    for seed in 1..8 {
        let inp = fx_like_dag(800, seed);
        let l = run(&inp);
        assert!(
            l.stats.crossings_final <= l.stats.crossings_initial,
            "seed {seed}"
        );
    }
    let inp = fx_like_dag(800, 1);
    let l = run(&inp);
    assert!(
        l.stats.crossings_final < l.stats.crossings_initial,
        "sweeps should find something on a random graph: {:?}",
        l.stats
    );
    // The engine's count over the real nodes' order agrees with a recount from positions
    // for edges between adjacent layers.
    let adjacent: Vec<(u32, u32)> = inp
        .edges
        .iter()
        .copied()
        .filter(|&(a, b)| l.layer[b as usize] == l.layer[a as usize] + 1)
        .collect();
    assert!(count_crossings(&layers_of(&l), &adjacent) <= l.stats.crossings_final);
}

// ---------------------------------------------------------------------------------------------
// Long edges and dummies

#[test]
fn dummies_stay_within_budget_and_long_edges_go_direct() {
    // A hub read by every node of a 3000-deep chain: one trunk, not a fan of 3000 chains.
    let n = 3001;
    let mut edges: Vec<(u32, u32)> = (1..n as u32 - 1).map(|i| (i, i + 1)).collect();
    edges.extend((2..n as u32).map(|i| (0, i)));
    let mut inp = input(n, &edges);
    inp.edges.push((1, 0)); // and a cycle through the hub
    let params = LayoutParams {
        dummy_budget: 0.5,
        ..LayoutParams::default()
    };
    let l = layout(&inp, &params, &AtomicBool::new(false)).unwrap();
    assert!(l.stats.dummies <= n / 2, "{:?}", l.stats);
    assert!(l.stats.direct_edges > 0);
    let direct = l
        .edge_kinds
        .iter()
        .filter(|k| **k == EdgeKind::Direct)
        .count();
    assert_eq!(direct, l.stats.direct_edges);
    for (i, k) in l.edge_kinds.iter().enumerate() {
        if *k == EdgeKind::Direct {
            assert_eq!(l.edge_paths[i].len(), 2);
        }
    }
    assert_edges_point_down(&inp, &l);
    assert_paths_attach(&inp, &l);
}

#[test]
fn routed_long_edges_pass_between_nodes() {
    // 0 -> 1 -> 2 -> 3 and a skip 0 -> 3: the skip gets dummies in layers 1 and 2, beside 1, 2.
    let inp = input(4, &[(0, 1), (1, 2), (2, 3), (0, 3)]);
    let l = run(&inp);
    assert_eq!(l.stats.dummies, 2);
    assert_eq!(l.edge_kinds[3], EdgeKind::Routed);
    let path = &l.edge_paths[3];
    // Source, into layer 1, out of layer 2 (one vertical run, merged), target.
    assert_eq!(path.len(), 4, "{path:?}");
    assert_eq!(path[1][0], path[2][0]);
    for p in &path[1..3] {
        let gap = (p[0] - l.pos[1][0]).abs();
        assert!(
            gap >= 40.0 + 10.0 - 1e-3,
            "bend at {p:?} too close to the chain"
        );
    }
}

#[test]
fn hubs_and_wide_layers_stay_tractable() {
    // One input read by 20,000 ops, all read by one output: quadratic work would hang here.
    let n = 20_002u32;
    let mut edges: Vec<(u32, u32)> = (1..n - 1).map(|i| (0, i)).collect();
    edges.extend((1..n - 1).map(|i| (i, n - 1)));
    let inp = input(n as usize, &edges);
    let l = run(&inp);
    assert_eq!(l.stats.layers, 3);
    assert_no_overlap(&inp, &l, LayoutParams::default().node_gap);
    assert_edges_point_down(&inp, &l);
}

#[test]
fn max_edge_span_forces_direct_edges() {
    let inp = input(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 5)]);
    let params = LayoutParams {
        max_edge_span: 2,
        ..LayoutParams::default()
    };
    let l = layout(&inp, &params, &AtomicBool::new(false)).unwrap();
    assert_eq!(l.edge_kinds[5], EdgeKind::Direct);
    assert_eq!(l.stats.dummies, 0);
}

// ---------------------------------------------------------------------------------------------
// Robustness

#[test]
fn empty_and_degenerate_inputs_do_not_panic() {
    let l = run(&LayoutInput::default());
    assert!(l.pos.is_empty() && l.edge_paths.is_empty());
    assert_eq!(l.bounds, [0.0; 4]);

    let one = run(&input(1, &[]));
    assert_eq!(one.pos.len(), 1);

    let inp = LayoutInput {
        sizes: vec![(f32::NAN, -3.0), (f32::INFINITY, 10.0), (20.0, 20.0)],
        edges: vec![
            (0, 0),
            (0, 1),
            (0, 1),
            (5, 1),
            (1, u32::MAX),
            (1, 2),
            (2, 1),
        ],
        groups: vec![Some(1)],
    };
    let l = run(&inp);
    assert_eq!(l.edge_kinds[0], EdgeKind::SelfLoop);
    assert_eq!(l.edge_kinds[3], EdgeKind::Invalid);
    assert_eq!(l.edge_kinds[4], EdgeKind::Invalid);
    assert!(l.edge_paths[3].is_empty());
    assert_eq!(l.edge_paths[1], l.edge_paths[2], "duplicates share a route");
    assert_eq!(l.edge_paths[0].len(), 6);
    assert!(l.pos.iter().flatten().all(|c| c.is_finite()));
    assert!(l.bounds.iter().all(|c| c.is_finite()));
    assert_eq!(l.reversed_edges.len(), 1);
    assert_edges_point_down(&inp, &l);
}

#[test]
fn a_20000_deep_chain_does_not_overflow_the_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let n = 20_000u32;
            let mut edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
            edges.push((n - 1, 0)); // one cycle through all of it
            let l = run(&input(n as usize, &edges));
            (
                l.stats.layers,
                l.reversed_edges.clone(),
                l.pos[n as usize - 1],
            )
        })
        .unwrap();
    let (layers, reversed, last) = worker.join().expect("no stack overflow");
    assert_eq!(layers, 20_000);
    assert_eq!(reversed, vec![19_999]);
    assert!(last[1] > 0.0);
}

#[test]
fn a_set_cancel_flag_stops_the_layout() {
    let inp = fx_like_dag(2000, 1);
    let cancel = AtomicBool::new(true);
    assert_eq!(
        layout(&inp, &LayoutParams::default(), &cancel),
        Err(Cancelled)
    );
}

#[test]
fn cancelling_midway_returns_promptly() {
    let inp = fx_like_dag(20_000, 2);
    // Cancel a quarter of the way through a full run: the layout is certainly still busy.
    let started = Instant::now();
    run(&inp);
    let quarter = started.elapsed() / 4;
    let cancel = AtomicBool::new(false);
    let (result, lag) = std::thread::scope(|s| {
        let flagger = s.spawn(|| {
            std::thread::sleep(quarter);
            cancel.store(true, Ordering::Relaxed);
            Instant::now()
        });
        let result = layout(&inp, &LayoutParams::default(), &cancel);
        let returned = Instant::now();
        let flagged = flagger.join().expect("flagger thread");
        (result, returned.saturating_duration_since(flagged))
    });
    println!("cancelled after {quarter:?}, honoured within {lag:?}");
    assert_eq!(result, Err(Cancelled));
}

#[test]
fn output_is_deterministic() {
    let inp = fx_like_dag(3000, 42);
    let a = run(&inp);
    let b = run(&inp);
    assert!(same_layout(&a, &b));
}

#[test]
fn large_synthetic_graphs_keep_the_invariants() {
    for (n, seed) in [(5_000, 1), (20_000, 2)] {
        let inp = fx_like_dag(n, seed);
        let l = run(&inp);
        assert_eq!(l.pos.len(), n);
        assert_edges_point_down(&inp, &l);
        assert_no_overlap(&inp, &l, LayoutParams::default().node_gap);
        assert_paths_attach(&inp, &l);
        assert!(l.stats.dummies as f32 <= LayoutParams::default().dummy_budget * n as f32);
        assert!(l.stats.crossings_final <= l.stats.crossings_initial);
    }
}

// ---------------------------------------------------------------------------------------------
// Groups

#[test]
fn grouped_nodes_are_contiguous_in_every_layer() {
    let mut inp = fx_like_dag(1200, 9);
    let mut rng = XorShift::new(17);
    inp.groups = (0..inp.sizes.len())
        .map(|_| {
            if rng.chance(30) {
                Some(rng.below(3) as u32)
            } else {
                None
            }
        })
        .collect();
    let l = run(&inp);
    for layer in layers_of(&l) {
        let tags: Vec<Option<u32>> = layer.iter().map(|&v| inp.groups[v as usize]).collect();
        for g in 0..3 {
            let at: Vec<usize> = (0..tags.len()).filter(|&i| tags[i] == Some(g)).collect();
            if let (Some(first), Some(last)) = (at.first(), at.last()) {
                assert_eq!(last - first + 1, at.len(), "group {g} split in {tags:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Union of passes

type Pass<'a> = Vec<(&'a str, &'a [&'a str])>;

#[test]
fn union_gives_a_node_one_place_in_every_pass() {
    let pass0: Pass = vec![
        ("x", &[]),
        ("w", &[]),
        ("mm", &["x", "w"]),
        ("relu", &["mm"]),
        ("output", &["relu"]),
    ];
    // A fusion pass: mm + relu become one op, and a new node appears.
    let pass1: Pass = vec![
        ("x", &[]),
        ("w", &[]),
        ("mm_relu", &["x", "w", "not_a_node"]),
        ("clone", &["mm_relu"]),
        ("output", &["clone"]),
    ];
    let (inp, names) = build_union(&[pass0.clone(), pass1.clone()], |n| {
        (10.0 * n.len() as f32, 30.0)
    });
    assert_eq!(
        names,
        ["x", "w", "mm", "relu", "output", "mm_relu", "clone"]
    );
    assert_eq!(inp.sizes.len(), names.len());
    assert!(
        !inp.edges
            .iter()
            .any(|e| names[e.0 as usize] == "not_a_node")
    );
    let l = run(&inp);
    assert_edges_point_down(&inp, &l);
    // The UI shows pass k with the union's positions looked up by name.
    let place = |name: &str| l.pos[names.iter().position(|n| n == name).unwrap()];
    for pass in [&pass0, &pass1] {
        for (name, _) in pass {
            assert!(place(name).iter().all(|c| c.is_finite()));
        }
    }
    let mut union = UnionGraph::new();
    union.add_pass(&pass0);
    union.add_pass(&pass1);
    assert_eq!(union.id("output"), Some(4));
    assert_eq!(union.pass_nodes(1).len(), 5);
    assert!(union.pass_nodes(7).is_empty());
    let again = run(&union.to_input(|n| (10.0 * n.len() as f32, 30.0)));
    assert!(same_layout(&l, &again));
}

#[test]
fn union_with_a_cycle_across_passes_still_lays_out() {
    // Pass 0: a -> b -> c. Pass 1 reorders: a -> c -> b.
    let pass0: Pass = vec![("a", &[]), ("b", &["a"]), ("c", &["b"])];
    let pass1: Pass = vec![("a", &[]), ("c", &["a"]), ("b", &["c"])];
    let (inp, names) = build_union(&[pass0, pass1], |_| (50.0, 20.0));
    assert_eq!(names.len(), 3);
    let l = run(&inp);
    assert_eq!(l.reversed_edges.len(), 1);
    assert_edges_point_down(&inp, &l);
    assert_paths_attach(&inp, &l);
}

/// `(name, input names)` of every node of `inp`, named `n0, n1, ...`.
fn named_pass(inp: &LayoutInput) -> Vec<(String, Vec<String>)> {
    let mut inputs = vec![Vec::new(); inp.sizes.len()];
    for &(a, b) in &inp.edges {
        inputs[b as usize].push(format!("n{a}"));
    }
    inputs
        .into_iter()
        .enumerate()
        .map(|(v, ins)| (format!("n{v}"), ins))
        .collect()
}

fn borrow_pass(owned: &[(String, Vec<String>)]) -> Vec<(&str, &[String])> {
    owned.iter().map(|(n, i)| (n.as_str(), &i[..])).collect()
}

#[test]
fn appending_a_pass_keeps_the_old_order() {
    let mut p0 = named_pass(&fx_like_dag(400, 21));
    let mut union = UnionGraph::new();
    union.add_pass(&borrow_pass(&p0));
    let size = |_: &str| (80.0, 30.0);
    let before = run(&union.to_input(size));

    // The next pass inserts a node after every 50th op.
    p0.extend(
        (0..400)
            .step_by(50)
            .map(|v| (format!("new{v}"), vec![format!("n{v}")])),
    );
    union.add_pass(&borrow_pass(&p0));
    let params = LayoutParams {
        max_sweeps: 0,
        ..LayoutParams::default()
    };
    let after = relayout(
        &union.to_input(size),
        &params,
        &before,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(after.pos.len(), 408);
    // Old nodes stay where they were, but for those making room for the new ones.
    let old = before.pos.len();
    let stayed = (0..old)
        .filter(|&v| (after.pos[v][0] - before.pos[v][0]).abs() < 1.0)
        .count();
    println!("{stayed} of {old} old nodes kept their x");
    assert!(
        stayed * 10 >= old * 9,
        "only {stayed} of {old} old nodes kept their x"
    );
    // Old nodes that stay in one layer keep their left-to-right order.
    for layer in layers_of(&after) {
        let olds: Vec<u32> = layer.into_iter().filter(|&v| (v as usize) < old).collect();
        for w in olds.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if before.layer[a] == before.layer[b] {
                assert!(before.pos[a][0] < before.pos[b][0], "{a} and {b} swapped");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Benchmarks (run in release: `cargo test --release --test it layout:: -- --ignored --nocapture`)

mod bench {
    use super::*;
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    /// Node names and `(input, node)` edges.
    pub(super) type FxGraph = (Vec<String>, Vec<(u32, u32)>);

    /// Good enough to get the real DAG shape of a `print_readable()` dump: placeholders from
    /// `def forward(...)`, one node per `name: "ann" = call(args)` line with the earlier nodes
    /// named in its arguments as inputs, and `return (...)` as the output node.
    pub(super) fn read_fx(path: &Path) -> FxGraph {
        let text = std::fs::read_to_string(path).expect("fixture readable");
        let mut names: Vec<String> = Vec::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut edges = Vec::new();
        let mut in_forward = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("def forward(") {
                if in_forward {
                    break; // a nested sub-graph: only the top-level graph is wanted
                }
                in_forward = true;
                for name in placeholder_names(t) {
                    add_node(&mut names, &mut ids, name);
                }
                continue;
            }
            if !in_forward || t.starts_with('#') || t.is_empty() {
                continue;
            }
            if let Some(rest) = t.strip_prefix("return ") {
                let v = add_node(&mut names, &mut ids, "output");
                edges.extend(refs(rest, &ids).map(|u| (u, v)));
                break;
            }
            let Some((lhs, rhs)) = t.split_once(" = ") else {
                continue;
            };
            let name = lhs.split(':').next().unwrap_or("").trim();
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let call = rhs.split(';').next().unwrap_or("");
            let inputs: Vec<u32> = refs(call, &ids).collect();
            let v = add_node(&mut names, &mut ids, name);
            edges.extend(inputs.into_iter().filter(|&u| u != v).map(|u| (u, v)));
        }
        (names, edges)
    }

    fn add_node(names: &mut Vec<String>, ids: &mut HashMap<String, u32>, name: &str) -> u32 {
        *ids.entry(name.to_owned()).or_insert_with(|| {
            names.push(name.to_owned());
            names.len() as u32 - 1
        })
    }

    fn placeholder_names(sig: &str) -> Vec<&str> {
        let inner = sig
            .trim_start_matches("def forward(")
            .trim_end_matches("):");
        let mut out = Vec::new();
        let (mut depth, mut quoted, mut start) = (0i32, false, 0usize);
        for (i, c) in inner.char_indices() {
            match c {
                '"' => quoted = !quoted,
                '[' | '(' if !quoted => depth += 1,
                ']' | ')' if !quoted => depth -= 1,
                ',' if !quoted && depth == 0 => {
                    out.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(&inner[start..]);
        out.into_iter()
            .map(|p| p.split(':').next().unwrap_or("").trim())
            .filter(|p| !p.is_empty() && *p != "self")
            .collect()
    }

    /// Identifiers in `text` (outside quotes, not after a `.`) that name known nodes.
    fn refs<'a>(text: &'a str, ids: &'a HashMap<String, u32>) -> impl Iterator<Item = u32> + 'a {
        let bytes = text.as_bytes();
        let mut found = Vec::new();
        let (mut i, mut quoted) = (0, false);
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'"' || c == b'\'' {
                quoted = !quoted;
                i += 1;
            } else if !quoted && (c.is_ascii_alphabetic() || c == b'_') {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let after_dot = start > 0 && bytes[start - 1] == b'.';
                if !after_dot && let Some(&id) = ids.get(&text[start..i]) {
                    found.push(id);
                }
            } else {
                i += 1;
            }
        }
        let mut seen = HashSet::new();
        found.into_iter().filter(move |id| seen.insert(*id))
    }

    pub(super) fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npugraph_ex")
    }

    /// Files named `file` under `dir` (iterative walk), sorted.
    pub(super) fn find(dir: &Path, file: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.file_name().is_some_and(|f| f == file) {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    pub(super) fn write_dot(path: &Path, names: &[String], edges: &[(u32, u32)]) {
        let mut s = String::from("digraph G {\n  node [shape=box];\n");
        for (i, n) in names.iter().enumerate() {
            s.push_str(&format!("  n{i} [label=\"{n}\"];\n"));
        }
        for (a, b) in edges {
            s.push_str(&format!("  n{a} -> n{b};\n"));
        }
        s.push_str("}\n");
        std::fs::write(path, s).expect("temp file writable");
    }

    /// Wall time of `dot -Tplain`, or `None` if it did not finish within `limit`.
    pub(super) fn time_dot(dot_file: &Path, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        let mut child = Command::new("dot")
            .arg("-Tplain")
            .arg(dot_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                return Some(start.elapsed());
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(super) fn label_sizes(names: &[String]) -> Vec<(f32, f32)> {
        names
            .iter()
            .map(|n| (24.0 + 7.0 * n.len() as f32, 36.0))
            .collect()
    }

    /// Best of `runs` layouts, to keep noise out of the figure.
    pub(super) fn time_layout(inp: &LayoutInput, runs: usize) -> (Duration, GraphLayout) {
        let mut best = Duration::MAX;
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let l = run(inp);
            best = best.min(t.elapsed());
            last = Some(l);
        }
        (best, last.expect("runs > 0"))
    }

    pub(super) fn report(label: &str, inp: &LayoutInput, t: Duration, l: &GraphLayout) {
        let s = &l.stats;
        println!(
            "{label}: {} nodes, {} edges -> {:.1} ms | layers {} dummies {} direct {} \
             (max routed span {}) reversed {} | crossings {} -> {} in {} sweeps | {:.0}x{:.0}",
            inp.sizes.len(),
            inp.edges.len(),
            t.as_secs_f64() * 1e3,
            s.layers,
            s.dummies,
            s.direct_edges,
            s.max_routed_span,
            l.reversed_edges.len(),
            s.crossings_initial,
            s.crossings_final,
            s.sweeps_run,
            l.bounds[2] - l.bounds[0],
            l.bounds[3] - l.bounds[1],
        );
        let phases: Vec<String> = s
            .phase_times
            .iter()
            .map(|(p, d)| format!("{p} {:.1}", d.as_secs_f64() * 1e3))
            .collect();
        println!("    phases (ms): {}", phases.join(", "));
    }
}

#[test]
#[ignore = "benchmark: run in release with --nocapture"]
fn bench_synthetic() {
    for (n, seed) in [(5_000, 1), (20_000, 2)] {
        let inp = fx_like_dag(n, seed);
        let (t, l) = bench::time_layout(&inp, 3);
        bench::report(&format!("synthetic {n}"), &inp, t, &l);
    }
    // Edge density, not node count, is what blows dot up (402 nodes, 3245 edges: 75 s).
    let mut rng = XorShift::new(3);
    let n = 2_000;
    let edges: Vec<(u32, u32)> = (0..40_000)
        .map(|_| {
            let a = rng.below(n - 1);
            (a as u32, (a + 1 + rng.below((n - a - 1).min(50))) as u32)
        })
        .collect();
    let inp = input(n, &edges);
    let (t, l) = bench::time_layout(&inp, 3);
    bench::report("dense 2000 x 20", &inp, t, &l);
}

/// `FXRAY_DOT_LIMIT_S` bounds each dot run (default 600 s; 0 skips dot).
#[test]
#[ignore = "benchmark: real FX dumps against Graphviz dot; run in release with --nocapture"]
fn bench_fixtures_against_dot() {
    let limit = Duration::from_secs(
        std::env::var("FXRAY_DOT_LIMIT_S")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600),
    );
    let root = bench::fixtures();
    let mut files = Vec::new();
    for phase in ["forward", "backward"] {
        let first = format!("000_aot_{phase}_graph.txt");
        files.extend(bench::find(&root.join("stress_24layer"), &first));
        files.extend(bench::find(&root.join("stress_20k"), &first));
    }
    assert!(
        !files.is_empty(),
        "fixtures not found under {}",
        root.display()
    );
    let tmp = std::env::temp_dir();
    for (k, f) in files.iter().enumerate() {
        let (names, edges) = bench::read_fx(f);
        let inp = LayoutInput {
            sizes: bench::label_sizes(&names),
            edges: edges.clone(),
            groups: Vec::new(),
        };
        let label = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .display()
            .to_string()
            .replace("/torch_compile_debug", "");
        let (t, l) = bench::time_layout(&inp, 3);
        bench::report(&label, &inp, t, &l);
        if limit.is_zero() {
            continue; // FXRAY_DOT_LIMIT_S=0: layout timings only
        }
        let dot_file = tmp.join(format!("fxray_layout_bench_{k}.dot"));
        bench::write_dot(&dot_file, &names, &edges);
        match bench::time_dot(&dot_file, limit) {
            Some(d) => println!(
                "    dot -Tplain: {:.2} s -> ratio {:.0}x",
                d.as_secs_f64(),
                d.as_secs_f64() / t.as_secs_f64()
            ),
            None => println!(
                "    dot -Tplain: > {} s (killed) -> ratio > {:.0}x",
                limit.as_secs(),
                limit.as_secs_f64() / t.as_secs_f64()
            ),
        }
        let _ = std::fs::remove_file(&dot_file);
    }
}

/// dot does not finish the whole stress graphs in minutes; prefixes of the 24-layer forward
/// graph (its first `k` nodes, `FXRAY_DOT_PREFIXES`, default `500,1000`) give measured ratios.
#[test]
#[ignore = "benchmark: prefixes of a real FX graph against Graphviz dot; run in release"]
fn bench_dot_on_prefixes() {
    let sizes: Vec<usize> = std::env::var("FXRAY_DOT_PREFIXES")
        .unwrap_or_else(|_| "500,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let root = bench::fixtures();
    let file = bench::find(&root.join("stress_24layer"), "000_aot_forward_graph.txt");
    let file = file.first().expect("stress_24layer fixture");
    let (names, edges) = bench::read_fx(file);
    for k in sizes {
        let k = k.min(names.len());
        let sub: Vec<(u32, u32)> = edges
            .iter()
            .copied()
            .filter(|&(a, b)| (a as usize) < k && (b as usize) < k)
            .collect();
        let inp = LayoutInput {
            sizes: bench::label_sizes(&names[..k]),
            edges: sub.clone(),
            groups: Vec::new(),
        };
        let (t, l) = bench::time_layout(&inp, 5);
        bench::report(&format!("forward prefix {k}"), &inp, t, &l);
        let dot_file = std::env::temp_dir().join(format!("fxray_layout_prefix_{k}.dot"));
        bench::write_dot(&dot_file, &names[..k], &sub);
        match bench::time_dot(&dot_file, Duration::from_secs(3600)) {
            Some(d) => println!(
                "    dot -Tplain: {:.2} s -> ratio {:.0}x",
                d.as_secs_f64(),
                d.as_secs_f64() / t.as_secs_f64()
            ),
            None => println!("    dot -Tplain: > 3600 s (killed)"),
        }
        let _ = std::fs::remove_file(&dot_file);
    }
}

#[test]
#[ignore = "benchmark: union of all passes of a phase; run in release with --nocapture"]
fn bench_fixture_unions() {
    let root = bench::fixtures();
    for phase in ["forward", "backward"] {
        for model in ["stress_24layer", "stress_20k"] {
            let first = format!("000_aot_{phase}_graph.txt");
            let Some(first_file) = bench::find(&root.join(model), &first).into_iter().next() else {
                continue;
            };
            let dir = first_file.parent().expect("a folder");
            let mut pass_files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
                .expect("readable")
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "txt")
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().contains("_graph"))
                })
                .collect();
            pass_files.sort();
            let passes: Vec<bench::FxGraph> =
                pass_files.iter().map(|p| bench::read_fx(p)).collect();
            let t = Instant::now();
            let mut union = UnionGraph::new();
            let mut prev: Option<GraphLayout> = None;
            let mut incremental = Duration::ZERO;
            for (names, edges) in &passes {
                let mut inputs: Vec<Vec<&str>> = vec![Vec::new(); names.len()];
                for &(a, b) in edges {
                    inputs[b as usize].push(&names[a as usize]);
                }
                let pass: Vec<(&str, &[&str])> = names
                    .iter()
                    .zip(&inputs)
                    .map(|(n, i)| (n.as_str(), &i[..]))
                    .collect();
                union.add_pass(&pass);
                // Live-compile case: each new pass re-lays the union from the previous layout.
                let inp = union.to_input(|n| (24.0 + 7.0 * n.len() as f32, 36.0));
                let s = Instant::now();
                let l = match &prev {
                    None => run(&inp),
                    Some(p) => {
                        let params = LayoutParams {
                            max_sweeps: 4,
                            ..LayoutParams::default()
                        };
                        relayout(&inp, &params, p, &AtomicBool::new(false)).unwrap()
                    }
                };
                incremental += s.elapsed();
                prev = Some(l);
            }
            let build = t.elapsed() - incremental;
            let inp = union.to_input(|n| (24.0 + 7.0 * n.len() as f32, 36.0));
            let (lt, l) = bench::time_layout(&inp, 3);
            bench::report(
                &format!("union {model}/{phase} ({} passes)", passes.len()),
                &inp,
                lt,
                &l,
            );
            println!(
                "    union build {:.1} ms; {} incremental relayouts {:.1} ms in total",
                build.as_secs_f64() * 1e3,
                passes.len(),
                incremental.as_secs_f64() * 1e3
            );
        }
    }
}
