//! `pipeline::phase`: a phase opened headless, and the form its results cross a link in (a
//! graph file, a diff, a layout as `wire` items), which must come back as the same values.

use crate::common::{fixture, pass_files, walk_files};
use fxray::analysis::diff;
use fxray::analysis::phase_layout::{self, PhaseLayout};
use fxray::model::fx::FxFile;
use fxray::pipeline::modules::{self, ModuleContext};
use fxray::pipeline::phase::{self, PhaseNews, PhaseSpec};
use fxray::sources::load;
use fxray::sources::remote::wire;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

/// Everything of two parsed files that a view reads, linking included.
fn assert_same_file(a: &FxFile, b: &FxFile, what: &str) {
    assert_eq!(a.graphs.len(), b.graphs.len(), "{what}");
    assert_eq!(a.unparsed, b.unparsed, "{what}");
    assert_eq!(a.problems, b.problems, "{what}");
    for (x, y) in a.graphs.iter().zip(&b.graphs) {
        assert_eq!(
            (&x.name, x.parent, x.used_by, x.line),
            (&y.name, y.parent, y.used_by, y.line),
            "{what}"
        );
        assert_eq!(x.nodes, y.nodes, "{what}: {}", x.name);
        assert_eq!(x.by_name, y.by_name, "{what}: {}", x.name);
        let edges = |g: &fxray::model::fx::FxGraph| -> Vec<(usize, usize)> { g.edges().collect() };
        assert_eq!(edges(x), edges(y), "{what}: {}", x.name);
    }
}

fn round_trip<T: Serialize + DeserializeOwned>(v: &T) -> T {
    wire::from_item(&wire::to_item(v).unwrap()).unwrap()
}

fn deflated(bytes: &[u8]) -> usize {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap().len()
}

#[test]
fn every_fixture_graph_comes_back_from_its_serde_form_the_same() {
    let mut files = 0;
    for p in walk_files(&fixture("")) {
        let is_graph = p.extension().is_some_and(|e| e == "txt")
            && p.components().any(|c| {
                let c = c.as_os_str().to_string_lossy();
                c == "forward" || c == "backward" || c == "inference"
            });
        let Ok(file) = load::graph(&p) else { continue };
        if !is_graph || file.graphs.is_empty() {
            continue;
        }
        let back: FxFile = round_trip(&file);
        assert_same_file(&back, &file, &p.display().to_string());
        files += 1;
    }
    assert!(files > 100, "only {files} graph files among the fixtures");
}

#[test]
fn a_20k_node_pass_in_its_serde_form_is_about_its_text_compressed() {
    let pass = &pass_files("npugraph_ex/stress_20k", "forward")[0];
    let text = std::fs::read(pass).unwrap();
    let file = load::graph(pass).unwrap();
    let item = wire::to_item(&file).unwrap();
    let (t, j) = (deflated(&text), deflated(&item));
    println!(
        "20k-node pass: text {} B ({t} B deflated), as an item {} B ({j} B deflated)",
        text.len(),
        item.len()
    );
    // What the link carries for a pass on a server, against the text it would carry instead.
    assert!(2 * j < 3 * t, "{j} B deflated against the text's {t} B");
    assert!(j < text.len(), "{j} B deflated for a {} B file", text.len());
}

#[test]
fn a_diff_and_a_layout_come_back_from_their_serde_form_the_same() {
    let files: Vec<FxFile> = pass_files("showcase", "forward")
        .iter()
        .map(|p| load::graph(p).unwrap())
        .collect();
    let refs: Vec<&FxFile> = files.iter().collect();
    for d in diff::consecutive_diffs(&refs) {
        let back: diff::GraphDiff = round_trip(&d);
        assert!(back.is_well_formed());
        assert_eq!(back.pairs.len(), d.pairs.len());
        for (x, y) in back.pairs.iter().zip(&d.pairs) {
            assert_eq!(x.status_a, y.status_a);
            assert_eq!(x.status_b, y.status_b);
            assert_eq!(x.a_to_b, y.a_to_b);
            assert_eq!(x.matched_by, y.matched_by);
            assert_eq!(x.rewired, y.rewired);
            assert_eq!(x.counts, y.counts);
        }
        assert_eq!(back.counts(), d.counts());
    }
    let layout = phase_layout::build(&refs, &AtomicBool::new(false)).unwrap();
    let back: PhaseLayout = round_trip(&layout);
    assert!(back.is_well_formed());
    assert_eq!(back.layout, layout.layout);
    assert_eq!(back.sizes, layout.sizes);
    assert_eq!(back.groups, layout.groups);
    assert_eq!(back.union.names(), layout.union.names());
    assert_eq!(back.union.edges(), layout.union.edges());
    // The union's indexes are rebuilt: names resolve, and the layout can grow a pass more.
    for (i, n) in layout.union.names().iter().enumerate() {
        assert_eq!(back.union.id(n), Some(i as u32));
    }
    let grown = phase_layout::extend(&back, &refs[..1], &AtomicBool::new(false)).unwrap();
    let near = phase_layout::extend(&layout, &refs[..1], &AtomicBool::new(false)).unwrap();
    assert_eq!(grown.layout, near.layout);
}

