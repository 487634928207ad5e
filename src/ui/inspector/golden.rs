//! The selected node beside its golden run (issue 23): each of its tensors on both sides,
//! msprobe's metrics, the norm ratio and the error the node adds, and where the largest
//! difference is; one pair (an output first) pictured: its difference's histogram and |Δ| on a
//! slice (`golden_delta`); tensors only one side has are said.

use crate::analysis::accuracy::{Level, Role, Side, metrics::Metric, stats::Summary};
use crate::app::Loading;
use crate::app::accuracy::AccuracyState;
use egui::RichText;

/// What the user (or the section) asks of the app.
pub(super) enum Ask {
    PickGolden,
    /// The difference of this pair, to picture, on the slice at these leading indices
    /// (`None`: the one holding the largest difference).
    Delta(String, Option<Vec<u64>>),
}

/// Draws the section; returns what it asks for.
pub(super) fn show(acc: &AccuracyState, node: Option<&str>, ui: &mut egui::Ui) -> Option<Ask> {
    ui.separator();
    let mut pick = false;
    ui.horizontal(|ui| {
        ui.strong("vs golden");
        pick = ui
            .small_button("Golden…")
            .on_hover_text(
                "compare this run with its golden run (a dump, an msprobe dump, a run folder)",
            )
            .clicked();
    });
    let mut ask = pick.then_some(Ask::PickGolden);
    let pick = || pick.then_some(Ask::PickGolden);
    let c = match &acc.result {
        Loading::Idle => {
            ui.weak("No golden run attached.");
            return pick();
        }
        Loading::Loading => {
            crate::ui::loading::busy(ui, acc.progress_line());
            return pick();
        }
        Loading::Failed(e) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
            return pick();
        }
        Loading::Ready(c) => c,
    };
    let Some(node) = node else {
        ui.weak("Select a node to see it beside the golden.");
        return pick();
    };
    // The pair pictured: the one asked for last if it is this node's, else its first output
    // with data on both sides, else its first pair with data.
    let with_files = || c.pairs_of(node).filter(|p| p.files.is_some());
    let shown = acc.delta.as_ref().map(|d| d.key.as_str());
    let pictured = with_files()
        .find(|p| Some(p.key.as_str()) == shown)
        .or_else(|| with_files().find(|p| p.role == Role::Output))
        .or_else(|| with_files().next())
        .map(|p| p.key.clone());
    if ask.is_none()
        && let Some(k) = &pictured
        && shown != Some(k.as_str())
    {
        ask = Some(Ask::Delta(k.clone(), None));
    }
    let mut any = false;
    for p in c.pairs_of(node) {
        any = true;
        let colour = match p.result {
            Level::Pass => crate::ui::palette::OK,
            Level::Warning => ui.visuals().warn_fg_color,
            Level::Error => ui.visuals().error_fg_color,
        };
        ui.horizontal_wrapped(|ui| {
            ui.colored_label(colour, p.result.as_str());
            ui.label(RichText::new(&p.slot).monospace());
            if p.dtype == p.golden_dtype {
                ui.weak(&p.dtype);
            } else {
                ui.weak(format!("{} (golden {})", p.dtype, p.golden_dtype));
            }
        });
        egui::Grid::new(("golden_stats", &p.key))
            .num_columns(3)
            .show(ui, |ui| {
                ui.weak("");
                ui.weak("target");
                ui.weak("golden");
                ui.end_row();
                let (t, g) = (p.target_summary.as_ref(), p.golden_summary.as_ref());
                for (name, f) in [
                    ("max", (|s: &Summary| s.max) as fn(&Summary) -> Option<f64>),
                    ("min", |s| s.min),
                    ("mean", |s| s.mean),
                    ("norm", |s| s.norm),
                ] {
                    ui.label(name);
                    ui.monospace(num(t.and_then(f)));
                    ui.monospace(num(g.and_then(f)));
                    ui.end_row();
                }
            });
        egui::Grid::new(("golden_metrics", &p.key))
            .num_columns(2)
            .show(ui, |ui| {
                if let Some(m) = &p.metrics {
                    row(ui, "cosine", metric(m.cosine));
                    row(ui, "MaxAbsErr", metric(m.max_abs_err));
                    row(ui, "MaxRelativeErr", metric(m.max_rel_err));
                    row(
                        ui,
                        "1‰ / 5‰ ratio",
                        format!(
                            "{} / {}",
                            metric(m.one_thousandth_ratio),
                            metric(m.five_thousandths_ratio)
                        ),
                    );
                    if let (Some(at), Some((t, g))) = (&m.argmax, m.at_max) {
                        row(ui, "largest |Δ| at", format!("{at:?}: {t:.6} vs {g:.6}"));
                    }
                }
                row(
                    ui,
                    "norm ratio",
                    p.norm_ratio.map_or("—".into(), |v| format!("{v:.5}")),
                );
                row(ui, "error", num(p.error));
                row(ui, "added by this node", num(p.added_error));
            });
        if !p.reason.is_empty() {
            ui.weak(&p.reason);
        }
        if pictured.as_deref() == Some(p.key.as_str()) {
            let view = acc.delta.as_ref().filter(|d| d.key == p.key);
            if let Some(lead) = super::golden_delta::show(ui, view, &p.shape) {
                ask = Some(Ask::Delta(p.key.clone(), Some(lead)));
            }
        } else if p.files.is_some()
            && ui
                .small_button(format!("Picture the difference of {}", p.slot))
                .clicked()
        {
            ask = Some(Ask::Delta(p.key.clone(), None));
        }
    }
    for (side, u) in c.unpaired_of(node) {
        any = true;
        let side = match side {
            Side::Target => "target",
            Side::Golden => "golden",
        };
        ui.colored_label(
            crate::ui::palette::UNPAIRED,
            format!("only in the {side}: {} ({})", u.key, u.dtype),
        );
    }
    if !any {
        ui.weak(format!("{node}: no dumped tensor paired with the golden."));
    }
    ask
}

fn row(ui: &mut egui::Ui, k: &str, v: String) {
    ui.label(k);
    ui.monospace(v);
    ui.end_row();
}

fn metric(m: Metric) -> String {
    match (m.value(), m.word()) {
        (Some(v), _) => format!("{v:.6}"),
        (None, Some(w)) => w.to_string(),
        _ => "—".into(),
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.4e}"))
}
