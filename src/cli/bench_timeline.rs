//! `fxray bench timeline FILE`: load time of a capture (read + parse + pairing) and CPU time per
//! frame of the real UI's timeline view, zoomed out to fit and zoomed in, panning every frame.

use super::measure::{median, min};
use crate::analysis::timeline_stats::Timeline;
use crate::error::{Error, Result};
use crate::sources::trace_json;
use crate::ui::Fxray;
use std::path::Path;
use std::time::{Duration, Instant};

pub fn run(file: &Path, rounds: usize, frames: usize) -> Result<()> {
    let mut times = Vec::with_capacity(rounds);
    let mut tasks = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let tl = Timeline::new(trace_json::load(file)?);
        times.push(t.elapsed());
        tasks = tl.trace.tasks.len();
    }
    let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!("tasks={tasks} bytes={bytes} rounds={rounds}");
    println!(
        "load_best_s={:.4} load_median_s={:.4}",
        min(&times).as_secs_f64(),
        median(&mut times).as_secs_f64()
    );

    let mut state = Fxray::headless(|app| app.open_timeline(file), Duration::from_secs(120))
        .ok_or_else(|| Error::Internal("loading timed out".into()))?;
    state.view.tabs.show(crate::ui::TabId::TIMELINE);
    let ctx = egui::Context::default();
    let size = egui::vec2(1600.0, 900.0);
    let input = || egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        ..Default::default()
    };
    // Settle: the first frames load fonts and fit the trace. Texture updates are dropped on
    // purpose (no GPU here).
    for _ in 0..5 {
        let mut out = ctx.run_ui(input(), |ui| state.ui(ui));
        out.textures_delta.clear();
    }
    let fit = state.view.timeline().options;
    let (v0, v1) = state.view.timeline().visible().unwrap_or((0.0, 1.0));
    // Zoomed in: about 40 tasks of 10 units across the screen.
    let zoomed_in = {
        let mut o = fit;
        o.scale = fit.scale * (v1 - v0) / 400.0;
        o
    };
    for (label, base) in [("zoomed_out", fit), ("zoomed_in", zoomed_in)] {
        let mut total = Vec::with_capacity(frames);
        let mut tess = Vec::with_capacity(frames);
        let mut drawn = Default::default();
        for i in 0..frames {
            let mut o = base;
            // Pan across the trace, a different window every frame.
            o.start = v0 + (v1 - v0) * (i as f64 / frames as f64) * 0.9;
            if label == "zoomed_out" {
                o.start = fit.start + (i % 40) as f64 * 3.0 / fit.scale;
            }
            state.view.timeline_mut().options = o;
            let t = Instant::now();
            let mut out = ctx.run_ui(input(), |ui| state.ui(ui));
            let t_ui = t.elapsed();
            out.textures_delta.clear();
            let t2 = Instant::now();
            let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
            let t_tess = t2.elapsed();
            std::hint::black_box(prims);
            tess.push(t_tess);
            total.push(t_ui + t_tess);
            drawn = state.view.timeline().drawn;
        }
        let max = total.iter().max().copied().unwrap_or_default();
        println!(
            "{label}: frame_median_ms={:.2} frame_max_ms={:.2} tessellate_median_ms={:.2} bars={} merged={} arrows={}",
            median(&mut total).as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3,
            median(&mut tess).as_secs_f64() * 1e3,
            drawn.bars,
            drawn.merged,
            drawn.arrows
        );
    }
    Ok(())
}
