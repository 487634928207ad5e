//! The Run panel: the form that defines a compile run, Run/Stop, the live console, and past
//! runs. Text fields edit buffers here; the app's `RunSpec` is rebuilt from them.

use crate::app::Nav;
use crate::app::part::Cx;
use crate::app::run::{Backend, Mode, RunSpec, RunState, Stream, parse_env};
use std::path::PathBuf;

#[derive(Default)]
pub struct RunPanelState {
    script: String,
    args: String,
    python: String,
    cwd: String,
    debug_dir: String,
    data_dump: String,
    env: String,
    /// The form the buffers were filled from (a re-run replaces the form).
    synced: Option<RunSpec>,
    pub search: String,
    asked_environment: bool,
}

fn show(run: &mut RunState, cx: &mut Cx, state: &mut RunPanelState, ui: &mut egui::Ui) {
    if !state.asked_environment {
        state.asked_environment = true;
        run.detect_environment(cx);
    }
    if state.synced.as_ref() != Some(&run.form) {
        fill_buffers(state, &run.form);
    }
    // The console must stay readable however wide the run tree beside the tab is: the form
    // takes what the console leaves, and moves above it when the tab is too narrow for both.
    let width = ui.available_width();
    let mut form_and_history = |ui: &mut egui::Ui| {
        egui::ScrollArea::vertical()
            .id_salt("run_form_scroll")
            .show(ui, |ui| {
                form(run, cx, state, ui);
                ui.separator();
                past_runs(run, cx, ui);
            });
    };
    if width >= FORM_MIN + CONSOLE_MIN {
        egui::Panel::left("run_form")
            .resizable(true)
            .default_size(420.0f32.min(width - CONSOLE_MIN))
            .size_range(FORM_MIN..=width - CONSOLE_MIN)
            .show(ui, |ui| form_and_history(ui));
    } else {
        let height = ui.available_height();
        egui::Panel::top("run_form_above")
            .resizable(true)
            .default_size(height * 0.55)
            .size_range(120.0..=(height - 120.0).max(120.0))
            .show(ui, |ui| form_and_history(ui));
    }
    console(run, state, ui);
}

/// The narrowest the form is useful at (its labels and a path).
const FORM_MIN: f32 = 280.0;
/// The narrowest the console is read at (a line of a log, a traceback's frame).
const CONSOLE_MIN: f32 = 360.0;

fn fill_buffers(state: &mut RunPanelState, spec: &RunSpec) {
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or(String::new(), |p| p.display().to_string())
    };
    state.script = spec.script.display().to_string();
    state.args = shlex::try_join(spec.args.iter().map(String::as_str)).unwrap_or_default();
    state.python = path(&spec.python);
    state.cwd = path(&spec.cwd);
    state.debug_dir = path(&spec.debug_dir);
    state.data_dump = path(&spec.data_dump);
    state.env = spec
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("\n");
    state.synced = Some(spec.clone());
}

