//! The TUI's state and the only place it changes: [`App::update`].

pub use super::action::{Action, Effect};

use super::comparison::Comparison;
use super::highlight::{Highlighted, Request, SourceKey};
use super::layout::{Areas, areas, list_rows};
use super::load::{Inputs, Progress};
use super::search::Search;
use super::theme::Theme;
use crate::attach::Target;
use crate::words::{first_input_origin, origin_words};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tritontui_engine::TracePair;
use tritontui_engine::align::Row;
use tritontui_engine::producer::Origin;
use tritontui_trace::Trace;

/// A pane that can have the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The side-by-side launch list.
    List,
    /// The selected launch's arguments and verdict.
    Detail,
    /// The selected kernel's source.
    Source,
}

/// The app state.
pub struct App {
    /// The loaded comparison; `None` while loading.
    pub comparison: Option<Arc<Comparison>>,
    /// Latest progress of each file, and whether analysis has started.
    pub progress: [Option<Progress>; 2],
    /// Aligning and classifying.
    pub analysing: bool,
    /// Selected row.
    pub selected: usize,
    /// First row shown in the list.
    pub offset: usize,
    /// The focused pane.
    pub focus: Pane,
    /// Whether the source pane is shown.
    pub show_source: bool,
    /// Whether the help overlay is shown.
    pub show_help: bool,
    /// The open search box.
    pub search: Option<Search>,
    /// The open attach list: targets and the highlighted one.
    pub attach: Option<(Vec<Target>, usize)>,
    /// The open rank picker: the highlighted rank's place in the list.
    pub rank_picker: Option<usize>,
    /// The open numerics overlay: the highlighted aligned point.
    pub numerics: Option<usize>,
    /// Ranks compared so far while two runs of several ranks load, of all.
    pub ranks_progress: Option<(usize, usize)>,
    /// First line shown in the detail pane.
    pub detail_scroll: usize,
    /// First line shown in the source pane; `None` follows the selection.
    pub source_scroll: Option<usize>,
    /// A message for the status line.
    pub message: Option<String>,
    /// Highlighted sources.
    pub highlights: HashMap<SourceKey, Highlighted>,
    pending: HashSet<SourceKey>,
    /// Styles.
    pub theme: Theme,
    /// Terminal size.
    pub size: Rect,
}

impl App {
    /// A loading app for a terminal of `size`.
    pub fn new(theme: Theme, size: Rect) -> App {
        App {
            comparison: None,
            progress: [None, None],
            analysing: false,
            selected: 0,
            offset: 0,
            focus: Pane::List,
            show_source: false,
            show_help: false,
            search: None,
            attach: None,
            rank_picker: None,
            numerics: None,
            ranks_progress: None,
            detail_scroll: 0,
            source_scroll: None,
            message: None,
            highlights: HashMap::new(),
            pending: HashSet::new(),
            theme,
            size,
        }
    }

    /// The screen layout for the current size and view.
    pub fn areas(&self) -> Areas {
        let comparison = self.comparison.as_deref();
        let pair = comparison.is_some_and(Comparison::is_pair);
        let notes = comparison.map_or(0, Comparison::notes);
        areas(self.size, pair, notes, self.show_source)
    }

