//! The terminal UI: `tritontui A B`.
//!
//! A synchronous loop: it waits for a key, a background result (loading,
//! highlighting) or a tick, feeds it to [`App::update`], performs the
//! effects that come back, and redraws with [`render`], which never
//! mutates.

pub mod action;
pub mod app;
pub mod comparison;
pub mod highlight;
pub mod keys;
pub mod layout;
pub mod load;
pub mod panes;
pub mod ranks;
pub mod search;
pub mod terminal;
pub mod theme;
mod timings;

use app::{Action, App, Effect, action_for_event};
use highlight::{Highlighted, SourceKey};
use load::{Inputs, LoadEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};
use theme::Theme;
use timings::Timings;
use tritontui_engine::analysis::Options;

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let Some(comparison) = &app.comparison else {
        panes::loading::render(app, frame, area);
        return;
    };
    let areas = app.areas();
    panes::header::render(app, comparison, frame, areas.header);
    panes::launches::render(app, comparison, frame, areas.list);
    if let Some(detail) = areas.detail {
        panes::detail::render(app, comparison, frame, detail);
    }
    if let Some(source) = areas.source {
        panes::source::render(app, comparison, frame, source);
    }
    panes::status::render(app, frame, areas.status);
    if app.search.is_some() {
        panes::search::render(app, comparison, frame, area);
    }
    if app.attach.is_some() {
        panes::attach::render(app, frame, area);
    }
    if app.rank_picker.is_some() {
        panes::ranks::render(app, comparison, frame, area);
    }
    if app.numerics.is_some() {
        panes::numerics::render(app, comparison, frame, area);
    }
    if app.show_help {
        panes::help::render(app, frame, area);
    }
}

/// A background result.
enum Message {
    Load(LoadEvent),
    Highlighted(SourceKey, Highlighted),
    Action(Action),
}

impl From<LoadEvent> for Action {
    fn from(event: LoadEvent) -> Action {
        match event {
            LoadEvent::Progress(p) => Action::Loading(p),
            LoadEvent::Done(Ok(comparison)) => Action::Loaded(comparison),
            LoadEvent::Done(Err(error)) => Action::LoadFailed(error.to_string()),
        }
    }
}

/// Opens the TUI on `inputs` and runs it until the user quits. Returns the
/// one-line error if the traces could not be loaded.
pub fn run(inputs: Inputs, options: Options) -> anyhow::Result<()> {
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    load::spawn(inputs, options, tx.clone(), Message::Load);
    let workers = Workers {
        highlighter: highlight::spawn(tx.clone(), Message::Highlighted),
        results: tx,
        options,
    };
    let mut screen = terminal::enter()?;
    let size = screen.size()?;
    let mut app = App::new(Theme::from_env(), Rect::new(0, 0, size.width, size.height));
    let mut timings = Timings::from_env(start);
    let outcome = event_loop(&mut screen, &mut app, &rx, &workers, &mut timings);
    drop(screen);
    outcome
}

/// How long to wait for input before looking at background results.
const TICK: Duration = Duration::from_millis(30);

fn event_loop(
    screen: &mut terminal::Screen,
    app: &mut App,
    rx: &Receiver<Message>,
    workers: &Workers,
    timings: &mut Timings,
) -> anyhow::Result<()> {
    let mut dirty = true;
    let mut key_at: Option<Instant> = None;
    loop {
        if dirty {
            screen.draw(|f| render(app, f))?;
            timings.frame(app.comparison.is_some());
            panic_for_tests(app);
            if let Some(at) = key_at.take() {
                timings.key(at);
            }
            dirty = false;
        }
        let mut actions = Vec::new();
        if crossterm::event::poll(TICK)? {
            key_at = Some(Instant::now());
            // Apply every event already queued, then draw once. Each is
            // mapped after the previous one is applied: what a key means
            // depends on the state (in the search box, letters are text).
            loop {
                if let Some(action) = action_for_event(app, crossterm::event::read()?) {
                    dirty = true;
                    if let Some(done) = perform(app.update(action), screen, workers)? {
                        return done.into();
                    }
                }
                if !crossterm::event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
        while let Ok(message) = rx.try_recv() {
            actions.push(match message {
                Message::Load(event) => event.into(),
                Message::Highlighted(key, lines) => Action::Highlighted(key, lines),
                Message::Action(action) => action,
            });
        }
        for action in actions {
            dirty = true;
            if let Some(done) = perform(app.update(action), screen, workers)? {
                return done.into();
            }
        }
    }
}

/// In debug builds, `TRITONTUI_DEBUG_PANIC=1` panics once the comparison is
/// on screen, so tests can check that a panic restores the terminal.
#[allow(clippy::panic)]
fn panic_for_tests(app: &App) {
    if cfg!(debug_assertions)
        && app.comparison.is_some()
        && std::env::var_os("TRITONTUI_DEBUG_PANIC").is_some()
    {
        panic!("TRITONTUI_DEBUG_PANIC is set");
    }
}

/// Why the loop ended.
enum Done {
    Quit,
    Failed(String),
}

impl From<Done> for anyhow::Result<()> {
    fn from(done: Done) -> Self {
        match done {
            Done::Quit => Ok(()),
            Done::Failed(message) => Err(anyhow::anyhow!(message)),
        }
    }
}

/// Performs effects; returns why to stop, if one says so.
fn perform(
    effects: Vec<Effect>,
    screen: &mut terminal::Screen,
    workers: &Workers,
) -> std::io::Result<Option<Done>> {
    for effect in effects {
        match effect {
            Effect::Quit => return Ok(Some(Done::Quit)),
            Effect::Fail(message) => return Ok(Some(Done::Failed(message))),
            Effect::ListTargets(comparison) => {
                let _ = workers
                    .results
                    .send(Message::Action(Action::Targets(comparison.targets())));
            }
            Effect::Debug(target) => {
                let mut command = crate::attach::debugger_command(&target);
                let program = command.get_program().to_string_lossy().into_owned();
                let status = screen.suspended(|| command.status())?;
                let message = match status {
                    Ok(status) => format!("{program} exited ({status}); back in tritontui"),
                    Err(e) => {
                        format!("{program}: cannot run ({e}); install it or set TRITONTUI_DEBUGGER")
                    }
                };
                let _ = workers
                    .results
                    .send(Message::Action(Action::DebuggerDone(message)));
            }
            Effect::Load(inputs) => {
                load::spawn(
                    inputs,
                    workers.options,
                    workers.results.clone(),
                    Message::Load,
                );
            }
            Effect::Highlight(request) => {
                let _ = workers.highlighter.send(request);
            }
            Effect::FindProducer { comparison, row } => {
                let results = workers.results.clone();
                std::thread::spawn(move || {
                    let (target, message) = app::producer_of_first_input(&comparison, row);
                    let _ = results.send(Message::Action(Action::ProducerFound {
                        from: row,
                        target,
                        message,
                    }));
                });
            }
        }
    }
    Ok(None)
}

/// Where effects send background work.
struct Workers {
    highlighter: Sender<highlight::Request>,
    results: Sender<Message>,
    /// How loads compare (another rank of the same runs).
    options: Options,
}
