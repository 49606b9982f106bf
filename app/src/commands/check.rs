//! `tritontui check -- COMMAND`: a program run several times under the
//! recorder, every run compared with the first.

use super::args::CheckArgs;
use super::check_runs::Runs;
use super::check_steps::{self, Zoomed};
use super::inputs::options;
use super::output::print_ignoring_closed_pipe;
use super::status::{ExitCode, FOUND, INCONCLUSIVE, SUCCESS};
use super::values_rerun;
use crate::Report;
use crate::tui::load::Inputs;
use anyhow::Context;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_trace::Trace;
use tritontui_trace::options::CAPTURE;

/// `tritontui check`: runs the program `-n` times under the recorder and
/// compares every run with the first.
pub(super) fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let (program, rest) = args
        .command
        .split_first()
        .context("give the command to check after --")?;
    // One program run several times owes equal bits: no numerics bound
    // excuses a difference.
    let options = Options {
        compare_numerics: false,
        ..options(args.align_deadline)?
    };
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("{}: cannot create", args.dir.display()))?;
    let runs = Runs {
        args,
        program,
        rest,
        shown: args.command.join(" "),
    };
    let shown = &runs.shown;
    // The steps recorded in full (`--steps`): the options that say so.
    let (traces, window, steps) = if args.steps {
        match check_steps::zoom(&runs, options)? {
            Zoomed::Agree(text) => {
                print_ignoring_closed_pipe(&text)?;
                return Ok(SUCCESS);
            }
            Zoomed::Window {
                traces,
                window,
                said,
                json,
            } => (traces, window, Some((said, json))),
        }
    } else {
        (runs.all("run", &[])?, Vec::new(), None)
    };
    let first = Trace::open(&traces[0])?;
    let mut comparisons = Vec::new();
    let mut divergent_run = None;
    let mut benign_run = None;
    let mut inconclusive_run = None;
    for (i, path) in traces.iter().enumerate().skip(1) {
        let other = Trace::open(path)?;
        let analysis = Analysis::run(&first, &other, options);
        match analysis.verdict {
            // (Equivalent is never given here: numerics are not compared.)
            Verdict::Divergent | Verdict::Equivalent => _ = divergent_run.get_or_insert(i),
            Verdict::Benign => _ = benign_run.get_or_insert(i),
            Verdict::Inconclusive => _ = inconclusive_run.get_or_insert(i),
            Verdict::Identical => {}
        }
        let report = Report::new(&first, &other, &analysis, 1000);
        comparisons.push((i, report));
    }
    let mut escalation = match divergent_run {
        Some(i) if !args.no_values => {
            let report = &comparisons[i - 1].1;
            values_rerun::escalate(report, &args.dir, |trace, selection, n| {
                eprintln!(
                    "tritontui: capturing launch {selection}: run {}/2: {shown}",
                    n + 1
                );
                let mut env = window.clone();
                env.push((CAPTURE.env, selection.to_owned()));
                runs.one(trace, &env, &format!("capturing run {}", n + 1))
            })?
        }
        _ => None,
    };
    // A kernel whose outputs differed on equal inputs is rerun alone on
    // the first capturing run's inputs: that confirms it, or not.
    if let (Some(i), Some(escalated)) = (divergent_run, escalation.as_mut())
        && escalated.values.is_some()
        && values_rerun::wants_rerun(&comparisons[i - 1].1)
    {
        let python = std::path::Path::new(program)
            .file_name()
            .filter(|name| name.to_string_lossy().starts_with("python"))
            .map_or_else(|| std::ffi::OsString::from("python3"), |_| program.into());
        eprintln!(
            "tritontui: rerunning launch {} alone",
            escalated.launches[0]
        );
        escalated.rerun = Some(values_rerun::rerun_alone(
            &escalated.traces[0],
            escalated.launches[0],
            &args.dir.join("repro"),
            &python,
            crate::repro::DEFAULT_RUNS,
        ));
    }
    let interactive = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if args.json {
        let runs: Vec<_> = comparisons
            .iter()
            .map(|(i, report)| serde_json::json!({"run": i, "report": report}))
            .collect();
        let verdict = serde_json::json!({
            "verdict": match (divergent_run, inconclusive_run, benign_run) {
                (Some(_), ..) => "nondeterministic",
                (None, Some(_), _) => "inconclusive",
                (None, None, Some(_)) => "benign",
                (None, None, None) => "deterministic",
            },
            "command": args.command,
            "steps": steps.as_ref().map(|(_, json)| json),
            "traces": traces,
            "comparisons": runs,
            "values": escalation,
        });
        print_ignoring_closed_pipe(&format!("{}\n", serde_json::to_string_pretty(&verdict)?))?;
    } else if let (Some(i), true) = (divergent_run, interactive) {
        for line in steps.iter().flat_map(|(said, _)| said) {
            eprintln!("{line}");
        }
        if let Some(escalation) = &escalation {
            eprint!("{}", values_rerun::summary(escalation));
        }
        crate::tui::run(Inputs::Two(traces[0].clone(), traces[i].clone()), options)?;
    } else {
        let mut text = match (divergent_run, inconclusive_run, benign_run) {
            (None, None, None) => format!(
                "deterministic: {} runs of `{shown}` recorded the same launches with the same bits\n",
                args.runs
            ),
            (None, None, Some(_)) => format!(
                "benign: {} runs of `{shown}` gave the same results bit for bit; some launches differed on the way, absorbed before the results\n",
                args.runs
            ),
            (None, Some(_), _) => format!(
                "inconclusive: nothing recorded in {} runs of `{shown}` differs in the results, but the traces did not see everything\n",
                args.runs
            ),
            (Some(_), ..) => format!("nondeterministic: `{shown}` gave different results\n"),
        };
        if let Some((said, _)) = &steps {
            text = said
                .iter()
                .map(|line| format!("{line}\n"))
                .collect::<String>()
                + &text;
        }
        for (i, report) in &comparisons {
            if report.first_divergence.is_some() || report.verdict == Verdict::Inconclusive {
                text += &format!(
                    "\nrun {i} ({}) against run 0 ({}):\n",
                    traces[*i].display(),
                    traces[0].display()
                );
                text += &crate::output::summary(report);
            }
        }
        if let Some(escalation) = &escalation {
            text += &values_rerun::summary(escalation);
        }
        print_ignoring_closed_pipe(&text)?;
    }
    Ok(match (divergent_run, inconclusive_run) {
        (Some(_), _) => FOUND,
        (None, Some(_)) => INCONCLUSIVE,
        (None, None) => SUCCESS,
    })
}
