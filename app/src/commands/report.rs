//! `tritontui report A B -o PAGE`: the comparison as an HTML page.

use super::args::ReportArgs;
use super::inputs::{load_pair, load_reference, options};
use crate::Report;
use anyhow::Context;
use tritontui_engine::Analysis;

/// `tritontui report`: the comparison as an HTML page.
pub(super) fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let (a, b) = load_pair(&args.a, &args.b)?;
    let reference = load_reference(args.reference.as_deref())?;
    let options = options(args.align_deadline)?;
    let analysis = Analysis::run_against(&a, &b, reference.as_ref(), options);
    let report = Report::new(&a, &b, &analysis, 1000);
    let page = crate::output::html::render(&a, &b, &analysis, &report);
    std::fs::write(&args.output, page)
        .with_context(|| format!("{}: cannot write", args.output.display()))?;
    eprintln!("tritontui: wrote {}", args.output.display());
    Ok(())
}
