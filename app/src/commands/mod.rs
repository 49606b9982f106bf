//! The `tritontui` command: parses flags and dispatches to the engine.
//! The binary runs it, and so does the Python package's `tritontui`
//! command (`python -m tritontui`), through the extension.

mod args;
mod values_rerun;

use crate::tui::loader::Inputs;
use crate::{Report, attach};
use anyhow::Context;
use args::{
    AttachArgs, CheckArgs, Cli, Command, DiffArgs, DumpArgs, LintArgs, RanksArgs, RecordArgs,
    ReportArgs, ReproArgs, ResumeArgs, ValuesArgs,
};
use clap::Parser;
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::Duration;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_trace::Trace;

/// Exit status of a command.
pub type ExitCode = u8;
const SUCCESS: ExitCode = 0;
/// Found what was looked for: the runs' results differ, a lint violation.
const FOUND: ExitCode = 1;
/// A comparison whose traces did not see everything, where nothing seen
/// differs: neither agreement nor a difference is shown.
const INCONCLUSIVE: ExitCode = 3;

/// The exit status a comparison's verdict gives.
fn verdict_status(verdict: Verdict) -> ExitCode {
    match verdict {
        Verdict::Identical | Verdict::Benign => SUCCESS,
        Verdict::Divergent => FOUND,
        Verdict::Inconclusive => INCONCLUSIVE,
    }
}

/// Runs the command line `args` (the program name first) and returns the
/// exit status: 0 success (identical or benign for a comparison), 1
/// divergent, 2 an error, which is printed as one line, 3 inconclusive
/// (the traces did not see everything, and nothing seen differs).
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0, mistakes to
            // stderr with status 2.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        Some(Command::Diff(args)) => diff(&args),
        Some(Command::Dump(args)) => dump(&args).map(|()| SUCCESS),
        Some(Command::Record(args)) => record(&args),
        Some(Command::Check(args)) => check(&args),
        Some(Command::Ranks(args)) => ranks(&args),
        Some(Command::Values(args)) => values(&args),
        Some(Command::Repro(args)) => repro(&args).map(|()| SUCCESS),
        Some(Command::Report(args)) => report(&args).map(|()| SUCCESS),
        Some(Command::Lint(args)) => lint(&args),
        Some(Command::Attach(args)) => attach(&args),
        Some(Command::Resume(args)) => resume(&args).map(|()| SUCCESS),
        None => tui(&cli.traces, cli.align_deadline).map(|()| SUCCESS),
    };
    result.unwrap_or_else(|err| {
        eprintln!("tritontui: {err:#}");
        2
    })
}

/// Loads two traces side by side, warning about any that ended early.
fn load_pair(a: &std::path::Path, b: &std::path::Path) -> anyhow::Result<(Trace, Trace)> {
    let (ta, tb) = std::thread::scope(|s| {
        let left = s.spawn(|| Trace::open(a));
        let right = Trace::open(b);
        (left.join(), right)
    });
    let ta = ta.map_err(|_| anyhow::anyhow!("{}: the reader crashed", a.display()))??;
    let tb = tb?;
    for trace in [&ta, &tb] {
        if let Some(end) = &trace.early_end {
            eprintln!(
                "tritontui: warning: {}: the trace ended early ({}); comparing the {} launches it has",
                trace.path.display(),
                end,
                trace.launches.len()
            );
        }
    }
    Ok((ta, tb))
}

fn options(align_deadline: f64) -> anyhow::Result<Options> {
    let deadline = Duration::try_from_secs_f64(align_deadline)
        .context("--align-deadline must be a non-negative number of seconds")?;
    Ok(Options {
        align_deadline: deadline,
    })
}

