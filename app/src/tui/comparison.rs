//! What the TUI shows: one trace, or two with their analysis, plus the
//! indexes the views need (row of each launch, rows of each kernel name).

use crate::values::TensorValues;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};
use tritontui_engine::align::Row;
use tritontui_engine::analysis::{Analysis, Divergence, Options, RowStatus};
use tritontui_trace::Trace;

/// A loaded comparison.
#[derive(Debug)]
pub struct Comparison {
    /// Run A (the only run when browsing one trace).
    pub a: Trace,
    /// Run B, when comparing.
    pub b: Option<Trace>,
    /// The analysis of the pair, when comparing.
    pub analysis: Option<Analysis>,
    /// Rows when browsing one trace: its program launches.
    single_rows: Vec<Row>,
    /// Row of each launch of A (`u32::MAX` for autotuning launches).
    row_of_a: Vec<u32>,
    /// Row of each launch of B.
    row_of_b: Vec<u32>,
    /// Distinct kernel names of both runs, sorted.
    pub names: Vec<String>,
    /// For each name in `names`, the rows launching it, ascending.
    pub name_rows: Vec<Vec<u32>>,
    /// Divergence indices of the root causes, ascending.
    pub roots: Vec<usize>,
    /// Which rank of two runs of several ranks this pair is, if it is one.
    pub rank: Option<RankPlace>,
    /// The captured values of pairs of launches, compared once each when
    /// first shown, by launch seq in A and in B.
    values: Mutex<FxHashMap<(u64, u64), Option<CapturedValues>>>,
    /// The runs' settings that differ (shown in the header first).
    pub settings: Vec<tritontui_engine::settings::SettingDiff>,
    /// What makes the runs two programs, in words (none for one program
    /// run twice): shown in the header after the settings.
    pub programs: Vec<String>,
    /// Two programs' numerics in words, for the header, when compared:
    /// whether a point is past its bound (`ACCURACY`), and what they say.
    pub numerics: Option<(bool, String)>,
}

/// A pair of launches' captured values compared, or why they were not.
pub type CapturedValues = Arc<Result<Vec<TensorValues>, String>>;

/// One rank of two runs of several ranks.
#[derive(Debug, Clone)]
pub struct RankPlace {
    /// Every rank, with its verdict.
    pub set: std::sync::Arc<super::ranks::RankSet>,
    /// The rank shown.
    pub rank: u32,
}

impl Comparison {
    /// The values launch `seq_a` of A and `seq_b` of B held, compared,
    /// when both runs captured them: computed the first time.
    pub fn captured_values(&self, seq_a: u64, seq_b: u64) -> Option<CapturedValues> {
        let b = self.b.as_ref()?;
        let mut cache = self.values.lock().ok()?;
        if let Some(found) = cache.get(&(seq_a, seq_b)) {
            return found.clone();
        }
        let compared = crate::values::compare_captured(&self.a, b, seq_a, seq_b)
            .map(|r| Arc::new(r.map_err(|e| format!("{e:#}"))));
        cache.insert((seq_a, seq_b), compared.clone());
        compared
    }

    /// Header lines beyond the runs and the verdict: the settings that
    /// differ, what makes the runs two programs, their numerics compared,
    /// what the traces did not see, results no recorded divergence
    /// explains; one line each, when there is any.
    pub fn notes(&self) -> u16 {
        let Some(analysis) = &self.analysis else {
            return 0;
        };
        let gaps = !analysis.gaps.a.is_empty() || !analysis.gaps.b.is_empty();
        let results = analysis.unexplained_results().next().is_some();
        [
            !self.settings.is_empty(),
            !self.programs.is_empty(),
            self.numerics.is_some(),
            analysis.batch.is_some(),
            analysis.fingerprints.is_some(),
            gaps,
            results,
        ]
        .into_iter()
        .filter(|&note| note)
        .count() as u16
    }

    /// Compares two traces.
    pub fn pair(a: Trace, b: Trace, options: Options) -> Comparison {
        let analysis = Analysis::run(&a, &b, options);
        let roots = analysis.root_causes().map(|(i, _)| i).collect();
        Self::build(a, Some(b), Some(analysis), Vec::new(), roots)
    }

    /// The processes of the comparison's traces a debugger could attach to.
    pub fn targets(&self) -> Vec<crate::attach::Target> {
        match &self.b {
            Some(b) => {
                let mut targets = crate::attach::targets(&self.a, "A");
                targets.extend(crate::attach::targets(b, "B"));
                targets
            }
            None => crate::attach::targets(&self.a, ""),
        }
    }

