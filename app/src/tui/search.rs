//! Fuzzy search over the distinct kernel names.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// The search box and its live results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// What the user typed.
    pub query: String,
    /// Indices into the comparison's names, best match first.
    pub matches: Vec<usize>,
    /// The highlighted result.
    pub selected: usize,
}

impl Search {
    /// Recomputes the matches of `query` among `names`.
    pub fn update(&mut self, names: &[String]) {
        let matcher = SkimMatcherV2::default().smart_case();
        let mut scored: Vec<(i64, usize)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| matcher.fuzzy_match(name, &self.query).map(|s| (s, i)))
            .collect();
        // Best score first; ties in name order.
        scored.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        self.matches = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
    }

    /// The highlighted name's index, if any result.
    pub fn choice(&self) -> Option<usize> {
        self.matches.get(self.selected).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_fuzzy_and_best_first() {
        let names: Vec<String> = [
            "triton_poi_fused_add_0",
            "triton_poi_fused_index_add_5",
            "triton_red_fused_sum_6",
        ]
        .map(String::from)
        .to_vec();
        let mut s = Search {
            query: "idxadd".into(),
            ..Search::default()
        };
        s.update(&names);
        assert_eq!(s.matches, [1]);
        s.query = "add".into();
        s.update(&names);
        assert_eq!(s.matches.len(), 2);
        s.query = "zzz".into();
        s.update(&names);
        assert!(s.matches.is_empty() && s.choice().is_none());
    }
}
