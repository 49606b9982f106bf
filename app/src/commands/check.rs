//! `tritontui check -- COMMAND`: a program run several times under the
//! recorder, every run compared with the first.

use super::args::CheckArgs;
use super::check_compare::Comparison;
use super::check_runs::Runs;
use super::check_steps::{self, Zoomed};
use super::inputs::options;
use super::output::print_ignoring_closed_pipe;
use super::status::{ExitCode, FOUND, INCONCLUSIVE, SUCCESS};
use super::values_rerun;
use anyhow::Context;
use tritontui_engine::Options;
use tritontui_engine::analysis::Verdict;
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
    let mut comparisons = Vec::new();
    let mut divergent_run = None;
    let mut benign_run = None;
    let mut inconclusive_run = None;
    for (i, path) in traces.iter().enumerate().skip(1) {
        let comparison = Comparison::of(&traces[0], path, options)?;
        match comparison.verdict() {
            // (Equivalent is never given here: numerics are not compared.)
            Verdict::Divergent | Verdict::Equivalent => _ = divergent_run.get_or_insert(i),
            Verdict::Benign => _ = benign_run.get_or_insert(i),
            Verdict::Inconclusive => _ = inconclusive_run.get_or_insert(i),
            Verdict::Identical => {}
        }
        comparisons.push((i, comparison));
    }
    // Values are captured in runs of one process (a rank's launch numbers
    // are its own).
    let divergent_report = divergent_run.and_then(|i| comparisons[i - 1].1.process());
    let mut escalation = match divergent_report {
        Some(report) if !args.no_values => {
            values_rerun::escalate(report, &args.dir, |trace, selection, n| {
                eprintln!(
                    "tritontui: capturing launch {selection}: run {}/2: {shown}",
                    n + 1
                );
                let mut env = window.clone();
                env.push((CAPTURE.env, selection.to_owned()));
                runs.one(trace, &env, &format!("capturing run {}", n + 1))
                    .map(|_| ())
            })?
        }
        _ => None,
    };
    // A kernel whose outputs differed on equal inputs is rerun alone on
    // the first capturing run's inputs: that confirms it, or not.
    if let (Some(report), Some(escalated)) = (divergent_report, escalation.as_mut())
        && escalated.values.is_some()
        && values_rerun::wants_rerun(report)
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
            .map(|(i, comparison)| {
                let mut json = comparison.json();
                json["run"] = (*i).into();
                json
            })
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
        crate::tui::run(comparisons[i - 1].1.inputs(&traces[0], &traces[i]), options)?;
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
        for (i, comparison) in &comparisons {
            if comparison.worth_saying() {
                text += &format!(
                    "\nrun {i} ({}) against run 0 ({}):\n",
                    traces[*i].display(),
                    traces[0].display()
                );
                text += &comparison.summary();
            }
        }
        if let Some(escalation) = &escalation {
            text += &values_rerun::summary(escalation);
        } else if divergent_run.is_some() && divergent_report.is_none() && !args.no_values {
            text += "\nvalues are not captured in runs of several ranks (a launch number is \
                     one rank's); `tritontui record` with TRITONTUI_CAPTURE=N captures launch N \
                     of every rank\n";
        }
        print_ignoring_closed_pipe(&text)?;
    }
    Ok(match (divergent_run, inconclusive_run) {
        (Some(_), _) => FOUND,
        (None, Some(_)) => INCONCLUSIVE,
        (None, None) => SUCCESS,
    })
}
