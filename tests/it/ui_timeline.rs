//! UI tests of the capture timeline, driving the real app in egui_kittest: open the showcase's
//! aligned capture from the tree, zoom with the wheel, hover a task, select ranges and read
//! the statistics; click and search tasks. Also renders `screenshots/timeline_multistream_moe.png`
//! (written when `UPDATE_SCREENSHOTS=1`).
//!
//! Frames are stepped with `run_steps`, never `run`.

use crate::common::fixture;
use crate::common::ui::{harness, harness_sized, loaded_timeline, opened, settle, shoot, timeline};
use egui::{Event, Modifiers, PointerButton, Pos2, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::analysis::timeline_stats;
use fxray::ui::Fxray;
use serde_json::Value;

fn showcase_facts() -> Value {
    let text = std::fs::read_to_string(fixture("showcase/expected.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["aclgraph"].clone()
}

/// The showcase opened, its aligned capture clicked in the tree and loaded.
fn showcase_timeline() -> Harness<'static, Fxray> {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    h.get_by_label("⏱ capture graph_1 · aligned").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::TIMELINE);
    let open = timeline(&h).open.as_ref().expect("a capture is open");
    assert!(open.path.to_string_lossy().ends_with(".aligned.json"));
    assert!(timeline(&h).loaded().is_some(), "loaded");
    h
}

fn drag(h: &mut Harness<'static, Fxray>, from: Pos2, to: Pos2, modifiers: Modifiers) {
    h.event(Event::ModifiersChanged(modifiers));
    h.hover_at(from);
    h.step();
    h.event(Event::PointerButton {
        pos: from,
        button: PointerButton::Primary,
        pressed: true,
        modifiers,
    });
    h.step();
    for k in 1..=6 {
        h.hover_at(from + (to - from) * (k as f32 / 6.0));
        h.step();
    }
    h.event(Event::PointerButton {
        pos: to,
        button: PointerButton::Primary,
        pressed: false,
        modifiers,
    });
    h.step();
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
}

fn click_at(h: &mut Harness<'static, Fxray>, pos: Pos2) {
    h.hover_at(pos);
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
}

#[test]
fn showcase_timeline_zoom_hover_and_range_stats() {
    let facts = showcase_facts();
    let mut h = showcase_timeline();
    h.get_by_label("127 tasks · 2 streams · 4 flows");
    h.get_by_label_contains("ts/dur are logical");

    // Fitted: the whole span is on screen.
    let (v0, v1) = h.state().view.timeline().visible().unwrap();
    let span_end = facts["aligned_facts"]["max_end_per_tid"]["stream36"]
        .as_f64()
        .unwrap();
    assert!(
        v0 <= 0.0 && v1 >= span_end,
        "fit shows 0..{span_end}: {v0}..{v1}"
    );

    // Zoom in three wheel lines at the middle of the bars: the time under the cursor stays.
    let canvas = h.state().view.timeline().canvas().unwrap();
    let at = pos2(canvas.center().x, canvas.center().y);
    h.hover_at(at);
    h.step();
    let t_at = {
        let st = h.state().view.timeline();
        let (a, b) = st.visible().unwrap();
        let (xa, xb) = (st.x_of(a).unwrap(), st.x_of(b).unwrap());
        a + (b - a) * ((at.x - xa) / (xb - xa)) as f64
    };
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: vec2(0.0, 3.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
    let (z0, z1) = h.state().view.timeline().visible().unwrap();
    let ratio = (v1 - v0) / (z1 - z0);
    assert!((ratio - 1.25f64.powi(3)).abs() < 0.01, "zoomed ×{ratio}");
    let t_after = z0
        + (z1 - z0) * ((at.x - h.state().view.timeline().x_of(z0).unwrap()) as f64)
            / (h.state().view.timeline().x_of(z1).unwrap()
                - h.state().view.timeline().x_of(z0).unwrap()) as f64;
    assert!((t_after - t_at).abs() < 0.5, "anchored: {t_at} → {t_after}");

    // Hover the first matmul on stream36 (an AI Core kernel): its tooltip lists its args.
    let (task, name) = {
        let tl = loaded_timeline(&h);
        let (z0, z1) = (z0, z1);
        let i = tl
            .trace
            .tasks
            .iter()
            .position(|t| tl.trace.kind_name(t) == "KERNEL_AICORE" && t.ts > z0 && t.end() < z1)
            .expect("an AI Core kernel on screen");
        (i as u32, tl.trace.tasks[i].name.clone())
    };
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, task)
        .unwrap();
    h.hover_at(r.center());
    h.run_steps(3);
    assert_eq!(h.state().view.timeline().hovered, Some(task));
    assert!(
        h.query_all_by_label(&name).count() >= 1,
        "tooltip names {name}"
    );
    h.get_by_label("KERNEL_AICORE");
    h.get_by_label("Numblocks");

    // Fit again (F) and drag the ruler across everything: the stats are the file's histogram.
    h.key_press(egui::Key::F);
    h.run_steps(2);
    let st = h.state().view.timeline();
    let canvas = st.canvas().unwrap();
    let from = pos2(st.x_of(-1.0).unwrap(), canvas.top() + 8.0);
    let to = pos2(st.x_of(span_end + 1.0).unwrap(), canvas.top() + 8.0);
    drag(&mut h, from, to, Modifiers::NONE);
    let stats = h
        .state()
        .view
        .timeline()
        .range_stats()
        .expect("range stats")
        .clone();
    assert_eq!(stats.tasks, 127);
    let hist = facts["aligned_facts"]["task_type_histogram"]
        .as_object()
        .unwrap();
    assert_eq!(stats.by_type.len(), hist.len());
    for row in &stats.by_type {
        assert_eq!(
            Some(row.count as u64),
            hist[&row.name].as_u64(),
            "{}",
            row.name
        );
    }
    let per = &facts["aligned_facts"]["tasks_per_tid"];
    for row in &stats.by_stream {
        assert_eq!(
            Some(row.count as u64),
            per[&row.name].as_u64(),
            "{}",
            row.name
        );
    }
    // The table is on screen: 95 AIV kernels, the writer's 9.5 each.
    h.get_by_label_contains(": 127 tasks");
    h.get_by_label("by task type");
    h.get_by_label("95");
    h.get_by_label("902.5");

    // A shift-drag over the first part selects a smaller range; its stats are exactly those
    // of the analysis over the same times.
    let st = h.state().view.timeline();
    let y = st.task_rect(&h.state().app, 0).unwrap().center().y;
    let from = pos2(st.x_of(0.0).unwrap(), y);
    let to = pos2(st.x_of(200.0).unwrap(), y);
    drag(&mut h, from, to, Modifiers::SHIFT);
    let stats = h
        .state()
        .view
        .timeline()
        .range_stats()
        .expect("range stats")
        .clone();
    let tl = loaded_timeline(&h);
    assert!(stats.tasks > 5 && stats.tasks < 60, "{} tasks", stats.tasks);
    assert_eq!(
        stats,
        timeline_stats::range_stats(&tl.trace, stats.t0, stats.t1)
    );
    assert!((stats.t0 - 0.0).abs() < 2.0 && (stats.t1 - 200.0).abs() < 2.0);
}

#[test]
fn click_selects_a_task_and_search_walks_the_matches() {
    let mut h = showcase_timeline();
    let tl = loaded_timeline(&h);
    // Click the first task of stream37.
    let lane = tl.trace.lane_by_name("stream37").unwrap();
    let first = tl.trace.lanes[lane as usize].tasks[0];
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, first)
        .unwrap();
    click_at(&mut h, r.center());
    assert_eq!(timeline(&h).selected, Some(first));
    h.get_by_label("Task Type");
    // Clicking empty space clears the selection.
    let canvas = h.state().view.timeline().canvas().unwrap();
    click_at(&mut h, pos2(canvas.center().x, canvas.bottom() - 3.0));
    assert_eq!(timeline(&h).selected, None);

    // Search: the showcase has 4 EVENT_WAIT tasks; ▶ walks them in stream order.
    h.state_mut().view.timeline_mut().search = "event_wait".into();
    h.run_steps(2);
    h.get_by_label("4 matches");
    h.get_by_label("▶").click();
    h.run_steps(2);
    let want = timeline_stats::search(&tl.trace, "EVENT_WAIT");
    assert_eq!(timeline(&h).selected, Some(want[0]));
    h.get_by_label("1/4");
    h.get_by_label("◀").click();
    h.run_steps(2);
    assert_eq!(timeline(&h).selected, Some(want[3]));
    // The selected match is centred on screen.
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, want[3])
        .unwrap();
    let canvas = h.state().view.timeline().canvas().unwrap();
    assert!(canvas.contains(r.center()), "{r:?} in {canvas:?}");

    // The wait's details link to its record (same handle, on the other stream): follow it.
    let wait = &tl.trace.tasks[want[3] as usize];
    let handle = wait.name.strip_prefix("EVENT_WAIT_").unwrap();
    let record = tl
        .trace
        .tasks
        .iter()
        .position(|t| t.name == format!("EVENT_RECORD_{handle}"))
        .unwrap() as u32;
    h.get_by_label("waits for");
    let stream = &tl.trace.lanes[tl.trace.tasks[record as usize].lane as usize].name;
    assert_ne!(*stream, tl.trace.lanes[wait.lane as usize].name);
    h.get_by_label(&format!("EVENT_RECORD_{handle} on {stream}"))
        .click();
    h.run_steps(3);
    assert_eq!(timeline(&h).selected, Some(record));
    h.get_by_label("waited for by");
}

