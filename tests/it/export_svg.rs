//! SVG and PNG export on real fixtures: the picture holds exactly the pass's nodes and edges,
//! text is escaped and actually rendered (bundled fonts, no system fonts), and the CLI writes
//! both formats.

use crate::common::run_dir;
use fxray::analysis::export_svg::{self, SvgOptions};
use fxray::analysis::layout::EdgeKind;
use fxray::analysis::phase_layout::{self, PhaseLayout};
use fxray::model::fx::FxFile;
use fxray::sources::load;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

fn phase_dir(case: &str, phase: &str) -> PathBuf {
    run_dir(case).join("npugraph_ex/model__0").join(phase)
}

/// The phase's pass files in execution order.
fn passes(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    v.sort();
    v
}

fn parse(path: &Path) -> FxFile {
    load::graph(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn build(files: &[&FxFile]) -> PhaseLayout {
    phase_layout::build(files, &AtomicBool::new(false)).expect("layout")
}

fn svg_of(file: &FxFile, layout: &PhaseLayout, dark: bool) -> String {
    let options = SvgOptions {
        dark,
        title: "pass.txt".into(),
    };
    export_svg::to_svg(file, layout, &options)
}

/// Qualified names drawn, and the number of edge paths.
fn drawn(svg: &str) -> (Vec<String>, usize) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    let nodes = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("node"))
        .map(|n| n.attribute("data-node").expect("data-node").to_string())
        .collect();
    let edges = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("path") && n.attribute("class").is_some_and(|c| c.starts_with("edge"))
        })
        .count();
    (nodes, edges)
}

/// Distinct producer → consumer pairs of a graph without sub-graphs, computed from the parse.
fn edge_count(file: &FxFile) -> usize {
    let g = &file.graphs[0];
    let pairs: HashSet<(usize, usize)> = g
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.inputs.iter().map(move |&j| (j, i)))
        .collect();
    pairs.len()
}

struct Showcase {
    files: Vec<FxFile>,
    layout: PhaseLayout,
}

fn showcase() -> Showcase {
    let files: Vec<FxFile> = passes(&phase_dir("showcase", "forward"))
        .iter()
        .map(|p| parse(p))
        .collect();
    let layout = build(&files.iter().collect::<Vec<_>>());
    Showcase { files, layout }
}

#[test]
fn showcase_pass_draws_exactly_its_nodes_and_edges() {
    let sc = showcase();
    // 011: after eliminate_dead_code and reinplacing, 252 of the union's nodes remain.
    let pass = &sc.files[11];
    let svg = svg_of(pass, &sc.layout, false);
    let (nodes, edges) = drawn(&svg);
    let expected: HashSet<&str> = pass.graphs[0]
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(nodes.len(), 252);
    assert_eq!(
        nodes.len(),
        expected.len(),
        "one <g class=\"node\"> per node"
    );
    assert!(nodes.iter().all(|n| expected.contains(n.as_str())));
    assert_eq!(
        edges,
        edge_count(pass),
        "one edge path per edge of the pass"
    );
    assert!(
        sc.layout.union.names().len() > nodes.len(),
        "the union has more nodes than the pass"
    );
}

#[test]
fn a_node_absent_from_a_pass_is_not_drawn() {
    let sc = showcase();
    let first: HashSet<&str> = sc.files[0].graphs[0]
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    let later: HashSet<&str> = sc.files[11].graphs[0]
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    let gone = *first
        .difference(&later)
        .next()
        .expect("a node removed by a pass");
    let (in_first, _) = drawn(&svg_of(&sc.files[0], &sc.layout, false));
    let (in_later, _) = drawn(&svg_of(&sc.files[11], &sc.layout, false));
    assert!(in_first.iter().any(|n| n == gone));
    assert!(
        !in_later.iter().any(|n| n == gone),
        "{gone} drawn in a pass that lacks it"
    );
}

#[test]
fn labels_are_escaped() {
    let dir = phase_dir("npugraph_ex/torch_cond", "forward");
    let file = parse(&dir.join("000_aot_forward_graph.txt"));
    assert_eq!(file.graphs[0].name, "<lambda>");
    let svg = svg_of(&file, &build(&[&file]), false);
    assert!(svg.contains("&lt;lambda&gt;"));
    assert!(!svg.contains("<lambda>"));
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        texts.iter().any(|t| t.contains("<lambda>")),
        "the class name reads back unescaped"
    );
    assert!(texts.contains(&"operator.getitem"));
}