fn tui(traces: &[std::path::PathBuf], align_deadline: f64) -> anyhow::Result<()> {
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

/// Whether runs `a` and `b` are folders of rank traces (true) or traces
/// (false); one of each is an error.
fn both_folders(a: &std::path::Path, b: &std::path::Path) -> anyhow::Result<bool> {
    match (a.is_dir(), b.is_dir()) {
        (true, true) => Ok(true),
        (false, false) => Ok(false),
        (a_is_dir, _) => {
            let (dir, file) = if a_is_dir { (a, b) } else { (b, a) };
            anyhow::bail!(
                "{}: a folder of rank traces, but {} is one trace: give two folders or two traces",
                dir.display(),
                file.display()
            );
        }
    }
}

fn diff(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    if both_folders(&args.a, &args.b)? {
        return diff_ranks(args);
    }
    let (a, b) = load_pair(&args.a, &args.b)?;
    let analysis = Analysis::run(&a, &b, options(args.align_deadline)?);
    let report = Report::new(&a, &b, &analysis, args.limit);
    print_diff(
        &report,
        args.json,
        crate::report::summary,
        verdict_status(analysis.verdict),
    )
}

/// `tritontui diff RUN_A RUN_B` on two folders of rank traces.
fn diff_ranks(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let report =
        crate::rank_diff::compare(&args.a, &args.b, options(args.align_deadline)?, args.limit)?;
    let status = verdict_status(report.verdict());
    print_diff(&report, args.json, crate::rank_diff::summary, status)
}

/// `tritontui ranks RUN`.
fn ranks(args: &RanksArgs) -> anyhow::Result<ExitCode> {
    if !args.run.is_dir() {
        anyhow::bail!(
            "{}: not a folder of rank traces (`tritontui record -o 'RUN/rank{{rank}}.msgpack' -- torchrun ...` writes one)",
            args.run.display()
        );
    }
    let check = crate::cross_rank::check(&args.run)?;
    let status = if check.agree() { SUCCESS } else { FOUND };
    print_diff(&check, args.json, crate::cross_rank::summary, status)
}

fn repro(args: &ReproArgs) -> anyhow::Result<()> {
    let script = crate::repro::write(
        &args.trace,
        args.launch,
        &args.output,
        args.runs,
        args.against.as_deref(),
    )?;
    eprintln!(
        "tritontui: wrote {}; run it with `python {}` (exit 1: the kernel alone is nondeterministic)",
        args.output.display(),
        script.display()
    );
    Ok(())
}

fn lint(args: &LintArgs) -> anyhow::Result<ExitCode> {
    let names: Vec<&str> = if args.profile.is_empty() {
        crate::lint::profile::SHIPPED
            .iter()
            .map(|(n, _)| *n)
            .collect()
    } else {
        args.profile.iter().map(String::as_str).collect()
    };
    let profiles = names
        .into_iter()
        .map(crate::lint::profile::Profile::load)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let trace = Trace::open(&args.trace)?;
    let report = crate::lint::lint(&trace, &profiles);
    let status = if report.violations.is_empty() {
        SUCCESS
    } else {
        FOUND
    };
    print_diff(&report, args.json, crate::lint::summary, status)
}

fn values(args: &ValuesArgs) -> anyhow::Result<ExitCode> {
    let report = crate::values::compare(&args.a, &args.b, args.launch)?;
    let status = if report.equal() { SUCCESS } else { FOUND };
    print_diff(&report, args.json, crate::values::summary, status)
}

/// Prints a diff report (as JSON, or its `summary`) and returns `status`.
fn print_diff<R: serde::Serialize>(
    report: &R,
    json: bool,
    summary: fn(&R) -> String,
    status: ExitCode,
) -> anyhow::Result<ExitCode> {
    let text = if json {
        let mut json = serde_json::to_string_pretty(report)?;
        json.push('\n');
        json
    } else {
        summary(report)
    };
    print_ignoring_closed_pipe(&text)?;
    Ok(status)
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
fn print_ignoring_closed_pipe(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn dump(args: &DumpArgs) -> anyhow::Result<()> {
    let trace = Trace::open(&args.trace)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match crate::dump::dump(&trace, &mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Runs the command with the recorder's environment; its exit status
/// becomes ours.
fn record(args: &RecordArgs) -> anyhow::Result<ExitCode> {
    let (program, rest) = args
        .command
        .split_first()
        .context("give the command to record after --")?;
    let mut command = recorded(program, rest, &args.output, &args.hash, args.no_aten);
    command.env("TRITONTUI_KERNELS", &args.kernels);
    if let Some(points) = &args.break_at {
        command.env("TRITONTUI_BREAK", points);
    }
    if let Some(selection) = &args.capture {
        command.env("TRITONTUI_CAPTURE", selection);
    }
    if let Some(budget) = args.capture_budget {
        command.env("TRITONTUI_CAPTURE_BUDGET", budget.to_string());
    }
    if let Some(name) = &args.hash_fn {
        command.env("TRITONTUI_HASH_FN", name);
    }
    let status = command
        .status()
        .with_context(|| format!("{program}: cannot run"))?;
    let code = status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2));
    if code == 0 {
        eprintln!("tritontui: recorded to {}", args.output.display());
    }
    Ok(code)
}

/// The attach targets of a trace, labelled with its file name.
fn trace_targets(path: &std::path::Path) -> anyhow::Result<Vec<attach::Target>> {
    let trace = Trace::open(path)?;
    let label = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Ok(attach::targets(&trace, &label))
}

/// `tritontui attach`: lists the targets, or runs the debugger on one.
fn attach(args: &AttachArgs) -> anyhow::Result<ExitCode> {
    let targets = trace_targets(&args.trace)?;
    if args.list {
        let mut text = String::from("PID      ROLE            HOST             ALIVE   STATE\n");
        for t in &targets {
            let alive = match t.alive {
                attach::Alive::Yes => "yes",
                attach::Alive::Ended => "no",
                attach::Alive::Remote => "?",
            };
            text += &format!(
                "{:<8} {:<15} {:<16} {:<7} {}\n",
                t.pid,
                t.role,
                t.host,
                alive,
                t.state()
            );
        }
        print_ignoring_closed_pipe(&text)?;
        return Ok(SUCCESS);
    }
    let path = args.trace.display();
    let target = match args.pid {
        Some(pid) => targets
            .iter()
            .find(|t| t.pid == pid)
            .with_context(|| format!("{path}: recorded no process {pid}"))?,
        None => default_target(&targets).with_context(|| {
            format!("{path}: no paused or live process to attach to; see --list")
        })?,
    };
    if let Some(why) = attach::obstacle(target) {
        anyhow::bail!("{path}: {why}");
    }
    let mut command = attach::debugger_command(target);
    let status = command
        .status()
        .with_context(|| format!("{}: cannot run", command.get_program().to_string_lossy()))?;
    Ok(status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2)))
}

/// The paused process, else the only live one.
fn default_target(targets: &[attach::Target]) -> Option<&attach::Target> {
    let paused: Vec<_> = targets.iter().filter(|t| t.paused.is_some()).collect();
    let live: Vec<_> = targets
        .iter()
        .filter(|t| t.alive == attach::Alive::Yes)
        .collect();
    match (paused.as_slice(), live.as_slice()) {
        ([first, ..], _) => Some(first),
        ([], [only]) => Some(only),
        _ => None,
    }
}

/// `tritontui resume`: resumes the trace's paused processes.
fn resume(args: &ResumeArgs) -> anyhow::Result<()> {
    let targets = trace_targets(&args.trace)?;
    let resumed = attach::resume(&targets)
        .with_context(|| format!("{}: cannot resume", args.trace.display()))?;
    if resumed.is_empty() {
        eprintln!("tritontui: {}: no process is paused", args.trace.display());
    }
    for pid in resumed {
        eprintln!("tritontui: resumed pid {pid}");
    }
    Ok(())
}

/// `program rest...` with the recorder's environment: it records into
/// `trace` (a pause point the user's environment sets, `TRITONTUI_BREAK`,
/// stays).
fn recorded(
    program: &str,
    rest: &[String],
    trace: &std::path::Path,
    hash: &str,
    no_aten: bool,
) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .env("TRITONTUI_RECORD", trace)
        .env("TRITONTUI_HASH", hash)
        .env("TRITONTUI_ATEN", if no_aten { "0" } else { "1" });
    command
}

