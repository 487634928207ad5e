//! The monkey: thousands of seeded random clicks, drags, scrolls and keys over the real
//! window on five kinds of input (the bundled sample, a 20,000-node graph, the compile story,
//! an accuracy pair, a tree on a server over ssh). Nothing a user does may panic the window,
//! and afterwards it still answers (the File menu opens). The slowest frame is printed beside
//! the seed (speed is measured with `fxray bench`, never asserted by a test).
//!
//! `FXRAY_MONKEY_SEED` and `FXRAY_MONKEY_EVENTS` (events per case, 600 by default) replay a
//! run; each case prints its seed before it starts.

use crate::common::fixture;
use crate::common::ui::{WAIT, harness_sized, opened, settle};
use egui::{Event, Key, Modifiers, PointerButton, Pos2, Vec2};
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use std::path::Path;
use std::time::{Duration, Instant};

const SIZE: Vec2 = Vec2::new(1400.0, 900.0);
/// Keys a user presses: every shortcut fxray answers, and some it does not.
const KEYS: &[Key] = &[
    Key::F,
    Key::OpenBracket,
    Key::CloseBracket,
    Key::N,
    Key::C,
    Key::D,
    Key::S,
    Key::Z,
    Key::Escape,
    Key::Enter,
    Key::Backspace,
    Key::Plus,
    Key::Minus,
    Key::Slash,
    Key::ArrowUp,
    Key::ArrowDown,
    Key::ArrowLeft,
    Key::ArrowRight,
    Key::W,
    Key::A,
    Key::Tab,
    Key::Space,
    Key::F1,
    Key::Q,
    Key::Num1,
];

/// A small seeded generator (xorshift64*): the same seed gives the same run on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pos(&mut self) -> Pos2 {
        // Below the menu bar: its entries open native file dialogs and start compiles, which
        // the other tests drive on purpose.
        Pos2::new(
            self.below(SIZE.x as u64) as f32,
            24.0 + self.below(SIZE.y as u64 - 24) as f32,
        )
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What one case did: events sent, frames drawn, the slowest frame.
struct Run {
    events: u64,
    frames: u64,
    slowest: Duration,
}

fn button(
    h: &mut egui_kittest::Harness<'static, fxray::ui::Fxray>,
    pos: Pos2,
    button: PointerButton,
    pressed: bool,
) {
    h.event(Event::PointerButton {
        pos,
        button,
        pressed,
        modifiers: Modifiers::NONE,
    });
}

fn monkey(name: &str, app: App, seed: u64, events: u64) -> Run {
    let mut h = harness_sized(app, SIZE);
    settle(&mut h);
    let mut rng = Rng(seed | 1);
    let mut run = Run {
        events: 0,
        frames: 0,
        slowest: Duration::ZERO,
    };
    let step = |h: &mut egui_kittest::Harness<'static, fxray::ui::Fxray>, run: &mut Run| {
        let t = Instant::now();
        h.step();
        run.slowest = run.slowest.max(t.elapsed());
        run.frames += 1;
    };
    for i in 0..events {
        let p = rng.pos();
        match rng.below(10) {
            0..=3 => {
                h.event(Event::PointerMoved(p));
                let which = if rng.below(6) == 0 {
                    PointerButton::Secondary
                } else {
                    PointerButton::Primary
                };
                button(&mut h, p, which, true);
                button(&mut h, p, which, false);
            }
            4 | 5 => {
                let to = rng.pos();
                h.event(Event::PointerMoved(p));
                button(&mut h, p, PointerButton::Primary, true);
                step(&mut h, &mut run);
                h.event(Event::PointerMoved(p + (to - p) * 0.5));
                step(&mut h, &mut run);
                h.event(Event::PointerMoved(to));
                button(&mut h, to, PointerButton::Primary, false);
            }
            6 | 7 => {
                h.event(Event::PointerMoved(p));
                let d = (rng.below(400) as f32 - 200.0, rng.below(400) as f32 - 200.0);
                let modifiers = if rng.below(3) == 0 {
                    Modifiers::COMMAND
                } else {
                    Modifiers::NONE
                };
                h.event(Event::MouseWheel {
                    unit: egui::MouseWheelUnit::Point,
                    delta: Vec2::new(d.0, d.1),
                    modifiers,
                    phase: egui::TouchPhase::Move,
                });
            }
            _ => {
                let key = KEYS[rng.below(KEYS.len() as u64) as usize];
                let modifiers = match rng.below(8) {
                    0 => Modifiers::SHIFT,
                    1 => Modifiers::COMMAND,
                    _ => Modifiers::NONE,
                };
                h.key_press_modifiers(modifiers, key);
            }
        }
        run.events += 1;
        step(&mut h, &mut run);
        // Let background work (a pass being laid out, a tensor read) land now and then.
        if i % 50 == 49 {
            h.state_mut().app.wait_idle(WAIT);
        }
    }
    // Still answering: close whatever the monkey opened, then the File menu opens.
    h.key_press(Key::Escape);
    assert!(
        h.state_mut().app.wait_idle(WAIT),
        "{name}: background work hung"
    );
    h.run_steps(3);
    h.get_by_label("File").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Open folder…").is_some(),
        "{name}: the window no longer answers after {} events (seed {seed})",
        run.events
    );
    run
}

#[test]
fn thousands_of_random_inputs_never_break_the_window() {
    let seed = env_u64("FXRAY_MONKEY_SEED", 0x5eed_f00d);
    let per_case = env_u64("FXRAY_MONKEY_EVENTS", 600);
    let _alone = crate::common::sshd::in_process();
    let s = crate::common::sshd::shared();
    fxray::sources::remote::configure(s.settings(Path::new(env!("CARGO_BIN_EXE_fxray"))));
    let remote = fxray::sources::remote::resolve(Path::new(&s.url(&fixture("showcase"))))
        .expect("ssh address");
    let mut accuracy = opened(&fixture("accuracy/perturb/target_tensor"));
    crate::common::ui::compare_with_golden(
        &mut accuracy,
        &fixture("accuracy/perturb/golden_tensor"),
    );
    assert!(accuracy.wait_idle(WAIT));
    let cases: Vec<(&str, App)> = vec![
        ("sample", opened(&fxray::app::sample_path())),
        ("stress_20k", opened(&fixture("npugraph_ex/stress_20k"))),
        ("compile_story", opened(&fixture("compile_story"))),
        ("accuracy pair", accuracy),
        ("remote showcase", opened(&remote)),
    ];
    let mut total = 0;
    let count = cases.len() as u64;
    for (k, (name, app)) in cases.into_iter().enumerate() {
        let case_seed = seed.wrapping_add(k as u64);
        // Before the case: a panic inside it still names the seed that replays it.
        eprintln!("monkey {name}: seed {case_seed:#x}");
        let run = monkey(name, app, case_seed, per_case);
        total += run.events;
        eprintln!(
            "monkey {name}: {} events, {} frames, slowest frame {:.0} ms",
            run.events,
            run.frames,
            run.slowest.as_secs_f64() * 1e3
        );
    }
    assert_eq!(total, count * per_case);
}