#[test]
fn a_truncated_capture_says_what_was_not_loaded() {
    let dir = fixture("aclgraph/edge_truncated");
    let mut h = harness(opened(&dir));
    settle(&mut h);
    h.get_by_label("⏱ capture graph_1 · raw").click();
    settle(&mut h);
    h.get_by_label("38 tasks · 3 streams · 5 record/wait pairs");
    h.get_by_label_contains("incomplete: the file is cut in the middle of an event at line 40");

    // An empty capture (`[\n]`) opens as an empty timeline.
    let dir = fixture("aclgraph/edge_empty");
    let mut h = harness(opened(&dir));
    settle(&mut h);
    h.get_by_label("⏱ capture graph_3 · raw").click();
    settle(&mut h);
    h.get_by_label("0 tasks · 0 streams · 0 record/wait pairs");
}

#[test]
fn multistream_moe_screenshot() {
    let dir = fixture("aclgraph/multistream_moe");
    let mut h = harness_sized(opened(&dir), vec2(1500., 820.));
    settle(&mut h);
    h.get_by_label("⏱ capture graph_1 · aligned").click();
    settle(&mut h);
    let tl = loaded_timeline(&h);
    assert_eq!(tl.trace.lanes.len(), 3);
    assert_eq!(tl.deps.len(), 12, "12 record→wait flows drawn");
    // Select the first MoE dispatch and the span of the first layer.
    let dispatch = timeline_stats::search(&tl.trace, "MoeDistributeDispatch")[0];
    h.state_mut().app.select_task(Some(dispatch));
    h.state_mut().view.timeline_mut().range = Some((0.0, 300.0));
    h.run_steps(3);
    assert!(h.state().view.timeline().drawn.arrows > 0);
    h.remove_cursor();
    h.run_steps(2);
    shoot(&mut h, "timeline_multistream_moe");
}

