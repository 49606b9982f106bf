//! `tritontui [A [B]]`: the terminal UI.

use super::inputs::{both_folders, options};
use crate::tui::load::Inputs;
use anyhow::Context;

/// Opens the UI on `traces` (none: the built-in demo pair).
pub(super) fn tui(traces: &[std::path::PathBuf], align_deadline: f64) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let options = options(align_deadline)?;
    // Catch a missing file before taking over the screen.
    for path in traces {
        std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the UI needs a terminal; for text output use `tritontui diff A B` (or --json)"
        );
    }
    let inputs = match traces {
        [] => Inputs::Demo,
        [a] if a.is_dir() => anyhow::bail!(
            "{}: a folder of rank traces: give two run folders to compare them (tritontui run0 run1)",
            a.display()
        ),
        [a] => Inputs::One(a.clone()),
        [a, b, ..] => match both_folders(a, b)? {
            true => Inputs::Ranks(a.clone(), b.clone()),
            false => Inputs::Two(a.clone(), b.clone()),
        },
    };
    crate::tui::run(inputs, options)
}
