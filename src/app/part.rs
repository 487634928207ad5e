//! Features that own their state. A feature's state is a type kept in the app's store by its
//! type ([`Parts`]), created on first use and dropped when another tree opens unless it is the
//! user's ([`Feature::OF_THE_TREE`]): the app has no field for it. Its background work
//! answers with its own messages (`Apply<ItsState>`), routed back to it here, and its commands
//! are methods of its state that take a narrow context ([`Cx`]: the open workspace, the
//! navigation queue, a way to start work) instead of the whole app. A feature written this way
//! never names `App`, and a tab that shows it gets its state and that context
//! (`app.part::<T>()`).

use super::App;
use super::jobs::{Apply, Jobs, Outbox};
use super::nav::NavQueue;
use super::workspace::Workspace;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::marker::PhantomData;

/// A feature's state.
pub trait Feature: Default + 'static {
    /// Whether the state is about the open tree, and so dropped when another tree opens (a log
    /// of it on screen), or is the user's and kept (a log pasted by hand).
    const OF_THE_TREE: bool = true;
}

/// The features' states, one of each type (and whether it is about the open tree).
#[derive(Default)]
pub struct Parts(HashMap<TypeId, (bool, Box<dyn Any>)>);

impl Parts {
    /// The state of feature `T`, made on first use.
    pub fn get<T: Feature>(&mut self) -> &mut T {
        self.0
            .entry(TypeId::of::<T>())
            .or_insert_with(|| (T::OF_THE_TREE, Box::new(T::default())))
            .1
            .downcast_mut()
            .expect("a part is stored under its own type")
    }

    /// The state of feature `T` if it was ever used.
    pub fn peek<T: 'static>(&self) -> Option<&T> {
        self.0.get(&TypeId::of::<T>())?.1.downcast_ref()
    }

    fn peek_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.0.get_mut(&TypeId::of::<T>())?.1.downcast_mut()
    }

    /// Drops the states about the open tree (another one was opened).
    pub(super) fn forget_the_tree(&mut self) {
        self.0.retain(|_, (of_the_tree, _)| !*of_the_tree);
    }
}

/// What a feature may use of the app besides its own state.
pub struct Cx<'a> {
    /// The open tree, if any.
    pub workspace: Option<&'a Workspace>,
    /// What the user has on screen.
    pub selection: Selection<'a>,
    /// Requests to the views (show a tab, reveal a node).
    pub nav: &'a mut NavQueue,
    jobs: &'a Jobs<App>,
    /// The status bar's two lines: what went wrong, and what finished.
    said: Said<'a>,
}

/// The pass on screen, the node selected in it, and the other passes of its phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    pub pass: Option<&'a std::path::Path>,
    pub node: Option<&'a str>,
    /// Every pass of the phase on screen, in order (empty when none is).
    pub passes: &'a [super::phase::PassRef],
}

/// The app's status lines, lent to a feature's command.
struct Said<'a> {
    error: &'a mut Option<String>,
    notice: &'a mut Option<String>,
}

impl<'a> Cx<'a> {
    fn of(app: &'a mut App) -> (&'a mut Parts, Cx<'a>) {
        let phase = app.phase.as_ref();
        let cx = Cx {
            workspace: app.workspace.as_ref(),
            selection: Selection {
                pass: phase.and_then(|p| p.current_path()),
                node: phase.and_then(|p| p.selected.as_deref()),
                passes: phase.map_or(&[], |p| &p.passes),
            },
            nav: &mut app.nav,
            jobs: &app.jobs,
            said: Said {
                error: &mut app.error,
                notice: &mut app.notice,
            },
        };
        (&mut app.parts, cx)
    }

    /// Says in the status bar why a command could not be done (what to do instead).
    pub fn error(&mut self, why: impl Into<String>) {
        *self.said.error = Some(why.into());
    }

    /// Says in the status bar what finished.
    pub fn notice(&mut self, what: impl Into<String>) {
        *self.said.notice = Some(what.into());
    }

    /// Runs `work` on a thread of its own; what it sends is applied to feature `T`'s state when
    /// the message says it is still current there (a state dropped with its tree, or asked
    /// for something else since, says it is not).
    pub fn spawn<T: Feature>(&self, work: impl FnOnce(&PartOutbox<T>) + Send + 'static) {
        self.jobs.spawn(move |out| {
            work(&PartOutbox {
                out: out.clone(),
                _part: PhantomData,
            })
        });
    }

    /// Where work that is not a job sends feature `T`'s messages (a process's watcher thread
    /// reporting each line it prints).
    pub fn outbox<T: Feature>(&self) -> PartOutbox<T> {
        PartOutbox {
            out: self.jobs.outbox(),
            _part: PhantomData,
        }
    }
}

/// Where a feature's job sends its messages.
pub struct PartOutbox<T> {
    out: Outbox<App>,
    _part: PhantomData<fn(T)>,
}

impl<T> Clone for PartOutbox<T> {
    fn clone(&self) -> Self {
        PartOutbox {
            out: self.out.clone(),
            _part: PhantomData,
        }
    }
}

