//! The TUI built from fixture traces, driven by keys, drawn on a
//! `TestBackend`: snapshots of the main screens and checks of the colours
//! and of what each key does.

// Helpers fail the test by panicking, as assertions do.
#![allow(clippy::panic)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use std::path::Path;
use syntect::highlighting::ThemeSet;
use syntect::parsing::SyntaxSet;
use tritontui::loader::{DEMO_A, DEMO_B};
use tritontui::tui::app::{Action, App, Effect, Pane, producer_of_first_input};
use tritontui::tui::comparison::Comparison;
use tritontui::tui::load::{self, Inputs, LoadEvent, Progress};
use tritontui::tui::theme::Theme;
use tritontui::tui::{highlight, render};
use tritontui_engine::Options;
use tritontui_synth::{Injection, Spec, generate};
use tritontui_trace::Trace;

/// The synthetic pair in tests/fixtures: 48 launches, the index_add at #19
/// of both runs is the root cause, everything after it propagates.
const FIXTURE_A: &[u8] = include_bytes!("../../tests/fixtures/synthetic/run0.msgpack");
const FIXTURE_B: &[u8] = include_bytes!("../../tests/fixtures/synthetic/run1.msgpack");

fn demo_comparison() -> Comparison {
    let a =
        Trace::from_bytes(Path::new("(built-in demo) run0.msgpack"), FIXTURE_A).expect("fixture A");
    let b =
        Trace::from_bytes(Path::new("(built-in demo) run1.msgpack"), FIXTURE_B).expect("fixture B");
    Comparison::pair(a, b, Options::default())
}

#[test]
fn the_bundled_demo_is_a_real_gpu_recording_with_one_root_cause() {
    let a = Trace::from_bytes(Path::new("run0"), DEMO_A).expect("demo A");
    let b = Trace::from_bytes(Path::new("run1"), DEMO_B).expect("demo B");
    assert!(
        a.header.devices[0].contains("NVIDIA"),
        "{:?}",
        a.header.devices
    );
    let comparison = Comparison::pair(a, b, Options::default());
    assert_eq!(comparison.roots.len(), 1);
    let root = &comparison.divergences()[comparison.roots[0]];
    assert_eq!(root.kind, tritontui_engine::Kind::NondeterministicKernel);
    assert_eq!(
        comparison
            .a
            .kernel_of(&comparison.a.launches[root.a.expect("in A") as usize])
            .name,
        "triton_poi_fused_index_add_zeros_1"
    );
}