#[test]
fn selecting_a_task_selects_its_node_and_back() {
    let mut h = showcase_timeline();
    settle(&mut h);
    let link = timeline(&h)
        .nodes
        .clone()
        .expect("linked to the final pass");
    assert_eq!(link.map.mapped(), 114);
    assert!(link.pass.to_string_lossy().contains("018_"));
    h.get_by_label_contains("114 of 114 kernel tasks linked to FX nodes");
    // Click the first softmax task: its node is selected in the final pass.
    let tl = loaded_timeline(&h);
    let softmax = tl
        .trace
        .tasks
        .iter()
        .position(|t| t.name.starts_with("SoftmaxV2"))
        .unwrap() as u32;
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, softmax)
        .unwrap();
    click_at(&mut h, r.center());
    settle(&mut h);
    assert_eq!(timeline(&h).selected, Some(softmax));
    let node = link.map.by_task[&softmax].0.clone();
    assert!(node.starts_with("_softmax"), "{node}");
    assert_eq!(crate::common::ui::selected(&h), Some(node.clone()));
    let ph = h.state().app.phase.as_ref().unwrap();
    assert_eq!(ph.current_path(), Some(link.pass.as_path()));
    // The user stays on the timeline: the node is selected, not shown.
    assert_eq!(h.state().view.central(), fxray::app::TabId::TIMELINE);
    h.get_by_label_contains(&format!("FX node {node} (High confidence)"));

    // Selecting another node (as the graph or inspector does) selects its task.
    let (other, &task) = link
        .map
        .by_node
        .iter()
        .find(|(n, _)| n.starts_with("embedding"))
        .unwrap();
    h.state_mut().app.reveal_node(other.clone());
    h.run_steps(3);
    assert_eq!(timeline(&h).selected, Some(task));
}