#[test]
fn a_cut_or_hostile_serde_form_is_refused_or_made_safe() {
    let file = load::graph(&pass_files("showcase", "forward")[0]).unwrap();
    let item = wire::to_item(&file).unwrap();
    let cut = wire::from_item::<FxFile>(&item[..item.len() / 2]).unwrap_err();
    assert_eq!(cut.kind(), std::io::ErrorKind::InvalidData);
    assert!(cut.to_string().contains("does not read"), "{cut}");
    // Indices past the graph are dropped, never followed.
    let mut hostile = file.clone();
    hostile.graphs[0].nodes[1].inputs = vec![999_999].into();
    hostile.graphs[0].parent = Some(7);
    hostile.graphs[0].nodes[1].subgraphs = vec![42].into();
    let back: FxFile = round_trip(&hostile);
    assert!(back.graphs[0].nodes[1].inputs.is_empty());
    assert!(back.graphs[0].nodes[1].subgraphs.is_empty());
    assert_eq!(back.graphs[0].parent, None);
    // A layout whose lists do not match its union is not well formed.
    let refs = [&file];
    let mut layout = phase_layout::build(&refs, &AtomicBool::new(false)).unwrap();
    layout.layout.pos.pop();
    assert!(!layout.is_well_formed());
}

/// The pass on screen and its preview come before any other pass: nothing else is read,
/// crosses a link or is decoded ahead of the first view.
pub fn assert_preview_first(news: &[PhaseNews], current: usize) {
    let order: Vec<String> = news
        .iter()
        .map(|n| match n {
            PhaseNews::Preview { pass, .. } => format!("preview {pass}"),
            PhaseNews::Pass { pass, .. } => format!("pass {pass}"),
            PhaseNews::Diffs(_) => "diffs".into(),
            PhaseNews::Layout(_) => "layout".into(),
            PhaseNews::Fold { .. } => "fold".into(),
        })
        .collect();
    let mut first: Vec<&str> = order.iter().take(2).map(String::as_str).collect();
    first.sort();
    let want = [format!("pass {current}"), format!("preview {current}")];
    assert_eq!(first, want, "{order:?}");
}

#[test]
fn opening_a_phase_brings_every_pass_the_diffs_the_layout_and_the_fold() {
    let paths = pass_files("showcase", "forward");
    let spec = PhaseSpec {
        passes: paths.clone(),
        current: 1,
        layout: true,
        context: ModuleContext::default(),
    };
    let news = Mutex::new(Vec::new());
    phase::open(&spec, None, &AtomicBool::new(false), &|n| {
        news.lock().unwrap().push(n)
    });
    let news = news.into_inner().unwrap();
    let passes = news
        .iter()
        .filter(|n| matches!(n, PhaseNews::Pass { result: Ok(_), .. }))
        .count();
    assert_eq!(passes, paths.len());
    assert_preview_first(&news, 1);
    let files: Vec<FxFile> = paths.iter().map(|p| load::graph(p).unwrap()).collect();
    let refs: Vec<&FxFile> = files.iter().collect();
    let Some(PhaseNews::Diffs(diffs)) = news.iter().find(|n| matches!(n, PhaseNews::Diffs(_)))
    else {
        panic!("no diffs")
    };
    assert_eq!(diffs.len(), paths.len() - 1);
    let want = diff::consecutive_diffs(&refs);
    for (d, w) in diffs.iter().zip(&want) {
        assert_eq!(d.counts(), w.counts());
    }
    let Some(PhaseNews::Fold { layout, tree }) =
        news.iter().find(|n| matches!(n, PhaseNews::Fold { .. }))
    else {
        panic!("no fold")
    };
    let want = phase_layout::build(&refs, &AtomicBool::new(false)).unwrap();
    assert_eq!(layout.layout, want.layout);
    // No context given: the phase finds its model's around its passes, as `fxray modules` does.
    let want = modules::module_tree(&want, &refs, &ModuleContext::around(&paths[0]));
    assert_eq!(tree.module_of, want.module_of);
    assert!(tree.modules.len() > 1, "the showcase has modules");
}

#[test]
fn damaged_items_are_errors_or_safe_values_never_panics() {
    let files: Vec<FxFile> = pass_files("showcase", "forward")[..3]
        .iter()
        .map(|p| load::graph(p).unwrap())
        .collect();
    let refs: Vec<&FxFile> = files.iter().collect();
    let layout = phase_layout::build(&refs, &AtomicBool::new(false)).unwrap();
    let diff = diff::diff(refs[0], refs[1]);
    let items = [
        wire::to_item(&files[0]).unwrap(),
        wire::to_item(&layout).unwrap(),
        wire::to_item(&diff).unwrap(),
    ];
    let mut decoded = 0;
    for item in &items {
        // Cut anywhere, and with bytes flipped along the way (a deterministic walk).
        for k in (0..item.len()).step_by(item.len() / 64 + 1) {
            let _ = wire::from_item::<FxFile>(&item[..k]);
            let mut bad = item.clone();
            bad[k] ^= 0x5a;
            if let Ok(f) = wire::from_item::<FxFile>(&bad) {
                for g in &f.graphs {
                    let n = g.nodes.len();
                    assert!(g.nodes.iter().all(|x| x.inputs.iter().all(|&i| i < n)));
                }
                decoded += 1;
            }
            if let Ok(l) = wire::from_item::<PhaseLayout>(&bad) {
                let _ = l.is_well_formed();
                decoded += 1;
            }
            if let Ok(d) = wire::from_item::<diff::GraphDiff>(&bad) {
                let _ = d.is_well_formed();
                decoded += 1;
            }
        }
    }
    // Some damage still reads (a flipped letter in a name): those values were checked above.
    assert!(decoded > 0);
}