#[test]
fn sub_graphs_are_labelled_boxes_and_their_edges_drawn() {
    let dir = phase_dir("npugraph_ex/torch_cond", "forward");
    let file = parse(&dir.join("000_aot_forward_graph.txt"));
    let svg = svg_of(&file, &build(&[&file]), false);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let groups: Vec<String> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("group"))
        .map(|g| {
            g.descendants()
                .filter(|t| t.is_text())
                .filter_map(|t| t.text())
                .collect()
        })
        .collect();
    assert_eq!(groups, ["false_graph_0", "true_graph_0"]);
    let (nodes, edges) = drawn(&svg);
    let all: usize = file.graphs.iter().map(|g| g.nodes.len()).sum();
    assert_eq!(nodes.len(), all);
    assert!(nodes.iter().any(|n| n == "true_graph_0/sin"));
    // Within each graph, plus cond → each branch's placeholder.
    let inner: usize = file.graphs.iter().map(|g| g.edges().count()).sum();
    assert_eq!(edges, inner + 2);
}

#[test]
fn themes_differ_in_background_only_where_expected() {
    let sc = showcase();
    let light = svg_of(&sc.files[0], &sc.layout, false);
    let dark = svg_of(&sc.files[0], &sc.layout, true);
    assert!(light.contains(".bg{fill:#f8f8f8}"));
    assert!(dark.contains(".bg{fill:#1b1b1b}"));
    assert_eq!(drawn(&light), drawn(&dark));
}

#[test]
fn direct_edges_are_drawn_dashed_with_their_own_arrowhead() {
    let dir = phase_dir("npugraph_ex/torch_cond", "forward");
    let file = parse(&dir.join("000_aot_forward_graph.txt"));
    let mut layout = build(&[&file]);
    // No fixture is big enough for the layout to give up routing an edge: pretend it did.
    layout.layout.edge_kinds[0] = EdgeKind::Direct;
    let svg = svg_of(&file, &layout, false);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let direct: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("edge direct"))
        .collect();
    assert_eq!(direct.len(), 1);
    assert!(svg.contains("marker-end:url(#arrow-direct)") && svg.contains("stroke-dasharray"));
    assert_eq!(
        drawn(&svg).1,
        drawn(&svg_of(&file, &build(&[&file]), false)).1
    );
}

/// Width and height from the IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |o: usize| u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
    (be(16), be(20))
}

/// Decoded RGBA pixels.
fn decode(bytes: &[u8]) -> (Vec<u8>, u32, u32) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (buf, info.width, info.height)
}

#[test]
fn png_decodes_and_text_is_rendered() {
    let dir = phase_dir("npugraph_ex/torch_cond", "forward");
    let file = parse(&dir.join("000_aot_forward_graph.txt"));
    let svg = svg_of(&file, &build(&[&file]), false);
    let bytes = export_svg::to_png(&svg, 1.0).expect("png");
    let (w, h) = png_size(&bytes);
    assert!(w > 0 && h > 0);
    let (px, dw, dh) = decode(&bytes);
    assert_eq!((dw, dh), (w, h));
    let colours: HashSet<&[u8]> = px.chunks(4).collect();
    assert!(colours.len() > 3, "{} colours", colours.len());
    // The title is the only thing in the band above the graph: ink there is rendered text.
    let background = &px[..4];
    let title_ink = (24..40u32)
        .flat_map(|y| (24..200u32).map(move |x| (x, y)))
        .filter(|&(x, y)| &px[((y * w + x) * 4) as usize..][..4] != background)
        .count();
    assert!(
        title_ink > 100,
        "title text drawn: {title_ink} pixels of ink"
    );
}

#[test]
fn png_scale_doubles_the_size_and_huge_pictures_are_capped() {
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\"><rect width=\"100\" height=\"50\"/></svg>";
    let one = png_size(&export_svg::to_png(svg, 1.0).unwrap());
    let two = png_size(&export_svg::to_png(svg, 2.0).unwrap());
    assert_eq!(one, (100, 50));
    assert_eq!(two, (200, 100));
    let tall = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"200000\"><rect width=\"400\" height=\"200000\"/></svg>";
    let img = export_svg::render_png(tall, 1.0).unwrap();
    assert!(img.height <= export_svg::MAX_PNG_SIDE && img.scale < 0.1);
    assert_eq!(png_size(&img.bytes), (img.width, img.height));
}