    /// The action a key press means in the current state.
    pub fn action_for_key(&self, key: KeyEvent) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Some(Action::Quit);
        }
        if self.search.is_some() {
            return match key.code {
                KeyCode::Esc => Some(Action::Cancel),
                KeyCode::Enter => Some(Action::SearchAccept),
                KeyCode::Backspace => Some(Action::SearchBackspace),
                KeyCode::Up => Some(Action::SearchMove(-1)),
                KeyCode::Down | KeyCode::Tab => Some(Action::SearchMove(1)),
                KeyCode::Char('p') if ctrl => Some(Action::SearchMove(-1)),
                KeyCode::Char('n') if ctrl => Some(Action::SearchMove(1)),
                KeyCode::Char(c) if !ctrl => Some(Action::SearchType(c)),
                _ => None,
            };
        }
        if self.show_help {
            return matches!(key.code, KeyCode::Esc | KeyCode::Char('?' | 'q'))
                .then_some(Action::ToggleHelp);
        }
        if self.rank_picker.is_some() {
            return match key.code {
                KeyCode::Esc | KeyCode::Char('q' | 'R') => Some(Action::Cancel),
                KeyCode::Enter => Some(Action::RankChosen),
                KeyCode::Up | KeyCode::Char('k') => Some(Action::RanksMove(-1)),
                KeyCode::Down | KeyCode::Char('j') => Some(Action::RanksMove(1)),
                _ => None,
            };
        }
        if self.numerics.is_some() {
            return match key.code {
                KeyCode::Esc | KeyCode::Char('q' | 'e') => Some(Action::Cancel),
                KeyCode::Enter => Some(Action::NumericsChosen),
                KeyCode::Up | KeyCode::Char('k') => Some(Action::NumericsMove(-1)),
                KeyCode::Down | KeyCode::Char('j') => Some(Action::NumericsMove(1)),
                _ => None,
            };
        }
        if self.attach.is_some() {
            return match key.code {
                KeyCode::Esc | KeyCode::Char('q' | 'a') => Some(Action::Cancel),
                KeyCode::Enter => Some(Action::AttachSelected),
                KeyCode::Up | KeyCode::Char('k') => Some(Action::AttachMove(-1)),
                KeyCode::Down | KeyCode::Char('j') => Some(Action::AttachMove(1)),
                _ => None,
            };
        }
        super::keys::action_for(super::keys::Key {
            code: key.code,
            ctrl,
        })
    }

    /// Applies an action; returns what the event loop must do.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut effects = Vec::new();
        match action {
            Action::Quit => effects.push(Effect::Quit),
            Action::Cancel => {
                if self.search.take().is_none()
                    && self.attach.take().is_none()
                    && self.rank_picker.take().is_none()
                    && self.numerics.take().is_none()
                    && !std::mem::take(&mut self.show_help)
                {
                    effects.push(Effect::Quit);
                }
            }
            Action::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                self.keep_visible();
                self.fix_focus();
            }
            Action::Loading(progress) => match progress {
                Progress::Reading { file, .. } => self.progress[file.min(1)] = Some(progress),
                Progress::Ranks { done, total } => self.ranks_progress = Some((done, total)),
                Progress::Analysing => self.analysing = true,
            },
            Action::Loaded(comparison) => self.loaded(*comparison),
            Action::LoadFailed(message) => effects.push(Effect::Fail(message)),
            Action::Highlighted(key, lines) => {
                self.pending.remove(&key);
                self.highlights.insert(key, lines);
            }
            _ if self.comparison.is_none() => {}
            Action::Move(n) => self.scroll_focused(n),
            Action::Page(n) => {
                let page = self.page_height() as isize;
                self.scroll_focused(n * page.max(1));
            }
            Action::Top => self.scroll_focused(isize::MIN / 2),
            Action::Bottom => self.scroll_focused(isize::MAX / 2),
            Action::NextDivergence => self.next_divergence(true),
            Action::PrevDivergence => self.next_divergence(false),
            Action::NextRootCause => self.next_root_cause(),
            Action::FirstDivergence => match self
                .comparison()
                .and_then(|s| s.first_divergence())
                .map(|d| d.row)
            {
                Some(row) => self.jump(row, "first divergence".to_owned()),
                None => self.message = Some(self.no_divergence_words()),
            },
            Action::Producer => self.producer(&mut effects),
            Action::ProducerFound {
                from,
                target,
                message,
            } => self.producer_found(from, target, message),
            Action::CyclePane => self.cycle_pane(),
            Action::ToggleSource => {
                self.show_source = !self.show_source;
                if self.show_source && self.areas().detail.is_none() {
                    self.focus = Pane::Source;
                }
                self.fix_focus();
                self.keep_visible();
            }
            Action::ToggleHelp => self.show_help = !self.show_help,
            Action::OpenAttach => {
                if let Some(comparison) = &self.comparison {
                    effects.push(Effect::ListTargets(Arc::clone(comparison)));
                }
            }
            Action::Targets(targets) => {
                let selected = targets.iter().position(|t| t.paused.is_some()).unwrap_or(0);
                self.attach = Some((targets, selected));
            }
            Action::AttachMove(n) => {
                if let Some((targets, selected)) = &mut self.attach
                    && !targets.is_empty()
                {
                    *selected =
                        (*selected as isize + n).rem_euclid(targets.len() as isize) as usize;
                }
            }
            Action::AttachSelected => {
                if let Some((targets, selected)) = &self.attach
                    && let Some(target) = targets.get(*selected)
                {
                    match crate::attach::obstacle(target) {
                        Some(why) => self.message = Some(why),
                        None => effects.push(Effect::Debug(target.clone())),
                    }
                }
            }
            Action::DebuggerDone(message) => {
                self.message = Some(message);
                if let Some(comparison) = &self.comparison {
                    effects.push(Effect::ListTargets(Arc::clone(comparison)));
                }
            }
            Action::OpenRanks => match self.comparison().and_then(|c| c.rank.as_ref()) {
                Some(place) => self.rank_picker = Some(place.set.position(place.rank)),
                None => {
                    self.message = Some(
                        "one pair of traces: no ranks to pick (open two run folders: tritontui run0 run1)"
                            .to_owned(),
                    );
                }
            },
            Action::RanksMove(n) => {
                let count = self
                    .comparison()
                    .and_then(|c| c.rank.as_ref())
                    .map_or(0, |place| place.set.ranks.len());
                if let Some(selected) = &mut self.rank_picker
                    && count > 0
                {
                    *selected = (*selected as isize + n).rem_euclid(count as isize) as usize;
                }
            }
            Action::RankChosen => self.choose_rank(&mut effects),
            Action::OpenNumerics => self.open_numerics(),
            Action::NumericsMove(n) => {
                let count = self.accuracy().map_or(0, |a| a.aligned.len());
                if let Some(selected) = &mut self.numerics
                    && count > 0
                {
                    *selected = (*selected as isize + n).rem_euclid(count as isize) as usize;
                }
            }
            Action::NumericsChosen => self.choose_point(),
            Action::OpenSearch => {
                let mut search = Search::default();
                search.update(self.comparison().map_or(&[], |s| &s.names));
                self.search = Some(search);
            }
            Action::SearchType(c) => self.edit_search(|q| q.push(c)),
            Action::SearchBackspace => self.edit_search(|q| {
                q.pop();
            }),
            Action::SearchMove(n) => {
                if let Some(s) = &mut self.search {
                    let len = s.matches.len();
                    if len > 0 {
                        s.selected = (s.selected as isize + n).rem_euclid(len as isize) as usize;
                    }
                }
            }
            Action::SearchAccept => self.accept_search(),
            Action::Mouse(mouse) => self.mouse(mouse),
        }
        self.request_source(&mut effects);
        effects
    }

    fn comparison(&self) -> Option<&Comparison> {
        self.comparison.as_deref()
    }

    fn row_count(&self) -> usize {
        self.comparison().map_or(0, |s| s.rows().len())
    }

    /// Two programs' numerics compared, when they are.
    fn accuracy(&self) -> Option<&tritontui_engine::accuracy::Accuracy> {
        self.comparison()?.analysis.as_ref()?.accuracy.as_ref()
    }

    /// Opens the numerics overlay on the first point past its bound (else
    /// the first point), or says why there is none.
    fn open_numerics(&mut self) {
        match self.accuracy() {
            Some(accuracy) if !accuracy.aligned.is_empty() => {
                self.numerics = Some(accuracy.first_past.unwrap_or(0));
            }
            Some(_) => self.message = Some("no point of the two programs aligned".to_owned()),
            None => {
                self.message = Some(
                    "numerics are compared for two different programs both recorded with samples (tritontui record --samples)"
                        .to_owned(),
                );
            }
        }
    }

    /// Selects run B's launch of the highlighted aligned point.
    fn choose_point(&mut self) {
        let Some(selected) = self.numerics.take() else {
            return;
        };
        let launch = self
            .accuracy()
            .and_then(|a| a.aligned.get(selected))
            .map(|p| p.b.0);
        let row = launch.and_then(|l| self.comparison().and_then(|c| c.row_of(true, l)));
        if let Some(row) = row {
            self.select(row, true);
        }
    }

    /// Opens the rank highlighted in the picker (loading it anew).
    fn choose_rank(&mut self, effects: &mut Vec<Effect>) {
        let Some(selected) = self.rank_picker.take() else {
            return;
        };
        let Some(place) = self.comparison().and_then(|c| c.rank.clone()) else {
            return;
        };
        let Some(entry) = place.set.ranks.get(selected) else {
            return;
        };
        if entry.rank == place.rank {
            return;
        }
        effects.push(Effect::Load(Inputs::Rank(
            Arc::clone(&place.set),
            entry.rank,
        )));
        // The loading screen, until the rank's pair is compared.
        self.comparison = None;
        self.progress = [None, None];
        self.analysing = false;
        self.highlights.clear();
        self.pending.clear();
    }

    fn loaded(&mut self, comparison: Comparison) {
        let first = comparison.first_divergence().map(|d| d.row);
        let mut message = match (first, comparison.is_pair()) {
            (Some(_), _) => {
                "first divergence selected · n/N next/previous · r root causes · ? help".to_owned()
            }
            (None, true) => "the runs are identical · ? help".to_owned(),
            (None, false) => "one trace: browsing its launches · ? help".to_owned(),
        };
        if let Some(place) = &comparison.rank {
            let whose = match place.set.earliest_cause {
                Some(rank) if rank == place.rank => "the earliest cause across ranks".to_owned(),
                Some(rank) => format!("the earliest cause is on rank {rank}"),
                None => "no rank's divergence starts on its rank".to_owned(),
            };
            message = format!("rank {}: {whose} · R pick a rank · {message}", place.rank);
        }
        self.message = Some(message);
        self.ranks_progress = None;
        self.comparison = Some(Arc::new(comparison));
        self.selected = 0;
        self.offset = 0;
        if let Some(row) = first {
            self.select(row, true);
        }
    }

    /// Lines a page moves in the focused pane.
    fn page_height(&self) -> usize {
        let areas = self.areas();
        let area = match self.focus {
            Pane::List => return list_rows(areas.list).saturating_sub(1).max(1),
            Pane::Detail => areas.detail,
            Pane::Source => areas.source,
        };
        area.map_or(1, |a| usize::from(a.height.saturating_sub(2)).max(1))
    }

    fn scroll_focused(&mut self, n: isize) {
        match self.focus {
            Pane::List => {
                let last = self.row_count().saturating_sub(1);
                let row = (self.selected as isize)
                    .saturating_add(n)
                    .clamp(0, last as isize) as usize;
                self.select(row, false);
            }
            Pane::Detail => self.detail_scroll = add(self.detail_scroll, n),
            Pane::Source => {
                let lines = self.current_source_lines();
                let from = self
                    .source_scroll
                    .unwrap_or_else(|| self.auto_source_scroll(self.page_height()));
                self.source_scroll = Some(add(from, n).min(lines.saturating_sub(1)));
            }
        }
    }

    /// Selects `row`; `center` puts it a third of the way down the list.
    fn select(&mut self, row: usize, center: bool) {
        let row = row.min(self.row_count().saturating_sub(1));
        if row != self.selected {
            self.detail_scroll = 0;
            self.source_scroll = None;
        }
        self.selected = row;
        if center {
            let rows = list_rows(self.areas().list);
            self.offset = row.saturating_sub(rows / 3);
        }
        self.keep_visible();
    }

    fn jump(&mut self, row: usize, message: String) {
        self.focus = Pane::List;
        self.select(row, true);
        self.message = Some(message);
    }

    /// Scrolls the list so the selection is on screen.
    fn keep_visible(&mut self) {
        let rows = list_rows(self.areas().list).max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + rows {
            self.offset = self.selected + 1 - rows;
        }
        let max_offset = self.row_count().saturating_sub(rows);
        self.offset = self.offset.min(max_offset);
    }

    fn no_divergence_words(&self) -> String {
        match self.comparison() {
            Some(s) if !s.is_pair() => "one trace: nothing to compare".to_owned(),
            _ => "no divergence: the runs are identical".to_owned(),
        }
    }

    fn next_divergence(&mut self, forward: bool) {
        let Some(comparison) = self.comparison() else {
            return;
        };
        let divergences = comparison.divergences();
        let selected = self.selected;
        let found = if forward {
            divergences
                .iter()
                .enumerate()
                .find(|(_, d)| d.row > selected)
        } else {
            divergences
                .iter()
                .enumerate()
                .rev()
                .find(|(_, d)| d.row < selected)
        };
        match found {
            Some((i, d)) => {
                let message = format!("divergence {} of {}", i + 1, divergences.len());
                self.jump(d.row, message);
            }
            None if divergences.is_empty() => self.message = Some(self.no_divergence_words()),
            None => {
                self.message = Some(
                    if forward {
                        "no divergence after this one"
                    } else {
                        "no divergence before this one"
                    }
                    .to_owned(),
                )
            }
        }
    }

    fn next_root_cause(&mut self) {
        let Some(comparison) = self.comparison() else {
            return;
        };
        let divergences = comparison.divergences();
        let roots = &comparison.roots;
        let after = roots
            .iter()
            .position(|&d| divergences[d].row > self.selected);
        let (k, wrapped) = match after {
            Some(k) => (k, false),
            None if roots.is_empty() => {
                self.message = Some(self.no_divergence_words());
                return;
            }
            None => (0, true),
        };
        let row = divergences[roots[k]].row;
        let message = format!(
            "root cause {} of {}{}",
            k + 1,
            roots.len(),
            if wrapped {
                " (wrapped to the first)"
            } else {
                ""
            }
        );
        self.jump(row, message);
    }

    fn producer(&mut self, effects: &mut Vec<Effect>) {
        let Some(comparison) = self.comparison() else {
            return;
        };
        let selected = self.selected;
        let origin = comparison
            .divergence_at(selected)
            .and_then(|(_, d)| d.primary_origin().map(|o| (d, o)));
        let Some((d, origin)) = origin else {
            // Finding a producer from scratch is a pass over the trace: do
            // it on a worker and say so meanwhile.
            self.message = Some("finding the producer of the first input…".to_owned());
            if let Some(comparison) = &self.comparison {
                effects.push(Effect::FindProducer {
                    comparison: Arc::clone(comparison),
                    row: selected,
                });
            }
            return;
        };
        let b = comparison.b.as_ref().unwrap_or(&comparison.a);
        let runs = TracePair {
            a: &comparison.a,
            b,
        };
        let arg = runs.arg_name(d, origin.arg);
        let words = comparison
            .analysis
            .as_ref()
            .map(|an| origin_words(runs, d, origin, an))
            .unwrap_or_default();
        let target = match (origin.a, origin.b) {
            (Origin::Launch(l, _), _) => comparison.row_of(false, l),
            (_, Origin::Launch(l, _)) => comparison.row_of(true, l),
            _ => None,
        };
        let message = format!("{arg}: {words}");
        match target {
            Some(row) => self.jump(row, message),
            None => self.message = Some(message),
        }
    }

    fn producer_found(&mut self, from: usize, target: Option<usize>, message: String) {
        // The user moved on while the worker searched: keep their place.
        if from != self.selected {
            return;
        }
        match target {
            Some(row) => self.jump(row, message),
            None => self.message = Some(message),
        }
    }

    fn cycle_pane(&mut self) {
        let areas = self.areas();
        let order = [Pane::List, Pane::Detail, Pane::Source];
        let shown = |p: &Pane| match p {
            Pane::List => true,
            Pane::Detail => areas.detail.is_some(),
            Pane::Source => areas.source.is_some(),
        };
        let at = order.iter().position(|p| *p == self.focus).unwrap_or(0);
        self.focus = (1..=order.len())
            .map(|k| order[(at + k) % order.len()])
            .find(shown)
            .unwrap_or(Pane::List);
    }

    /// Moves the focus off a pane that is no longer shown.
    fn fix_focus(&mut self) {
        let areas = self.areas();
        let hidden = match self.focus {
            Pane::List => false,
            Pane::Detail => areas.detail.is_none(),
            Pane::Source => areas.source.is_none(),
        };
        if hidden {
            self.focus = Pane::List;
        }
    }

    fn edit_search(&mut self, edit: impl FnOnce(&mut String)) {
        let names = self.comparison.as_deref().map_or(&[][..], |s| &s.names[..]);
        if let Some(search) = &mut self.search {
            edit(&mut search.query);
            search.update(names);
        }
    }

    fn accept_search(&mut self) {
        let Some(search) = self.search.take() else {
            return;
        };
        let Some(comparison) = self.comparison() else {
            return;
        };
        let Some(name) = search.choice() else {
            self.message = Some(format!("no kernel matches {:?}", search.query));
            return;
        };
        let rows = &comparison.name_rows[name];
        // The next launch of that kernel after the selection, wrapping.
        let k = rows.partition_point(|&r| (r as usize) <= self.selected) % rows.len().max(1);
        let Some(&row) = rows.get(k) else { return };
        let message = format!(
            "{}: launch {} of {}",
            comparison.names[name],
            k + 1,
            rows.len()
        );
        self.jump(row as usize, message);
    }

    fn mouse(&mut self, mouse: MouseEvent) {
        let at = Position::new(mouse.column, mouse.row);
        let areas = self.areas();
        let pane = if areas.list.contains(at) {
            Pane::List
        } else if areas.detail.is_some_and(|r| r.contains(at)) {
            Pane::Detail
        } else if areas.source.is_some_and(|r| r.contains(at)) {
            Pane::Source
        } else {
            return;
        };
        match mouse.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let step = if mouse.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                let focus = std::mem::replace(&mut self.focus, pane);
                self.scroll_focused(step);
                self.focus = focus;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                let first_row_y = areas.list.y + 2;
                if pane == Pane::List && mouse.row >= first_row_y {
                    let row = self.offset + usize::from(mouse.row - first_row_y);
                    if row < self.row_count() {
                        self.select(row, false);
                    }
                }
            }
            _ => {}
        }
    }

    /// The source for the selected row: A's kernel, or B's if only B has it.
    pub fn current_source(&self) -> Option<(SourceKey, &tritontui_trace::trace::Source)> {
        let comparison = self.comparison()?;
        let row = *comparison.rows().get(self.selected)?;
        let (is_b, trace): (bool, &Trace) = match (row, &comparison.b) {
            (Row::OnlyB(_), Some(b)) => (true, b),
            _ => (false, &comparison.a),
        };
        let launch = &trace.launches[if is_b { row.b()? } else { row.a()? } as usize];
        let index = trace.kernel_of(launch).source?;
        Some(((is_b, index), &trace.sources[index as usize]))
    }

    fn current_source_lines(&self) -> usize {
        self.current_source()
            .map_or(0, |(_, s)| s.text.lines().count())
    }

    /// Where the source pane starts when the user has not scrolled: just
    /// above the first suspicious line, else above the kernel's definition,
    /// but never so far that a pane of `body` lines is left half empty.
    pub fn auto_source_scroll(&self, body: usize) -> usize {
        let Some((key, source)) = self.current_source() else {
            return 0;
        };
        let first_suspect = self
            .highlights
            .get(&key)
            .and_then(|h| h.suspicious.first().map(|(line, _)| *line));
        let definition = source.text.lines().position(|l| {
            l.starts_with("def ") || l.starts_with("extern \"C\"") || l.contains("@triton.jit")
        });
        let wanted = first_suspect
            .or(definition)
            .map_or(0, |line| line.saturating_sub(2));
        wanted.min(source.text.lines().count().saturating_sub(body))
    }

    fn request_source(&mut self, effects: &mut Vec<Effect>) {
        if !self.show_source {
            return;
        }
        let Some((key, source)) = self.current_source() else {
            return;
        };
        if self.highlights.contains_key(&key) || self.pending.contains(&key) {
            return;
        }
        let request = Request {
            key,
            text: source.text.clone(),
            lang: source.lang.clone(),
            color: self.theme.color,
        };
        self.pending.insert(key);
        effects.push(Effect::Highlight(request));
    }
}

fn add(at: usize, n: isize) -> usize {
    (at as isize).saturating_add(n).max(0) as usize
}

/// For a row without a divergent input: the row of the producer of the
/// first tensor argument the kernel reads (when a recorded launch wrote
/// it), and what it is in words (`crate::words::first_input_origin`).
pub fn producer_of_first_input(comparison: &Comparison, row: usize) -> (Option<usize>, String) {
    let Some(&r) = comparison.rows().get(row) else {
        return (None, String::new());
    };
    let (is_b, trace, launch) = match (r.a(), r.b(), &comparison.b) {
        (Some(a), _, _) => (false, &comparison.a, a),
        (None, Some(b), Some(tb)) => (true, tb, b),
        _ => return (None, String::new()),
    };
    let (producer, words) = first_input_origin(trace, launch);
    (producer.and_then(|p| comparison.row_of(is_b, p)), words)
}

/// Maps a crossterm event to an action.
pub fn action_for_event(app: &App, event: crossterm::event::Event) -> Option<Action> {
    use crossterm::event::Event;
    match event {
        Event::Key(key) => app.action_for_key(key),
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::Mouse(mouse) => Some(Action::Mouse(mouse)),
        _ => None,
    }
}
