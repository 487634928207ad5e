//! The union layout of a phase on real passes: every node of every pass is placed, sub-graph
//! nodes are qualified and grouped, op families colour what the showcase holds.


use fxray::analysis::op_family::{self, OpFamily};
use fxray::analysis::phase_layout;
use fxray::model::fx::FxFile;
use fxray::sources::load;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;

fn passes(case: &str, phase: &str) -> Vec<FxFile> {
    crate::common::pass_files(case, phase)
        .iter()
        .map(|p| load::graph(p).expect("parse"))
        .collect()
}

#[test]
fn union_of_the_showcase_passes_places_every_node_once() {
    let files = passes("showcase", "forward");
    assert_eq!(files.len(), 19);
    let refs: Vec<&FxFile> = files.iter().collect();
    let l = phase_layout::build(&refs, &AtomicBool::new(false)).expect("layout");
    let all: HashSet<&str> = files
        .iter()
        .flat_map(|f| f.graphs[0].nodes.iter().map(|n| n.name.as_str()))
        .collect();
    assert_eq!(l.union.names().len(), all.len());
    assert_eq!(l.layout.pos.len(), all.len());
    // Every pass's nodes have a place, and no two nodes of one pass overlap.
    for f in &files {
        let ids = l.ids_of(f);
        assert!(ids[0].iter().all(Option::is_some));
        let mut boxes: Vec<(f32, f32, f32, f32)> = ids[0]
            .iter()
            .flatten()
            .map(|&i| {
                let [x, y] = l.layout.pos[i as usize];
                let (w, h) = l.sizes[i as usize];
                (x - w / 2.0, y - h / 2.0, x + w / 2.0, y + h / 2.0)
            })
            .collect();
        boxes.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for (i, a) in boxes.iter().enumerate() {
            for b in boxes[i + 1..].iter().take_while(|b| b.0 < a.2) {
                let overlap = a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
                assert!(!overlap, "{a:?} overlaps {b:?}");
            }
        }
    }
    // Every edge of every pass points down the page (the union has no cycle here).
    assert!(l.layout.reversed_edges.is_empty());
    for &(a, b) in l.union.edges() {
        assert!(l.layout.layer[a as usize] < l.layout.layer[b as usize]);
    }
}

#[test]
fn cond_branches_are_qualified_and_grouped() {
    let files = passes("npugraph_ex/torch_cond", "forward");
    let refs: Vec<&FxFile> = files.iter().collect();
    let l = phase_layout::build(&refs, &AtomicBool::new(false)).expect("layout");
    let sin = l
        .union
        .id("true_graph_0/sin")
        .expect("qualified branch node");
    let cos = l
        .union
        .id("false_graph_0/cos")
        .expect("qualified branch node");
    assert_eq!(l.groups[sin as usize].as_deref(), Some("true_graph_0"));
    assert_eq!(l.groups[cos as usize].as_deref(), Some("false_graph_0"));
    assert_eq!(l.groups[l.union.id("cond").unwrap() as usize], None);
    // The branch inputs hang below the `cond` call that feeds them.
    let cond = l.union.id("cond").unwrap();
    let arg = l.union.id("true_graph_0/arg0_1").unwrap();
    assert!(l.union.edges().contains(&(cond, arg)));
    assert!(l.layout.layer[cond as usize] < l.layout.layer[arg as usize]);
}

#[test]
fn op_families_of_the_showcase_final_graph() {
    let files = passes("showcase", "forward");
    let last = files.last().unwrap();
    let mut count: BTreeMap<OpFamily, usize> = BTreeMap::new();
    for n in &last.graphs[0].nodes {
        *count.entry(op_family::family(n)).or_default() += 1;
    }
    // expected.json, final graph: 36 placeholders + 2 get_attr, 1 output; addmm 6 + bmm 4 +
    // mm 9 matmuls; _softmax 2 + mean 5 reductions.
    let exp: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::fixture("showcase/expected.json")).unwrap(),
    )
    .unwrap();
    let t = &exp["final_graph"]["targets"];
    let n = |k: &str| t[k].as_u64().unwrap() as usize;
    assert_eq!(count[&OpFamily::Input], 38);
    assert_eq!(count[&OpFamily::Output], 1);
    assert_eq!(
        count[&OpFamily::MatmulConv],
        n("aten.addmm.default") + n("aten.bmm.default") + n("aten.mm.default")
    );
    assert_eq!(
        count[&OpFamily::Reduction],
        n("aten._softmax.default") + n("aten.mean.dim")
    );
    let node = |name: &str| {
        last.graphs[0]
            .nodes
            .iter()
            .find(|n| n.name == name)
            .unwrap()
    };
    assert_eq!(op_family::family(node("_softmax")), OpFamily::Reduction);
    assert_eq!(op_family::family(node("embedding")), OpFamily::ViewLayout);
}