fn synthetic_comparison(launches: usize, injections: &[Injection]) -> Comparison {
    let spec = Spec {
        launches,
        injections: injections.to_vec(),
        autotune: false,
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    generate(&spec, &mut a, &mut b).expect("generate");
    let a = Trace::from_bytes(Path::new("a.msgpack"), &a).expect("a");
    let b = Trace::from_bytes(Path::new("b.msgpack"), &b).expect("b");
    Comparison::pair(a, b, Options::default())
}

/// An app showing `comparison` in a `width` × `height` terminal.
struct Harness {
    app: App,
    terminal: Terminal<TestBackend>,
    syntaxes: SyntaxSet,
    themes: ThemeSet,
    /// Targets a debugger was started on.
    debugged: Vec<tritontui::attach::Target>,
}

impl Harness {
    fn new(comparison: Comparison, width: u16, height: u16, color: bool) -> Harness {
        let mut h = Harness {
            app: App::new(Theme { color }, Rect::new(0, 0, width, height)),
            terminal: Terminal::new(TestBackend::new(width, height)).expect("terminal"),
            syntaxes: SyntaxSet::load_defaults_newlines(),
            themes: ThemeSet::load_defaults(),
            debugged: Vec::new(),
        };
        h.act(Action::Loaded(Box::new(comparison)));
        h
    }

    /// Applies an action and performs its effects, as the event loop does.
    fn act(&mut self, action: Action) -> bool {
        let mut quit = false;
        for effect in self.app.update(action) {
            match effect {
                Effect::Highlight(request) => {
                    let done = highlight::highlight(&self.syntaxes, &self.themes, &request);
                    self.act(Action::Highlighted(request.key, done));
                }
                Effect::FindProducer { comparison, row } => {
                    let (target, message) = producer_of_first_input(&comparison, row);
                    self.act(Action::ProducerFound {
                        from: row,
                        target,
                        message,
                    });
                }
                Effect::ListTargets(comparison) => {
                    self.act(Action::Targets(comparison.targets()));
                }
                Effect::Debug(target) => self.debugged.push(target),
                Effect::Load(inputs) => self.load(inputs),
                Effect::Quit | Effect::Fail(_) => quit = true,
            }
        }
        quit
    }

    /// Loads `inputs` as the event loop does, on the loader's thread,
    /// applying its progress and result.
    fn load(&mut self, inputs: Inputs) {
        let (tx, rx) = std::sync::mpsc::channel();
        load::spawn(inputs, Options::default(), tx, |event| event);
        for event in rx {
            match event {
                LoadEvent::Progress(progress) => self.act(Action::Loading(progress)),
                LoadEvent::Done(Ok(comparison)) => self.act(Action::Loaded(comparison)),
                LoadEvent::Done(Err(e)) => self.act(Action::LoadFailed(e.to_string())),
            };
        }
    }

    fn key(&mut self, code: KeyCode) -> bool {
        match self
            .app
            .action_for_key(KeyEvent::new(code, KeyModifiers::NONE))
        {
            Some(action) => self.act(action),
            None => false,
        }
    }

    fn keys(&mut self, keys: &str) {
        for c in keys.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn draw(&mut self) -> &Buffer {
        self.terminal.draw(|f| render(&self.app, f)).expect("draw");
        self.terminal.backend().buffer()
    }

    fn screen(&mut self) -> String {
        self.draw();
        self.terminal.backend().to_string()
    }
}

/// The screen row whose text contains `needle`.
fn row_with(buffer: &Buffer, needle: &str) -> u16 {
    (0..buffer.area.height)
        .find(|&y| {
            let line: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect();
            line.contains(needle)
        })
        .unwrap_or_else(|| panic!("no row contains {needle:?}"))
}

/// The column where `needle` starts in row `y`.
fn column_of(buffer: &Buffer, y: u16, needle: &str) -> u16 {
    let line: Vec<&str> = (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect();
    let text = line.concat();
    let byte = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {text:?}"));
    text[..byte].chars().count() as u16
}

#[test]
fn opens_on_the_first_divergence() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    assert_snapshot!("first_divergence_100x30", h.screen());
    let buffer = h.draw().clone();
    // The selected row is the first divergence, drawn reversed.
    let y = row_with(&buffer, "✗");
    assert!(buffer[(0, y)].modifier.contains(Modifier::REVERSED));
    assert!(
        (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect::<String>()
            .contains("#19 triton_poi_fused_index_add_5")
    );
    let glyph = column_of(&buffer, y, "✗");
    assert_eq!(buffer[(glyph, y)].fg, Color::Red);
    // Propagated rows below it are magenta, equal rows above green.
    let below = y + 1;
    let arrow = column_of(&buffer, below, "↓");
    assert_eq!(buffer[(arrow, below)].fg, Color::Magenta);
    assert!(!buffer[(0, below)].modifier.contains(Modifier::REVERSED));
    let equal = column_of(&buffer, y - 1, "=");
    assert_eq!(buffer[(equal, y - 1)].fg, Color::Green);
}

#[test]
fn fits_an_80_by_24_terminal() {
    let mut h = Harness::new(demo_comparison(), 80, 24, true);
    assert_snapshot!("first_divergence_80x24", h.screen());
    // The hashes that differ after the launch are red in the detail pane.
    let buffer = h.draw().clone();
    let y = row_with(&buffer, "out_ptr0    out");
    let text: String = (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect();
    // out_ptr0 out float32 [8, 512, 1024] <A before> <A after> ...
    let after_a = text.split_whitespace().nth(7).expect("A after");
    let x = column_of(&buffer, y, after_a);
    assert_eq!(buffer[(x, y)].fg, Color::Red, "{text}");
    let before_a = text.split_whitespace().nth(6).expect("A before");
    let x = column_of(&buffer, y, before_a);
    assert_ne!(
        buffer[(x, y)].fg,
        Color::Red,
        "equal hashes are not red: {text}"
    );
}

#[test]
fn the_detail_of_a_propagated_divergence_names_its_producer() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    h.keys("n");
    assert_snapshot!("detail_propagated", h.screen());
    h.keys("p");
    assert_eq!(
        h.app.selected,
        h.app.comparison.as_ref().expect("comparison").divergences()[0].row
    );
    assert!(
        h.app
            .message
            .as_deref()
            .unwrap_or("")
            .contains("written by launch #19")
    );
}

#[test]
fn the_source_pane_is_highlighted_and_marks_the_atomic() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    h.keys("s");
    assert_eq!(h.app.focus, Pane::Source);
    assert_snapshot!("source", h.screen());
    let buffer = h.draw().clone();
    let y = row_with(&buffer, "tl.atomic_add(");
    let mark = column_of(&buffer, y, "!");
    assert_eq!(buffer[(mark, y)].fg, Color::Red);
    // syntect coloured the code in several colours.
    let start = column_of(&buffer, y, "tl.atomic_add(");
    let colours: std::collections::HashSet<Color> = (start..buffer.area.width)
        .map(|x| buffer[(x, y)].fg)
        .filter(|c| matches!(c, Color::Rgb(..)))
        .collect();
    assert!(colours.len() >= 2, "{colours:?}");
    // Wide terminals show detail and source side by side.
    let mut wide = Harness::new(demo_comparison(), 160, 40, true);
    wide.keys("s");
    let screen = wide.screen();
    assert!(screen.contains(" detail ") && screen.contains(" source "));
}

#[test]
fn search_narrows_as_you_type_and_enter_jumps() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    h.keys("/idxad");
    assert_snapshot!("search", h.screen());
    h.key(KeyCode::Enter);
    assert!(h.app.search.is_none());
    let comparison = h.app.comparison.as_ref().expect("comparison");
    // The selection was on launch 19, the second index_add; Enter goes to the third.
    let a = comparison.rows()[h.app.selected].a().expect("in A");
    assert_eq!(comparison.a.launches[a as usize].seq, 31);
    assert_eq!(
        h.app.message.as_deref(),
        Some("triton_poi_fused_index_add_5: launch 3 of 4")
    );
    // Esc closes the box without moving.
    h.keys("/sum");
    h.key(KeyCode::Esc);
    assert!(h.app.search.is_none());
    assert_eq!(session_seq(&h), 31);
}

fn session_seq(h: &Harness) -> u64 {
    let comparison = h.app.comparison.as_ref().expect("comparison");
    let a = comparison.rows()[h.app.selected].a().expect("in A");
    comparison.a.launches[a as usize].seq
}

#[test]
fn the_attach_list_shows_the_recorded_processes_and_refuses_an_ended_one() {
    let open = |name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets/demo")
            .join(name);
        Trace::open(&path).expect("the bundled demo")
    };
    let comparison = Comparison::pair(
        open("run0.msgpack"),
        open("run1.msgpack"),
        Options::default(),
    );
    let mut h = Harness::new(comparison, 140, 40, false);
    h.key(KeyCode::Char('a'));
    let screen = h.screen();
    assert!(screen.contains("attach a debugger"), "{screen}");
    let comparison = h.app.comparison.clone().expect("comparison");
    let main = comparison
        .a
        .processes
        .iter()
        .find(|p| p.role == "main")
        .expect("the demo recorded its main process");
    assert!(screen.contains(&main.pid.to_string()), "{screen}");
    // Recorded on another machine (the demo has no boot id; its host name
    // may be ours), so it is not running here either way.
    assert!(
        screen.contains("ended") || screen.contains("another machine"),
        "{screen}"
    );
    h.key(KeyCode::Enter);
    assert!(
        h.debugged.is_empty(),
        "a debugger was started on a process not here"
    );
    let status = h.app.message.clone().unwrap_or_default();
    assert!(status.contains("--break"), "{status}");
    // Esc closes the list and leaves the app running.
    assert!(!h.key(KeyCode::Esc));
    assert!(h.app.attach.is_none());
}