#[test]
fn a_trace_file_opened_directly_shows_its_timeline() {
    // A capture file (as `fxray FILE` or a drop opens it): the timeline comes to the front and
    // the tree lists the capture.
    let dir = fixture("aclgraph/multistream_moe");
    let raw = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("882104.json"))
        .unwrap();
    let mut app = fxray::app::App::new();
    app.open_trace_file(&raw);
    let mut h = harness(app);
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::TIMELINE);
    h.get_by_label("135 tasks · 4 streams · 12 record/wait pairs");
    h.get_by_label("⏱ capture graph_1 · raw");
    assert!(h.state().app.error.is_none(), "{:?}", h.state().app.error);

    // Any other Chrome trace opens as a timeline too, without a tree.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("trace.json");
    std::fs::write(
        &p,
        r#"{"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":5},{"name":"b","ph":"X","pid":1,"tid":2,"ts":2,"dur":5}]}"#,
    )
    .unwrap();
    let mut app = fxray::app::App::new();
    app.open_trace_file(&p);
    let mut h = harness(app);
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::TIMELINE);
    h.get_by_label("2 tasks · 2 streams · 0 record/wait pairs");
    assert!(
        h.query_by_label_contains("ts/dur are logical").is_none(),
        "real times"
    );
}

#[test]
fn many_streams_scroll_and_search_reveals_a_lower_lane() {
    // 40 streams do not fit: the wheel over the stream names scrolls them.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("many.json");
    let mut lines = vec![];
    for s in 0..40 {
        for k in 0..3 {
            lines.push(format!(
                r#"{{"name":"t{s}_{k}","pid":"1 aclGraph","tid":"stream{s}","ts":{},"dur":9.5,"ph":"X","args":{{"Task Type":"KERNEL_AIVEC"}}}}"#,
                k * 10
            ));
        }
    }
    std::fs::write(&p, format!("[\n{}\n]", lines.join(",\n"))).unwrap();
    let mut app = fxray::app::App::new();
    app.open_trace_file(&p);
    let mut h = harness(app);
    settle(&mut h);
    let tl = loaded_timeline(&h);
    let last = tl.trace.lanes[39].tasks[0];
    let canvas = h.state().view.timeline().canvas().unwrap();
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, last)
        .unwrap();
    assert!(
        !canvas.contains(r.center()),
        "stream39 starts below the canvas"
    );
    h.hover_at(pos2(canvas.left() + 20.0, canvas.center().y));
    h.step();
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: vec2(0.0, -60.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, last)
        .unwrap();
    assert!(
        canvas.contains(r.center()),
        "scrolled to the last stream: {r:?} in {canvas:?}"
    );
    h.hover_at(r.center());
    h.run_steps(2);
    assert_eq!(h.state().view.timeline().hovered, Some(last));
    // Scroll back up, then search reveals stream39's task again.
    h.hover_at(pos2(canvas.left() + 20.0, canvas.center().y));
    h.step();
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: vec2(0.0, 60.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
    assert_eq!(h.state().view.timeline().options.scroll_y, 0.0);
    h.state_mut().view.timeline_mut().search = "t39_0".into();
    h.run_steps(2);
    h.get_by_label("▶").click();
    h.run_steps(2);
    assert_eq!(timeline(&h).selected, Some(last));
    let r = h
        .state()
        .view
        .timeline()
        .task_rect(&h.state().app, last)
        .unwrap();
    assert!(canvas.contains(r.center()), "revealed");
}

#[test]
fn hovering_an_arrow_names_the_pair() {
    // The raw multistream capture: arrows are recomputed record/wait pairs and a hand-over.
    let dir = fixture("aclgraph/multistream_moe");
    let mut h = harness(opened(&dir));
    settle(&mut h);
    h.get_by_label("⏱ capture graph_1 · raw").click();
    settle(&mut h);
    let tl = loaded_timeline(&h);
    // The first arrow between adjacent streams: its middle lies in the gap between lanes.
    let (i, d) = tl
        .deps
        .iter()
        .enumerate()
        .find(|(_, d)| d.from_lane.abs_diff(d.to_lane) == 1)
        .unwrap();
    let (a, b) = h
        .state()
        .view
        .timeline()
        .dep_ends(&h.state().app, i)
        .unwrap();
    let mid = a + (b - a) / 2.0;
    h.hover_at(mid);
    h.run_steps(3);
    assert_eq!(h.state().view.timeline().hovered, None);
    assert_eq!(h.state().view.timeline().hovered_dep, Some(i));
    h.get_by_label(&d.label);
    h.get_by_label_contains("paired by");
}