fn fxray(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(args)
        .output()
        .expect("run fxray")
}

#[test]
fn cli_writes_svg_and_png_and_png_needs_an_output_file() {
    let pass = phase_dir("showcase", "forward")
        .join("011_aot_forward_graph_after_reinplace_inplaceable_ops_pass.txt");
    let tmp = tempfile::tempdir().unwrap();
    for fmt in ["svg", "png"] {
        let out = tmp.path().join(format!("g.{fmt}"));
        let o = fxray(&[
            "export".as_ref(),
            pass.as_os_str(),
            "--format".as_ref(),
            fmt.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(
            o.status.success(),
            "{fmt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let bytes = std::fs::read(&out).unwrap();
        if fmt == "svg" {
            let (nodes, _) = drawn(std::str::from_utf8(&bytes).unwrap());
            assert_eq!(nodes.len(), 252);
        } else {
            let (w, h) = png_size(&bytes);
            assert!(w > 0 && h > 0);
        }
    }
    // SVG is text: standard output works.
    let o = fxray(&[
        "export".as_ref(),
        pass.as_os_str(),
        "-f".as_ref(),
        "svg".as_ref(),
    ]);
    assert!(o.status.success());
    assert!(o.stdout.starts_with(b"<svg "));
    let o = fxray(&[
        "export".as_ref(),
        pass.as_os_str(),
        "-f".as_ref(),
        "png".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("-o"), "{err}");
}

#[test]
fn union_option_uses_the_phase_layout() {
    let dir = phase_dir("showcase", "forward");
    let paths = passes(&dir);
    let pass = &paths[11];
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("u.svg");
    let draw = fxray::cli::export::DrawOptions {
        union: true,
        ..Default::default()
    };
    fxray::cli::export::run_with(pass, fxray::cli::ExportFormat::Svg, Some(&out), &draw).unwrap();
    let sc = showcase();
    let options = SvgOptions {
        dark: false,
        title: pass.file_name().unwrap().to_string_lossy().into_owned(),
    };
    let app_view = export_svg::to_svg(&sc.files[11], &sc.layout, &options);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        app_view,
        "same positions as the app"
    );
    // Outside a phase folder the option is a user error.
    let loose = tmp.path().join("g.txt");
    std::fs::copy(pass, &loose).unwrap();
    let err = fxray::cli::export::run_with(&loose, fxray::cli::ExportFormat::Svg, None, &draw)
        .unwrap_err();
    assert_eq!(err.exit_code(), 1);
}

/// `cargo test --release --test it export_svg:: -- --ignored --nocapture`
#[test]
#[ignore]
fn timing_stress_backward() {
    for (case, pick_last) in [
        ("npugraph_ex/stress_24layer", true),
        ("npugraph_ex/stress_20k", false),
    ] {
        let paths = passes(&phase_dir(case, "backward"));
        let path = if pick_last {
            paths.last()
        } else {
            paths.first()
        };
        time_export(path.expect("a backward pass"));
    }
}

fn time_export(path: &Path) {
    let t = Instant::now();
    let file = parse(path);
    let parse_t = t.elapsed();
    let t = Instant::now();
    let layout = build(&[&file]);
    let layout_t = t.elapsed();
    let t = Instant::now();
    let svg = svg_of(&file, &layout, false);
    let svg_t = t.elapsed();
    let t = Instant::now();
    let img = export_svg::render_png(&svg, 1.0).unwrap();
    let png_t = t.elapsed();
    let (nodes, edges) = drawn(&svg);
    println!(
        "{}: {} nodes, {} edges; parse {parse_t:?}, layout {layout_t:?}, svg {svg_t:?} ({} KiB), \
         png {png_t:?} ({}x{} px at scale {:.3}, {} KiB)",
        path.file_name().unwrap().to_string_lossy(),
        nodes.len(),
        edges,
        svg.len() / 1024,
        img.width,
        img.height,
        img.scale,
        img.bytes.len() / 1024
    );
}
