//! Input edges as the layout sees them: valid, distinct, and (after cycle removal) oriented
//! downwards.

/// What became of one input edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EdgeRef {
    /// Index into [`CleanEdges::unique`] (duplicates share the index of their first copy).
    Unique(u32),
    SelfLoop(u32),
    Invalid,
}

pub(crate) struct CleanEdges {
    /// Distinct edges between distinct in-range nodes, in order of first appearance.
    pub unique: Vec<(u32, u32)>,
    /// One entry per input edge.
    pub map: Vec<EdgeRef>,
}

/// Drops edges with an endpoint `>= n`, sets self-loops aside and merges duplicates.
pub(crate) fn sanitize(n: usize, input: &[(u32, u32)]) -> CleanEdges {
    let mut map = vec![EdgeRef::Invalid; input.len()];
    // Sorting (source, target, input index) finds duplicates without hashing and leaves the
    // first copy first, which keeps the result independent of any hash seed.
    let mut keyed: Vec<(u32, u32, u32)> = input
        .iter()
        .enumerate()
        .filter(|&(_, &(s, t))| (s as usize) < n && (t as usize) < n)
        .map(|(i, &(s, t))| (s, t, i as u32))
        .collect();
    keyed.sort_unstable();
    let mut firsts: Vec<u32> = Vec::new();
    for (k, &(s, t, i)) in keyed.iter().enumerate() {
        if s == t {
            map[i as usize] = EdgeRef::SelfLoop(s);
        } else if k > 0 && keyed[k - 1].0 == s && keyed[k - 1].1 == t {
            // Resolved below, once the first copy has its final index.
            map[i as usize] = EdgeRef::Unique(u32::MAX);
        } else {
            firsts.push(i);
        }
    }
    firsts.sort_unstable();
    let mut unique = Vec::with_capacity(firsts.len());
    for &i in &firsts {
        map[i as usize] = EdgeRef::Unique(unique.len() as u32);
        unique.push(input[i as usize]);
    }
    for k in 1..keyed.len() {
        let (s, t, i) = keyed[k];
        if s != t && map[i as usize] == EdgeRef::Unique(u32::MAX) {
            map[i as usize] = map[keyed[k - 1].2 as usize];
        }
    }
    CleanEdges { unique, map }
}

/// The acyclic graph the layers are built on.
pub(crate) struct Dag {
    /// Distinct edges, each pointing from a lower to a higher layer once layered.
    pub edges: Vec<(u32, u32)>,
    /// For each unique input edge, its DAG edge. An edge and its reversed twin (`a->b` and a
    /// reversed `b->a`) share one DAG edge.
    pub of_unique: Vec<u32>,
}

/// Applies the reversals and merges the duplicates they create.
pub(crate) fn orient(unique: &[(u32, u32)], reversed: &[bool]) -> Dag {
    let oriented: Vec<(u32, u32)> = unique
        .iter()
        .zip(reversed)
        .map(|(&(s, t), &r)| if r { (t, s) } else { (s, t) })
        .collect();
    let mut keyed: Vec<(u32, u32, u32)> = oriented
        .iter()
        .enumerate()
        .map(|(i, &(s, t))| (s, t, i as u32))
        .collect();
    keyed.sort_unstable();
    let mut of_unique = vec![0u32; unique.len()];
    let mut firsts = Vec::with_capacity(keyed.len());
    for (k, &(s, t, i)) in keyed.iter().enumerate() {
        let dup = k > 0 && keyed[k - 1].0 == s && keyed[k - 1].1 == t;
        if !dup {
            firsts.push(i);
        }
        of_unique[i as usize] = u32::MAX;
    }
    firsts.sort_unstable();
    let mut edges = Vec::with_capacity(firsts.len());
    for &i in &firsts {
        of_unique[i as usize] = edges.len() as u32;
        edges.push(oriented[i as usize]);
    }
    for k in 1..keyed.len() {
        let i = keyed[k].2 as usize;
        if of_unique[i] == u32::MAX {
            of_unique[i] = of_unique[keyed[k - 1].2 as usize];
        }
    }
    Dag { edges, of_unique }
}