#[test]
fn help_lists_every_key() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    h.keys("?");
    let screen = h.screen();
    for binding in tritontui::tui::keys::BINDINGS {
        let keys: Vec<String> = binding
            .keys
            .iter()
            .map(|&k| tritontui::tui::keys::name(k))
            .collect();
        let line = format!("{}  {}", keys.join(" "), binding.help);
        assert!(screen.contains(&line), "help lacks `{line}`:\n{screen}");
    }
    assert_snapshot!("help", screen);
    h.key(KeyCode::Esc);
    assert!(!h.app.show_help);
    assert!(!h.screen().contains(" keys "));
}

#[test]
fn divergence_keys_walk_the_divergences_and_root_causes() {
    let comparison = synthetic_comparison(
        300,
        &[
            Injection::Insert { at: 10, count: 2 },
            Injection::Uninitialized { at: 200 },
        ],
    );
    let rows: Vec<usize> = comparison.divergences().iter().map(|d| d.row).collect();
    let roots: Vec<usize> = comparison.roots.iter().map(|&d| rows[d]).collect();
    let mut h = Harness::new(comparison, 100, 30, true);
    assert_eq!(h.app.selected, rows[0]);
    h.keys("n");
    assert_eq!(h.app.selected, rows[1]);
    h.keys("N");
    assert_eq!(h.app.selected, rows[0]);
    h.keys("r");
    assert_eq!(h.app.selected, roots[1]);
    h.keys("r");
    assert_eq!(h.app.selected, roots[0], "r wraps to the first root cause");
    h.keys("G");
    assert_eq!(h.app.selected, 301);
    h.keys("f");
    assert_eq!(h.app.selected, rows[0]);
    h.keys("g");
    assert_eq!(h.app.selected, 0);
    h.key(KeyCode::PageDown);
    let page = h.app.selected;
    assert!(page > 5, "a page moves several rows, moved {page}");
    h.keys("jjk");
    assert_eq!(h.app.selected, page + 1);
    // The selection stays on screen.
    let screen = h.screen();
    let label = format!("{}/302", page + 2);
    assert!(screen.contains(&label), "{label} not in\n{screen}");
}