/// The form; returns nothing: edits go straight into `run.form`.
fn form(run: &mut RunState, cx: &mut Cx, state: &mut RunPanelState, ui: &mut egui::Ui) {
    ui.heading("Run a compile");
    let no_npu = run.env.npu.as_ref().is_some_and(|n| n.devices.is_empty());
    let mut problems: Vec<String> = Vec::new();
    let mut spec = run.form.clone();
    egui::Grid::new("run_form_grid")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let l = ui.label("Script");
            ui.add(
                egui::TextEdit::singleline(&mut state.script)
                    .hint_text("train.py")
                    .desired_width(f32::INFINITY),
            )
            .labelled_by(l.id);
            ui.end_row();

            let l = ui.label("Arguments");
            ui.add(
                egui::TextEdit::singleline(&mut state.args)
                    .hint_text("--steps 10 \"a b\"")
                    .desired_width(f32::INFINITY),
            )
            .labelled_by(l.id);
            ui.end_row();

            ui.label("Python");
            ui.horizontal(|ui| {
                ui.add(
                    egui::TextEdit::singleline(&mut state.python)
                        .hint_text("auto")
                        .desired_width(200.0),
                );
                egui::ComboBox::from_id_salt("python_pick")
                    .selected_text("found")
                    .show_ui(ui, |ui| {
                        for i in &run.env.interpreters {
                            let label = format!("{} ({})", i.path.display(), i.origin);
                            if ui.selectable_label(false, label).clicked() {
                                state.python = i.path.display().to_string();
                            }
                        }
                    });
            });
            ui.end_row();

            ui.label("");
            match &run.env.packages {
                Some((py, Ok(p))) => {
                    ui.weak(format!(
                        "{}: Python {} · torch {} · torch_npu {} · npugraph_ex {}",
                        py.display(),
                        p.python,
                        p.torch.as_deref().unwrap_or("—"),
                        p.torch_npu.as_deref().unwrap_or("—"),
                        p.npugraph_ex.as_deref().unwrap_or("—"),
                    ));
                }
                Some((_, Err(e))) => {
                    ui.colored_label(ui.visuals().warn_fg_color, e);
                }
                None => {
                    ui.weak("looking for Python…");
                }
            }
            ui.end_row();

            let l = ui.label("Working folder");
            ui.add(
                egui::TextEdit::singleline(&mut state.cwd)
                    .hint_text("the script's folder")
                    .desired_width(f32::INFINITY),
            )
            .labelled_by(l.id);
            ui.end_row();

            ui.label("Backend");
            egui::ComboBox::from_id_salt("backend")
                .selected_text(backend_label(spec.backend))
                .show_ui(ui, |ui| {
                    for b in Backend::ALL {
                        let offered = b.is_cpu() || b == Backend::Script || !no_npu;
                        ui.add_enabled_ui(offered, |ui| {
                            ui.selectable_value(&mut spec.backend, b, backend_label(b))
                                .on_disabled_hover_text("no NPU on this machine");
                        });
                    }
                });
            ui.end_row();

            if spec.backend == Backend::Torchair {
                ui.label("Mode");
                egui::ComboBox::from_id_salt("mode")
                    .selected_text(spec.mode.map_or("default", Mode::as_str))
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut spec.mode, None, "default");
                        for m in Mode::ALL {
                            ui.selectable_value(&mut spec.mode, Some(m), m.as_str());
                        }
                    });
                ui.end_row();
            }

            ui.label("Devices");
            ui.add(
                egui::TextEdit::singleline(&mut spec.devices)
                    .hint_text("ASCEND_RT_VISIBLE_DEVICES, e.g. 0,1")
                    .desired_width(f32::INFINITY),
            );
            ui.end_row();

            ui.label("Ranks");
            ui.add(egui::DragValue::new(&mut spec.nproc).range(1..=64))
                .on_hover_text("more than 1: torch.distributed.run --nproc_per_node");
            ui.end_row();

            ui.label("Data dump");
            ui.horizontal(|ui| {
                let mut on = !state.data_dump.is_empty() || spec.data_dump.is_some();
                if ui.checkbox(&mut on, "npy to").changed() && !on {
                    state.data_dump.clear();
                }
                if on {
                    ui.add(
                        egui::TextEdit::singleline(&mut state.data_dump)
                            .hint_text("dump folder")
                            .desired_width(200.0),
                    );
                }
            });
            ui.end_row();

            ui.label("Checks");
            ui.checkbox(&mut spec.deadlock_check, "deadlock_check");
            ui.end_row();

            ui.label("Caches");
            ui.checkbox(&mut spec.keep_caches, "keep Inductor's caches")
                .on_hover_text(
                    "A compile served from the caches runs no passes and writes no graphs",
                );
            ui.end_row();

            ui.label("Autotune TOPN");
            ui.horizontal(|ui| {
                let mut on = spec.autotune_topn.is_some();
                ui.checkbox(&mut on, "");
                if on {
                    let mut n = spec.autotune_topn.unwrap_or(3);
                    ui.add(egui::DragValue::new(&mut n).range(1..=64));
                    spec.autotune_topn = Some(n);
                } else {
                    spec.autotune_topn = None;
                }
            });
            ui.end_row();

            ui.label("Debug folder");
            ui.add(
                egui::TextEdit::singleline(&mut state.debug_dir)
                    .hint_text("TORCH_COMPILE_DEBUG_DIR (default: working folder)")
                    .desired_width(f32::INFINITY),
            );
            ui.end_row();

            ui.label("Environment");
            ui.add(
                egui::TextEdit::multiline(&mut state.env)
                    .hint_text("KEY=VALUE, one per line")
                    .desired_rows(2)
                    .desired_width(f32::INFINITY),
            );
            ui.end_row();
        });

    let opt_path = |s: &str| (!s.trim().is_empty()).then(|| PathBuf::from(s.trim()));
    spec.script = PathBuf::from(state.script.trim());
    spec.python = opt_path(&state.python);
    spec.cwd = opt_path(&state.cwd);
    spec.debug_dir = opt_path(&state.debug_dir);
    spec.data_dump = opt_path(&state.data_dump);
    match shlex::split(&state.args) {
        Some(a) => spec.args = a,
        None => problems.push("arguments: unbalanced quotes".into()),
    }
    spec.env.clear();
    for line in state.env.lines().filter(|l| !l.trim().is_empty()) {
        match parse_env(line.trim()) {
            Ok(kv) => spec.env.push(kv),
            Err(e) => problems.push(format!("environment: {e}")),
        }
    }
    if no_npu && !spec.backend.is_cpu() && spec.backend != Backend::Script {
        problems.push(format!(
            "{} needs an NPU; this machine has none: choose inductor or aot_eager",
            spec.backend.as_str()
        ));
    }
    if spec != run.form {
        run.form = spec;
        state.synced = Some(run.form.clone());
    }

    ui.add_space(6.0);
    ui.checkbox(&mut run.open_folders, "Open the run folder when it appears");
    ui.horizontal(|ui| {
        let running = run.busy();
        let can_run = !running && problems.is_empty() && !state.script.trim().is_empty();
        if ui
            .add_enabled(can_run, egui::Button::new("▶ Run"))
            .clicked()
        {
            run.start_run(cx);
        }
        if ui
            .add_enabled(running, egui::Button::new("■ Stop"))
            .clicked()
        {
            run.stop_run();
        }
        if let Some(run) = &run.current {
            let secs = run.elapsed().as_secs_f64();
            match (&run.exit, &run.failed) {
                (_, Some(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                (Some((exit, _)), _) => {
                    let ok = matches!(exit, crate::app::run::Exit::Code(0));
                    let color = if ok {
                        crate::ui::palette::OK
                    } else {
                        ui.visuals().error_fg_color
                    };
                    ui.colored_label(color, format!("{exit} · {secs:.1} s"));
                }
                _ => {
                    crate::ui::loading::busy(
                        ui,
                        format!(
                            "running · pid {} · {secs:.1} s",
                            run.pid.map_or("?".into(), |p| p.to_string())
                        ),
                    );
                    ui.ctx()
                        .request_repaint_after(std::time::Duration::from_millis(250));
                }
            }
        }
    });
    for p in problems.iter().chain(run.error.iter()) {
        ui.colored_label(ui.visuals().warn_fg_color, p);
    }
    if let Some(npu) = &run.env.npu {
        ui.weak(npu.summary());
    }
    if let Some(current) = &run.current
        && !current.folders.is_empty()
    {
        let mut open = None;
        ui.label("Run folders:");
        for f in &current.folders {
            if ui.link(f.display().to_string()).clicked() {
                open = Some(f.clone());
            }
        }
        if let Some(f) = open {
            cx.nav.push(Nav::Open(f));
        }
    }
}

fn backend_label(b: Backend) -> &'static str {
    match b {
        Backend::Script => "as the script says",
        Backend::NpugraphEx => "npugraph_ex",
        Backend::Torchair => "torchair (get_npu_backend)",
        Backend::Inductor => "inductor (CPU)",
        Backend::AotEager => "aot_eager (CPU)",
    }
}