    /// Browses one trace.
    pub fn single(a: Trace) -> Comparison {
        let rows = a
            .program_launches()
            .map(|(i, _)| Row::OnlyA(i as u32))
            .collect();
        Self::build(a, None, None, rows, Vec::new())
    }

    fn build(
        a: Trace,
        b: Option<Trace>,
        analysis: Option<Analysis>,
        single_rows: Vec<Row>,
        roots: Vec<usize>,
    ) -> Comparison {
        let settings = b.as_ref().map_or_else(Vec::new, |b| {
            tritontui_engine::settings::differences(&a.header, &b.header)
        });
        let programs = analysis
            .as_ref()
            .map_or_else(Vec::new, |x| crate::words::program_lines(&x.programs));
        let numerics = b.as_ref().zip(analysis.as_ref()).and_then(|(b, x)| {
            let accuracy = x.accuracy.as_ref()?;
            let runs = tritontui_engine::TracePair { a: &a, b };
            Some(match accuracy.first_past() {
                Some(point) => (true, crate::words::accuracy::headline_words(runs, point)),
                None => (
                    false,
                    crate::words::accuracy::summary_lines(runs, accuracy).join(" · "),
                ),
            })
        });
        let mut comparison = Comparison {
            settings,
            programs,
            numerics,
            row_of_a: vec![u32::MAX; a.launches.len()],
            row_of_b: vec![u32::MAX; b.as_ref().map_or(0, |b| b.launches.len())],
            a,
            b,
            analysis,
            single_rows,
            names: Vec::new(),
            name_rows: Vec::new(),
            roots,
            rank: None,
            values: Mutex::new(FxHashMap::default()),
        };
        comparison.index();
        comparison
    }

    fn index(&mut self) {
        let mut by_name: FxHashMap<&str, Vec<u32>> = FxHashMap::default();
        let rows = match &self.analysis {
            Some(analysis) => &analysis.alignment.rows,
            None => &self.single_rows,
        };
        for (r, row) in rows.iter().enumerate() {
            let r = r as u32;
            if let Some(i) = row.a() {
                self.row_of_a[i as usize] = r;
                let name = self.a.kernel_of(&self.a.launches[i as usize]).name.as_str();
                by_name.entry(name).or_default().push(r);
            }
            if let (Some(i), Some(b)) = (row.b(), &self.b) {
                self.row_of_b[i as usize] = r;
                let name = b.kernel_of(&b.launches[i as usize]).name.as_str();
                let rows = by_name.entry(name).or_default();
                if rows.last() != Some(&r) {
                    rows.push(r);
                }
            }
        }
        let mut named: Vec<(String, Vec<u32>)> = by_name
            .into_iter()
            .map(|(n, r)| (n.to_owned(), r))
            .collect();
        named.sort_unstable_by(|x, y| x.0.cmp(&y.0));
        (self.names, self.name_rows) = named.into_iter().unzip();
    }

    /// The rows of the side-by-side list.
    pub fn rows(&self) -> &[Row] {
        match &self.analysis {
            Some(analysis) => &analysis.alignment.rows,
            None => &self.single_rows,
        }
    }

    /// Whether two runs are compared.
    pub fn is_pair(&self) -> bool {
        self.b.is_some()
    }

    /// The status of a row (always `Equal` when browsing one trace).
    pub fn status(&self, row: usize) -> RowStatus {
        self.analysis
            .as_ref()
            .and_then(|a| a.statuses.get(row).copied())
            .unwrap_or(RowStatus::Equal)
    }

    /// The divergence a row belongs to.
    pub fn divergence_at(&self, row: usize) -> Option<(usize, &Divergence)> {
        match self.status(row) {
            RowStatus::Divergent(d) => {
                let analysis = self.analysis.as_ref()?;
                Some((d as usize, &analysis.divergences[d as usize]))
            }
            _ => None,
        }
    }

    /// The divergence to open on (see [`tritontui_engine::Analysis::first`]).
    pub fn first_divergence(&self) -> Option<&Divergence> {
        self.analysis.as_ref().and_then(|a| a.first())
    }

    /// The divergences, in row order.
    pub fn divergences(&self) -> &[Divergence] {
        self.analysis.as_ref().map_or(&[], |a| &a.divergences)
    }

    /// Row of launch `index` of run A (`b == false`) or B.
    pub fn row_of(&self, b: bool, index: u32) -> Option<usize> {
        let rows = if b { &self.row_of_b } else { &self.row_of_a };
        rows.get(index as usize)
            .filter(|&&r| r != u32::MAX)
            .map(|&r| r as usize)
    }
}