impl<T: Feature> PartOutbox<T> {
    pub fn send<M: Apply<T>>(&self, message: M) {
        self.out.send(ToPart {
            message,
            _part: PhantomData::<fn(T)>,
        });
    }

    /// Says `what` in the status bar, if `current` still holds of the feature's state when it
    /// arrives (what the user opened something for, said where they look first).
    pub fn notice(&self, what: String, current: impl Fn(&T) -> bool + Send + 'static) {
        self.out.send(Notice {
            what,
            current: Box::new(current),
        });
    }
}

/// A feature's line for the status bar, said while the feature still wants it said.
struct Notice<T> {
    what: String,
    current: Box<dyn Fn(&T) -> bool + Send>,
}

impl<T: Feature> Apply<App> for Notice<T> {
    fn is_current(&self, app: &App) -> bool {
        app.parts.peek::<T>().is_some_and(|s| (self.current)(s))
    }

    fn apply(self, app: &mut App) {
        app.notice = Some(self.what);
    }
}

/// A feature's message on its way through the app's one channel.
struct ToPart<T, M> {
    message: M,
    _part: PhantomData<fn(T)>,
}

impl<T: Feature, M: Apply<T>> Apply<App> for ToPart<T, M> {
    fn is_current(&self, app: &App) -> bool {
        app.parts
            .peek::<T>()
            .is_some_and(|s| self.message.is_current(s))
    }

    fn apply(self, app: &mut App) {
        self.message.apply(app.parts.get::<T>());
    }
}

impl App {
    /// Feature `T`'s state if it was ever used (for reading it where the app is not mutable).
    pub fn peek<T: 'static>(&self) -> Option<&T> {
        self.parts.peek::<T>()
    }

    /// Feature `T`'s state and the context its commands take.
    pub fn part<T: Feature>(&mut self) -> (&mut T, Cx<'_>) {
        let (parts, cx) = self.lend();
        (parts.get::<T>(), cx)
    }

    /// Feature `T`'s state if it was ever used (not made: a tree panel drawn every frame must
    /// not bring a feature to life), and the context.
    pub fn part_if_used<T: Feature>(&mut self) -> (Option<&mut T>, Cx<'_>) {
        let (parts, cx) = self.lend();
        (parts.peek_mut::<T>(), cx)
    }

    /// The features' states and, beside them, the rest a feature may use.
    fn lend(&mut self) -> (&mut Parts, Cx<'_>) {
        Cx::of(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Default)]
    struct Counter {
        asked: u32,
        got: Vec<u32>,
    }

    impl Feature for Counter {}

    /// An answer to request `.0`, carrying `.1`.
    struct Got(u32, u32);

    impl Apply<Counter> for Got {
        fn is_current(&self, s: &Counter) -> bool {
            self.0 == s.asked
        }
        fn apply(self, s: &mut Counter) {
            s.got.push(self.1);
        }
    }

    #[test]
    fn a_parts_work_comes_back_to_it_and_stale_answers_are_dropped() {
        let mut app = App::new();
        let (c, cx) = app.part::<Counter>();
        c.asked = 1;
        cx.spawn::<Counter>(|out| out.send(Got(1, 10)));
        // Computed for a request the feature no longer waits for.
        cx.spawn::<Counter>(|out| out.send(Got(0, 20)));
        assert!(app.wait_idle(Duration::from_secs(10)));
        assert_eq!(
            app.parts.peek::<Counter>().map(|c| c.got.clone()),
            Some(vec![10])
        );
        // Its state dropped with its tree before the answer came: the new state never asked.
        let (_, cx) = app.part::<Counter>();
        cx.spawn::<Counter>(|out| {
            std::thread::sleep(Duration::from_millis(50));
            out.send(Got(1, 30));
        });
        app.parts.forget_the_tree();
        app.part::<Counter>();
        assert!(app.wait_idle(Duration::from_secs(10)));
        assert_eq!(
            app.parts.peek::<Counter>().map(|c| c.got.clone()),
            Some(vec![])
        );
    }

    /// The tree panel asks every frame: asking must not make a feature that was never used.
    #[test]
    fn looking_at_a_feature_not_yet_used_does_not_make_it() {
        let mut app = App::new();
        assert!(app.part_if_used::<Counter>().0.is_none());
        assert!(app.peek::<Counter>().is_none());
        app.part::<Counter>().0.asked = 3;
        assert_eq!(app.part_if_used::<Counter>().0.map(|c| c.asked), Some(3));
    }

    #[derive(Default)]
    struct Pasted(u32);

    impl Feature for Pasted {
        const OF_THE_TREE: bool = false;
    }

    #[test]
    fn opening_a_tree_drops_what_was_about_the_last_one_and_keeps_the_users() {
        let mut app = App::new();
        app.part::<Counter>().0.asked = 7;
        app.part::<Pasted>().0.0 = 7;
        app.open(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/showcase"));
        assert!(app.wait_idle(Duration::from_secs(60)));
        assert!(app.workspace.is_some());
        assert_eq!(app.part::<Counter>().0.asked, 0);
        assert_eq!(app.part::<Pasted>().0.0, 7);
    }
}