fn past_runs(run: &mut RunState, cx: &mut Cx, ui: &mut egui::Ui) {
    ui.heading("Past runs");
    if run.history.is_empty() {
        ui.weak("none yet");
        return;
    }
    let mut rerun = None;
    let mut open = None;
    for (i, p) in run.history.iter().enumerate() {
        ui.horizontal(|ui| {
            let name = p
                .spec
                .script
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // Buttons first: a long line is cut to the form's width, never widens it.
            if ui.small_button("Run again").clicked() {
                rerun = Some(i);
            }
            if let Some(f) = p.folders.first()
                && ui
                    .small_button("Open")
                    .on_hover_text(f.display().to_string())
                    .clicked()
            {
                open = Some(f.clone());
            }
            ui.add(
                egui::Label::new(format!(
                    "{} · {name} · {} · {} · {:.1} s",
                    p.started_at,
                    p.spec.backend.as_str(),
                    p.outcome,
                    p.elapsed_s
                ))
                .truncate(),
            );
        });
    }
    if let Some(i) = rerun {
        run.rerun(cx, i);
    }
    if let Some(f) = open {
        cx.nav.push(Nav::Open(f));
    }
}

fn console(run: &RunState, state: &mut RunPanelState, ui: &mut egui::Ui) {
    let Some(run) = &run.current else {
        ui.weak("Output of the run shows here.");
        return;
    };
    ui.horizontal(|ui| {
        ui.label("Output");
        ui.add(
            egui::TextEdit::singleline(&mut state.search)
                .hint_text("search")
                .desired_width(200.0),
        );
        if ui.button("Copy").clicked() {
            let all: Vec<&str> = run.console.iter().map(|l| l.text.as_str()).collect();
            ui.ctx().copy_text(all.join("\n"));
        }
        if run.dropped > 0 {
            ui.weak(format!("({} earlier lines dropped)", run.dropped));
        }
    });
    let needle = state.search.to_lowercase();
    let shown: Vec<&crate::app::run::ConsoleLine> = run
        .console
        .iter()
        .filter(|l| needle.is_empty() || l.text.to_lowercase().contains(&needle))
        .collect();
    let row = ui.text_style_height(&egui::TextStyle::Monospace);
    let err = ui.visuals().warn_fg_color;
    egui::ScrollArea::both()
        .id_salt("run_console")
        .auto_shrink(false)
        .stick_to_bottom(true)
        .show_rows(ui, row, shown.len(), |ui, range| {
            for l in &shown[range] {
                let text = egui::RichText::new(&l.text).monospace();
                let text = match l.stream {
                    Stream::Stderr => text.color(err),
                    Stream::Stdout => text,
                };
                ui.label(text);
            }
        });
}

/// The Run tab: launch a compile and follow its console.
impl crate::ui::tab::FeatureTab for RunPanelState {
    type Feature = RunState;

    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::RUN
    }

    fn title(&self) -> &'static str {
        "Run"
    }

    fn show(&mut self, run: &mut RunState, cx: &mut Cx, ui: &mut egui::Ui) {
        show(run, cx, self, ui);
    }
}
