//! The window on a tree that lives on a server: `ssh://127.0.0.1:PORT/…` opened in the real app
//! against the loopback sshd (`common::sshd`), then tree → pass → node → tensors clicked as a
//! user would, everything read through the agent.

use crate::common::sshd::shared;
use crate::common::ui::{click_node, harness_sized, selected, settle};
use crate::common::{fixture, run_dir};
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use std::path::{Path, PathBuf};

#[test]
fn a_remote_tree_opens_and_clicks_through_to_a_nodes_tensors() {
    let _alone = crate::common::sshd::in_process();
    let s = shared();
    fxray::sources::remote::configure(s.settings(Path::new(env!("CARGO_BIN_EXE_fxray"))));
    // 127.0.0.2: a link of this test's own, which it drops below.
    let url = s.url_at("127.0.0.2", &fixture("showcase"));
    let mount = fxray::sources::remote::resolve(Path::new(&url)).unwrap();
    let mut app = App::new();
    app.open(&mount);
    assert!(
        app.wait_idle(crate::common::ui::WAIT),
        "opening {url} timed out"
    );
    assert!(app.error.is_none(), "{:?}", app.error);
    let mut h = harness_sized(app, egui::vec2(1500., 1100.));
    settle(&mut h);
    // The status bar says where the tree is (its middle may be elided) and what the link costs.
    h.get_by_label_contains(&format!("ssh://{}@127.0.0.2:{}/", s.user, s.port));
    let authority = format!("{}@127.0.0.2:{}", s.user, s.port);
    let link = format!("{authority} · ");
    h.get_by_label_contains(&link);

    // Tree → the last pass.
    let name = "018_aot_forward_graph_after_resolve_default_stream_markers.txt";
    h.get_by_label("018 resolve_default_stream_markers").click();
    settle(&mut h);
    let forward = run_dir("showcase").join("npugraph_ex/model__0/forward");
    let want = PathBuf::from(format!("/ssh:{authority}{}", forward.join(name).display()));
    let shown = h
        .state()
        .app
        .phase
        .as_ref()
        .map(|p| p.passes[p.current].path.clone());
    assert_eq!(shown.as_deref(), Some(want.as_path()));
    // The phase came from the agent whole: every pass, the diffs, the layout (laid out on the
    // server: its timings stayed there) and the modules, as the inspector's path shows.
    let p = h.state().app.phase.as_ref().unwrap();
    assert!(p.files.iter().all(Option::is_some));
    assert!(p.diffs.iter().skip(1).all(Option::is_some));
    let layout = p.layout.as_ref().expect("layout");
    assert!(layout.layout.stats.phase_times.is_empty());
    let (_, tree) = p.fold.as_ref().expect("modules");
    assert!(tree.modules.iter().any(|m| m.path == "layers.0.self_attn"));

    // Node: add_6, clicked on the canvas.
    click_node(&mut h, "add_6");
    assert_eq!(selected(&h).as_deref(), Some("add_6"));
    settle(&mut h);

    // Tensors: summarised on the server, the same facts as locally.
    assert_eq!(h.state().app.tensors.summaries.len(), 1292);
    h.get_by_label("graph_1 · 213/213 dumped nodes in this graph (100%), 213 of 213 calls dumped");
    h.get_by_label("OUTPUT.0 histogram");
    h.get_by_label("step 1").click();
    settle(&mut h);
    h.get_by_label("NaN 16");
    // The heatmap: a slice cut on the server.
    h.get_by_label("OUTPUT.0 heatmap and values").click();
    settle(&mut h);
    h.get_by_label_contains("8×8 slice, colour scale");
    crate::common::ui::shoot(&mut h, "remote_tensors");

    // The link drops: the status bar says so; Reconnect brings it back with the view as it was
    // (pass, selection), and the next pass reads through the new link.
    let host = fxray::sources::remote::Host::parse(&authority).unwrap();
    fxray::sources::remote::disconnect(&host);
    h.run_steps(2);
    h.get_by_label(&format!("{authority} · link down · reconnect"))
        .click();
    settle(&mut h);
    h.get_by_label_contains(&link);
    assert_eq!(selected(&h).as_deref(), Some("add_6"));
    assert_eq!(crate::common::ui::current_pass(&h), 18);
    h.get_by_label("004 apply_pattern_passes").click();
    settle(&mut h);
    let p = h.state().app.phase.as_ref().unwrap();
    assert!(
        p.files[p.current].is_some(),
        "pass 4 read through the new link"
    );
    assert!(
        p.passes[p.current]
            .path
            .starts_with(format!("/ssh:{authority}"))
    );
    let st = fxray::sources::remote::status();
    let st = st.iter().find(|l| l.host == authority).unwrap();
    assert!(st.alive && st.reconnects >= 1, "{st:?}");
}