/// `command` run unattended (by `check`): no pause point of the user's
/// environment stops it.
fn unattended(mut command: std::process::Command) -> std::process::Command {
    command.env_remove("TRITONTUI_BREAK");
    command
}

/// `tritontui check`: runs the program `-n` times under the recorder and
/// compares every run with the first.
fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let (program, rest) = args
        .command
        .split_first()
        .context("give the command to check after --")?;
    let options = options(args.align_deadline)?;
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("{}: cannot create", args.dir.display()))?;
    let shown = args.command.join(" ");
    let mut traces = Vec::new();
    for i in 0..args.runs {
        let trace = args.dir.join(format!("run{i}.msgpack"));
        eprintln!("tritontui: run {}/{}: {shown}", i + 1, args.runs);
        let started = std::time::Instant::now();
        // The program's output goes to stderr, so that stdout holds only
        // the verdict.
        let stdout = std::io::stderr().as_fd().try_clone_to_owned()?;
        let status = unattended(recorded(program, rest, &trace, &args.hash, args.no_aten))
            .stdout(std::process::Stdio::from(stdout))
            .status()
            .with_context(|| format!("{program}: cannot run"))?;
        if !status.success() {
            anyhow::bail!(
                "run {} of `{shown}` failed ({status}); its trace is {}",
                i + 1,
                trace.display()
            );
        }
        eprintln!(
            "tritontui: run {}/{} done in {:.1} s: {}",
            i + 1,
            args.runs,
            started.elapsed().as_secs_f64(),
            trace.display()
        );
        traces.push(trace);
    }
    let first = Trace::open(&traces[0])?;
    let mut comparisons = Vec::new();
    let mut divergent_run = None;
    let mut benign_run = None;
    let mut inconclusive_run = None;
    for (i, path) in traces.iter().enumerate().skip(1) {
        let other = Trace::open(path)?;
        let analysis = Analysis::run(&first, &other, options);
        match analysis.verdict {
            Verdict::Divergent => _ = divergent_run.get_or_insert(i),
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
                let stdout = std::io::stderr().as_fd().try_clone_to_owned()?;
                let status = unattended(recorded(program, rest, trace, &args.hash, args.no_aten))
                    .env("TRITONTUI_CAPTURE", selection)
                    .stdout(std::process::Stdio::from(stdout))
                    .status()
                    .with_context(|| format!("{program}: cannot run"))?;
                if !status.success() {
                    anyhow::bail!("capturing run {} of `{shown}` failed ({status})", n + 1);
                }
                Ok(())
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
            "traces": traces,
            "comparisons": runs,
            "values": escalation,
        });
        print_ignoring_closed_pipe(&format!("{}\n", serde_json::to_string_pretty(&verdict)?))?;
    } else if let (Some(i), true) = (divergent_run, interactive) {
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
        for (i, report) in &comparisons {
            if report.first_divergence.is_some() || report.verdict == Verdict::Inconclusive {
                text += &format!(
                    "\nrun {i} ({}) against run 0 ({}):\n",
                    traces[*i].display(),
                    traces[0].display()
                );
                text += &crate::report::summary(report);
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

/// `tritontui report`: the comparison as an HTML page.
fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let (a, b) = load_pair(&args.a, &args.b)?;
    let analysis = Analysis::run(&a, &b, options(args.align_deadline)?);
    let report = Report::new(&a, &b, &analysis, 1000);
    let page = crate::html::render(&a, &b, &analysis, &report);
    std::fs::write(&args.output, page)
        .with_context(|| format!("{}: cannot write", args.output.display()))?;
    eprintln!("tritontui: wrote {}", args.output.display());
    Ok(())
}