#[test]
fn the_mouse_wheel_scrolls_and_a_click_selects() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    let before = h.app.selected;
    let list = h.app.areas().list;
    let wheel = |kind| MouseEvent {
        kind,
        column: 10,
        row: list.y + 3,
        modifiers: KeyModifiers::NONE,
    };
    h.act(Action::Mouse(wheel(MouseEventKind::ScrollDown)));
    assert_eq!(h.app.selected, before + 3);
    let buffer = h.draw().clone();
    let y = row_with(&buffer, "#22 ");
    h.act(Action::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 20,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(session_seq(&h), 22);
}

#[test]
fn resizing_keeps_the_selection_visible() {
    let mut h = Harness::new(
        synthetic_comparison(500, &[Injection::Nondeterministic { at: 400 }]),
        100,
        40,
        true,
    );
    assert!(h.screen().contains("#400 "));
    h.act(Action::Resize(80, 12));
    h.terminal.backend_mut().resize(80, 12);
    let screen = h.screen();
    assert!(screen.contains("#400 "), "{screen}");
}

#[test]
fn no_color_draws_without_colours() {
    let mut h = Harness::new(demo_comparison(), 100, 30, false);
    h.keys("s");
    let buffer = h.draw().clone();
    for cell in buffer.content() {
        assert_eq!(
            cell.fg,
            Color::Reset,
            "a coloured cell with NO_COLOR: {cell:?}"
        );
        assert_eq!(cell.bg, Color::Reset);
    }
    // The selection is still visible.
    let y = row_with(&buffer, "✗");
    assert!(buffer[(0, y)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn one_trace_is_browsed_without_a_verdict() {
    let comparison = demo_comparison();
    let single = Comparison::single(comparison.a);
    let mut h = Harness::new(single, 100, 30, true);
    assert_snapshot!("single_trace", h.screen());
    h.keys("n");
    assert_eq!(
        h.app.message.as_deref(),
        Some("one trace: nothing to compare")
    );
    // p still finds the producer of the first input, on demand.
    h.keys("G");
    h.keys("p");
    assert!(
        h.app
            .message
            .as_deref()
            .unwrap_or("")
            .contains("in_ptr0: written by launch #48"),
        "{:?}",
        h.app.message
    );
}

#[test]
fn a_producer_found_after_the_user_moved_on_does_not_move_the_selection() {
    let mut h = Harness::new(demo_comparison(), 100, 30, true);
    // Row 5 reads what row 4 wrote, and neither diverges.
    h.keys("gjjjjj");
    let effects = h.app.update(Action::Producer);
    assert!(
        h.app
            .message
            .as_deref()
            .unwrap_or("")
            .starts_with("finding the producer")
    );
    let [Effect::FindProducer { comparison, row }] = &effects[..] else {
        panic!("expected a producer search, got {effects:?}")
    };
    let (target, message) = producer_of_first_input(comparison, *row);
    assert_eq!(target, Some(4));
    h.keys("jj");
    let before = h.app.selected;
    h.act(Action::ProducerFound {
        from: *row,
        target,
        message,
    });
    assert_eq!(h.app.selected, before);
}

#[test]
fn loading_shows_progress() {
    let mut app = App::new(Theme { color: true }, Rect::new(0, 0, 80, 24));
    app.update(Action::Loading(Progress::Reading {
        file: 0,
        name: "run0.msgpack".into(),
        done: 60,
        total: 100,
    }));
    app.update(Action::Loading(Progress::Reading {
        file: 1,
        name: "run1.msgpack".into(),
        done: 25,
        total: 100,
    }));
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    terminal.draw(|f| render(&app, f)).expect("draw");
    assert_snapshot!("loading", terminal.backend().to_string());
    // Keys before the comparison arrives do nothing, and q still quits.
    assert!(app.update(Action::Move(1)).is_empty());
    assert!(matches!(app.update(Action::Quit)[..], [Effect::Quit]));
}

#[test]
fn q_and_esc_quit() {
    let mut h = Harness::new(demo_comparison(), 80, 24, true);
    assert!(h.key(KeyCode::Char('q')));
    let mut h = Harness::new(demo_comparison(), 80, 24, true);
    h.keys("?");
    assert!(!h.key(KeyCode::Esc), "the first Esc closes the help");
    assert!(h.key(KeyCode::Esc));
}

/// The corpus pair `name` (tests/corpus), compared.
fn corpus_pair(name: &str) -> Comparison {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(name);
    let a = Trace::open(&corpus.join("a.msgpack")).expect("corpus A");
    let b = Trace::open(&corpus.join("b.msgpack")).expect("corpus B");
    Comparison::pair(a, b, Options::default())
}

/// A pair recorded with row hashes: the detail pane of the first
/// divergence shows which rows of its input differ, as a strip.
#[test]
fn the_detail_pane_shows_which_rows_differ() {
    let mut h = Harness::new(corpus_pair("row_bump"), 200, 40, false);
    let screen = h.screen();
    let strip = screen
        .lines()
        .find(|l| l.contains("rows differing: 1 of 16"))
        .unwrap_or_default();
    assert!(strip.contains("·····█··········"), "{screen}");
}

/// One request alone against it in a batch: the header names the first
/// batch-variant launch.
#[test]
fn the_header_names_the_batch_variant_launch() {
    let mut h = Harness::new(corpus_pair("batch_row0"), 300, 40, false);
    let screen = h.screen();
    assert!(
        screen.contains("BATCH-VARIANT  first batch-variant launch: A#5 B#5 `aten::addmm.out`"),
        "{screen}"
    );
}

/// A real benign pair of the corpus: an atomic index_add whose differing
/// sums a saturated tanh absorbs.
#[test]
fn a_benign_pair_says_so_and_marks_where_the_difference_is_absorbed() {
    let mut h = Harness::new(corpus_pair("index_add_saturated"), 120, 30, false);
    let screen = h.screen();
    assert!(
        screen.contains("BENIGN  first A#1 B#1 cpp_fused_index_add_zeros_0"),
        "{screen}"
    );
    let absorbing = screen
        .lines()
        .find(|l| l.contains("#7 cpp_fused_sum_tanh_1"))
        .unwrap_or_default();
    assert!(absorbing.contains(" ≈ "), "{absorbing}");
    assert!(
        screen.contains("root cause · absorbed by A#7 cpp_fused_sum_tanh_1"),
        "{screen}"
    );
}

/// A real pair of two programs: run B compiled with another config set
/// after recording began.
#[test]
fn two_programs_say_so_in_the_header_and_the_config_that_made_the_kernel() {
    let mut h = Harness::new(corpus_pair("config_after_start"), 160, 40, false);
    let screen = h.screen();
    assert!(
        screen.contains(
            "DIFFERENT PROGRAMS  kernels of one name from other sources: 1 (`cpp_fused_gelu_0`)"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("inductor.cpp.simdlen: (unset) | 1"),
        "{screen}"
    );
}

/// Eager against compiled, recorded with samples: equivalent, and the
/// header says how far apart the numerics are.
#[test]
fn two_equivalent_programs_say_so_with_their_numerics() {
    let mut h = Harness::new(corpus_pair("eager_against_compiled"), 200, 40, false);
    let screen = h.screen();
    assert!(screen.contains("NUMERICS  "), "{screen}");
    assert!(screen.contains("EQUIVALENT  first A#0 B#0"), "{screen}");
}

/// A planted rounding: the header names the ops only run B's kernel
/// computes, in the module that rounds, then the kernel past its bound.
#[test]
fn a_planted_precision_bug_is_named_in_the_header() {
    let mut h = Harness::new(corpus_pair("planted_rounding"), 400, 40, false);
    let screen = h.screen();
    assert!(
        screen.contains(
            "ACCURACY  only B's kernel computes `aten.mul`, `aten.round`, `aten.div` in `1` · B#17 `cpp_fused_add_div_gelu_mul_native_layer_norm_native_layer_norm_backward_round_2` (out_ptr4) in `2.norm` (fused with ops of `0`, `1`): relative error 5.7e-4, past its bound 3.1e-5"
        ),
        "{screen}"
    );
}

/// `e` lists the aligned points, the first past its bound highlighted;
/// Enter opens run B's launch that wrote it.
#[test]
fn the_numerics_overlay_lists_the_points_and_opens_the_one_past_its_bound() {
    let mut h = Harness::new(corpus_pair("planted_rounding"), 200, 40, false);
    h.keys("e");
    let screen = h.screen();
    assert!(screen.contains("numerics: aligned points"), "{screen}");
    let marked = screen
        .lines()
        .find(|l| l.contains("✗ A#17"))
        .unwrap_or_default();
    assert!(
        marked.contains("B#17")
            && marked.contains(" 2.norm ")
            && marked.contains("cpp_fused_add_div_gelu_mul"),
        "{screen}"
    );
    // Three points on (the rounding kernel's two other outputs that a later
    // launch reads), B's next matmul.
    h.keys("jjj");
    assert!(!h.key(KeyCode::Enter));
    let screen = h.screen();
    assert!(!screen.contains("numerics: aligned points"), "{screen}");
    let detail = screen
        .lines()
        .skip_while(|l| !l.contains(" detail "))
        .nth(1)
        .unwrap_or_default();
    assert!(detail.contains("aten::addmm.out  A#19  B#19"), "{screen}");
    // A pair recorded without samples says why there is nothing to show.
    let mut h = Harness::new(corpus_pair("config_code"), 200, 40, false);
    h.keys("e");
    assert!(
        h.screen().contains("recorded with samples"),
        "{}",
        h.screen()
    );
}

#[test]
fn two_runs_of_ranks_open_at_the_earliest_cause_and_the_picker_opens_another_rank() {
    // Three ranks; rank 1 runs a nondeterministic kernel in run B.
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = Spec {
        launches: 60,
        injections: vec![Injection::Nondeterministic { at: 30 }],
        autotune: false,
    };
    let ranks = tritontui_synth::RankSpec {
        ranks: 3,
        fault_rank: 1,
        corrupt_collective: None,
    };
    tritontui_synth::generate_ranks(&spec, &ranks, |is_b, rank| {
        let run = dir.path().join(if is_b { "run1" } else { "run0" });
        std::fs::create_dir_all(&run)?;
        std::fs::File::create(run.join(format!("rank{rank}.msgpack")))
    })
    .expect("synth");
    let mut h = Harness::new(synthetic_comparison(10, &[]), 120, 30, false);
    h.load(Inputs::Ranks(
        dir.path().join("run0"),
        dir.path().join("run1"),
    ));
    let screen = h.screen();
    assert!(
        screen.contains("rank 1 of 3 (earliest cause) DIVERGENT"),
        "{screen}"
    );
    assert!(
        screen.contains("rank 1: the earliest cause across ranks"),
        "{screen}"
    );

    h.keys("R");
    let picker = h.screen();
    assert!(picker.contains("• 1     ✗ divergent"), "{picker}");
    h.key(KeyCode::Down);
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(
        screen.contains("rank 2 of 3 (earliest cause: rank 1)"),
        "{screen}"
    );
    assert!(screen.contains("c10d::allreduce_"), "{screen}");
    assert!(h.app.rank_picker.is_none());
}

#[test]
fn r_on_one_pair_of_traces_says_there_are_no_ranks() {
    let mut h = Harness::new(demo_comparison(), 120, 30, false);
    h.keys("R");
    assert!(h.app.rank_picker.is_none());
    assert!(h.screen().contains("no ranks to pick"), "{}", h.screen());
}
