//! Benchmarks of the layout and of the UI's frame cost, on real graph files.

use super::measure::{median, min};
use crate::analysis::phase_layout;
use crate::error::{Error, Result};
use crate::sources::load;
use crate::ui::{Fxray, Viewport};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// `dot`: time Graphviz too, giving up after that long.
pub fn layout(graph: &Path, rounds: usize, dot: Option<Duration>) -> Result<()> {
    let file = load::graph(graph)?;
    if file.graphs.is_empty() {
        return Err(Error::user(format!(
            "{}: no FX graph found",
            graph.display()
        )));
    }
    let cancel = AtomicBool::new(false);
    let mut times = Vec::with_capacity(rounds);
    let mut result = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let l =
            phase_layout::build(&[&file], &cancel).map_err(|e| Error::Internal(e.to_string()))?;
        times.push(t.elapsed());
        result = Some(l);
    }
    let Some(l) = result else { return Ok(()) };
    let best = min(&times).as_secs_f64();
    let nodes = l.union.names().len();
    let edges = l.union.edges().len();
    let st = &l.layout.stats;
    println!(
        "layers={} dummies={} direct_edges={} crossings_initial={} crossings_final={} sweeps={}",
        st.layers,
        st.dummies,
        st.direct_edges,
        st.crossings_initial,
        st.crossings_final,
        st.sweeps_run
    );
    let phases: Vec<String> = st
        .phase_times
        .iter()
        .map(|(n, d)| format!("{n}={:.1}ms", d.as_secs_f64() * 1e3))
        .collect();
    println!("phases: {}", phases.join(" "));
    println!("layout_median_s={:.4}", median(&mut times).as_secs_f64());
    if let Some(limit) = dot {
        match time_dot(&file, limit)? {
            Some(dot_s) => println!("dot_s={dot_s:.3} ratio={:.0}x", dot_s / best),
            None => println!(
                "dot_s>{:.0} (stopped) ratio>{:.0}x",
                limit.as_secs_f64(),
                limit.as_secs_f64() / best
            ),
        }
    }
    println!("layout_s={best:.4} nodes={nodes} edges={edges}");
    Ok(())
}

/// Runs Graphviz on our DOT export of the same graph and returns its wall time, or `None` when
/// it was still running after `limit` (then it is killed).
fn time_dot(file: &crate::model::fx::FxFile, limit: Duration) -> Result<Option<f64>> {
    use std::io::Write;
    let text = crate::analysis::export::to_dot(file);
    let t = Instant::now();
    let mut child = std::process::Command::new("dot")
        .arg("-Tplain")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            Error::user(format!(
                "cannot run Graphviz `dot` ({e}); install graphviz or drop --dot"
            ))
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| Error::Internal(format!("writing to dot: {e}")))?;
    }
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::Internal(e.to_string()))?
        {
            if !status.success() {
                return Err(Error::Internal(format!("dot failed: {status}")));
            }
            return Ok(Some(t.elapsed().as_secs_f64()));
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Drives the real UI headless: opens the graph, waits for its layout, then pans for
/// `frames` frames zoomed out to fit, and again zoomed in.
pub fn frame(graph: &Path, frames: usize, fold: Option<bool>) -> Result<()> {
    let mut state = Fxray::headless(|app| app.open(graph), Duration::from_secs(300))
        .ok_or_else(|| Error::Internal("loading timed out".into()))?;
    state.view.graph_mut().fold_mode = fold;
    let ctx = egui::Context::default();
    let size = egui::vec2(1400.0, 900.0);
    let input = || egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        ..Default::default()
    };
    // Settle: the first frames build the scene and fit the graph. Texture updates are dropped
    // on purpose (no GPU here).
    let run = |state: &mut Fxray| {
        let mut out = ctx.run_ui(input(), |ui| state.ui(ui));
        out.textures_delta.clear();
        out
    };
    for _ in 0..5 {
        run(&mut state);
    }
    let (total, present) = state.view.graph().counts();
    let boxes = state.view.graph().module_boxes();
    println!(
        "folded={} boxes={} (folded {})",
        state.view.graph().is_folded(),
        boxes.len(),
        boxes.iter().filter(|b| b.2).count()
    );
    // At rest (no input, nothing loading) a frame must not ask for the next one.
    run(&mut state);
    run(&mut state);
    println!("repaint_requested_at_rest={}", ctx.has_requested_repaint());
    let fit = Viewport::load_ctx(&ctx);
    for (label, zoom) in [("zoomed_out", fit.zoom), ("zoomed_in", 1.0)] {
        let mut times = Vec::with_capacity(frames);
        let mut tess = Vec::with_capacity(frames);
        for i in 0..frames {
            Viewport {
                zoom,
                pan: fit.pan + egui::vec2((i % 40) as f32 * 3.0, (i % 40) as f32 * 5.0),
            }
            .save_ctx(&ctx);
            let t = Instant::now();
            let out = run(&mut state);
            let t_ui = t.elapsed();
            let t2 = Instant::now();
            let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
            tess.push(t2.elapsed());
            times.push(t_ui + tess[i]);
            std::hint::black_box(prims);
        }
        let mut graph_ms: Vec<Duration> = times.clone();
        println!(
            "{label}: zoom={zoom:.4} nodes={present}/{total} frame_median_ms={:.2} frame_max_ms={:.2} tessellate_median_ms={:.2} graph_view_ms={:.2}",
            median(&mut graph_ms).as_secs_f64() * 1e3,
            times
                .iter()
                .max()
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
                * 1e3,
            median(&mut tess).as_secs_f64() * 1e3,
            state.view.graph().last_frame_ms
        );
    }
    Ok(())
}
