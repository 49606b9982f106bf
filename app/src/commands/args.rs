//! The command line's flags, parsed by clap.

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use tritontui_trace::options;

/// Kernel-level divergence debugger for torch.compile programs.
///
/// With no subcommand, opens the terminal UI: on two traces to compare
/// them, on one to browse it, on none to show the built-in demo pair.
#[derive(Debug, Parser)]
#[command(
    name = "tritontui",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do instead of opening the UI.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Traces to open in the UI: A and B to compare, or one to browse.
    #[arg(value_name = "TRACE", num_args = 0..=2)]
    pub traces: Vec<PathBuf>,
    /// Seconds the alignment may search for a minimal diff.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub align_deadline: f64,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare two traces: where do the runs diverge, and why?
    ///
    /// Exit status: 0 identical or benign, 1 divergent, 2 error, 3
    /// inconclusive (a trace did not see everything, and nothing seen
    /// differs).
    Diff(DiffArgs),
    /// Print a trace as JSON Lines: header, processes, kernels, graph
    /// inputs, launches with named arguments, markers, end.
    Dump(DumpArgs),
    /// Run a program with the recorder on: sets TRITONTUI_RECORD (and the
    /// options below) and runs COMMAND. Needs the `tritontui` Python package
    /// installed where COMMAND's Python finds it.
    Record(RecordArgs),
    /// Run a program several times under the recorder and compare the runs:
    /// is it deterministic, and if not, which kernel diverged first?
    ///
    /// Opens the UI at the first divergence when stdout is a terminal;
    /// prints the summary (or --json) otherwise. Exit status: 0
    /// deterministic, 1 divergent, 2 error, 3 inconclusive (a trace did not
    /// see everything, and nothing seen differs).
    Check(CheckArgs),
    /// Check the ranks of one run against each other through their
    /// collectives: same collectives in the same order on every member of
    /// a process group, and the same result where all members must hold
    /// it (all-reduce, all-gather, broadcast).
    ///
    /// Exit status: 0 the ranks agree, 1 they do not, 2 error.
    Ranks(RanksArgs),
    /// Compare the values a launch's tensors held in two runs (captured
    /// with `record --capture`): elements that differ, max/mean abs and
    /// relative difference, RMSE, ULP distance, NaN/Inf in one run, the
    /// worst element.
    ///
    /// Exit status: 0 the values are equal, 1 they differ, 2 error.
    Values(ValuesArgs),
    /// Write a standalone reproducer of one captured launch: a Python
    /// script and the launch's captured values, which re-run that kernel
    /// alone K times on fresh copies of its inputs (Inductor's Triton and
    /// C++ kernels, aten ops). The script exits 1 when the kernel alone is
    /// nondeterministic.
    Repro(ReproArgs),
    /// Write the comparison of two traces as one self-contained HTML page.
    Report(ReportArgs),
    /// Check every recorded launch against constraint profiles (allowed
    /// dtypes, alignment, contiguity, tensor sizes, denied kernels and
    /// ops): the launches a target would refuse.
    ///
    /// Exit status: 0 no violation, 1 violations, 2 error.
    Lint(LintArgs),
    /// Attach a debugger to a recorded process (gdb, or cuda-gdb for a GPU
    /// trace; $TRITONTUI_DEBUGGER overrides), or list the processes.
    Attach(AttachArgs),
    /// Resume the processes of a trace that are paused at a pause point.
    Resume(ResumeArgs),
}

/// Flags of `tritontui diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Trace of run A (the reference), or a folder of its rank traces
    /// (compared rank by rank with B's).
    pub a: PathBuf,
    /// Trace of run B, or a folder of its rank traces.
    pub b: PathBuf,
    /// Print the JSON report (documented in docs/diff-json.md) instead of
    /// the summary.
    #[arg(long)]
    pub json: bool,
    /// List at most this many divergences in the JSON `divergences` array.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub limit: usize,
    /// Seconds the alignment may search for a minimal diff before settling
    /// for a valid, possibly longer one.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub align_deadline: f64,
    /// A reference run of the program (in float64, as the accuracy
    /// minifier reruns it), recorded with --samples: two programs'
    /// numerics are judged by the minifier's rule against it (run B's
    /// error at most 2 or 3 times run A's, plus 1e-5).
    #[arg(long, value_name = "TRACE")]
    pub reference: Option<PathBuf>,
    /// Which request of each run to compare by its rows, in traces
    /// recorded with --rows (`--request A:0 B:17`; request 0 of each by
    /// default).
    #[arg(long, num_args = 2, value_names = ["A:N", "B:N"])]
    pub request: Vec<String>,
    /// How many requests each run batches, in traces recorded with --rows
    /// (`--batch A:1 B:64`; by default found from the first tensor whose
    /// shapes differ in their first extent alone, A holding one request).
    #[arg(long, num_args = 2, value_names = ["A:N", "B:N"])]
    pub batch: Vec<String>,
}

/// Flags of `tritontui ranks`.
#[derive(Debug, Args)]
pub struct RanksArgs {
    /// The run: a folder of its rank traces.
    pub run: PathBuf,
    /// Print the JSON report (documented in docs/diff-json.md) instead of
    /// the summary.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `tritontui values`.
#[derive(Debug, Args)]
pub struct ValuesArgs {
    /// Run A's trace.
    pub a: PathBuf,
    /// Run B's trace.
    pub b: PathBuf,
    /// The launch, by its number in run A (run B's is the one aligned with
    /// it).
    #[arg(long, value_name = "N")]
    pub launch: u64,
    /// Print the JSON report (documented in docs/diff-json.md) instead of
    /// the table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `tritontui lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// The trace.
    pub trace: PathBuf,
    /// A profile: a TOML file (docs/lint.md), or a shipped one by name
    /// (no-float64-on-gpu, aligned-16); repeat to apply several. Without
    /// it, both shipped profiles.
    #[arg(long, value_name = "FILE_OR_NAME")]
    pub profile: Vec<String>,
    /// Print the report as JSON instead of one line per violation.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `tritontui repro`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    /// The trace.
    pub trace: PathBuf,
    /// The launch, by its number (captured with `record --capture N`).
    #[arg(long, value_name = "N")]
    pub launch: u64,
    /// The folder to write the reproducer into.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Repetitions the script runs by default.
    #[arg(long, default_value_t = crate::repro::DEFAULT_RUNS, value_name = "K")]
    pub runs: u32,
    /// Run B's trace: the script compares the outputs with its capture of
    /// the aligned launch too.
    #[arg(long, value_name = "TRACE_B")]
    pub against: Option<PathBuf>,
}

/// Flags of `tritontui dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The trace.
    pub trace: PathBuf,
}

/// Flags of `tritontui record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The trace to write; `{pid}`, `{rank}`, `{local_rank}` and
    /// `{world_size}` are filled in (under torchrun each rank writes its
    /// own trace, `-rank{rank}` added to a path without `{rank}`).
    #[arg(short, long, value_name = "TRACE")]
    pub output: PathBuf,
    /// What to hash: both (before and after each launch), inputs, outputs,
    /// none.
    #[arg(long, default_value = options::HASH.default,
          value_parser = PossibleValuesParser::new(options::HASH.words().iter().copied()))]
    pub hash: String,
    /// Do not record aten ops, only compiled kernels.
    #[arg(long)]
    pub no_aten: bool,
    /// Record only kernels whose name matches this glob.
    #[arg(long, default_value = options::KERNELS.default, value_name = "GLOB")]
    pub kernels: String,
    /// Pause before this launch (a sequence number) or the first launch of
    /// each kernel matching this glob; comma-separated. The process waits
    /// for `tritontui attach` or `tritontui resume`.
    #[arg(long = "break", value_name = "LAUNCH_OR_GLOB")]
    pub break_at: Option<String>,
    /// Copy the tensors of these launches by value, before and after them,
    /// into TRACE.values/: launch numbers, ranges (40-45) and kernel-name
    /// globs, comma-separated.
    #[arg(long, value_name = "LAUNCHES_OR_GLOBS")]
    pub capture: Option<String>,
    /// The most bytes of captured values per trace (default 2 GB).
    #[arg(long, value_name = "BYTES")]
    pub capture_budget: Option<u64>,
    /// Also hash every recorded tensor with DebugMode's function of this
    /// name, compared where a tensor has no exact hash (`--hash none`).
    #[arg(long, value_name = "NAME",
          value_parser = PossibleValuesParser::new(options::HASH_FN.words().iter().copied()))]
    pub hash_fn: Option<String>,
    /// Also keep samples of every written floating tensor (and its
    /// statistics): what `diff` needs to compare two different programs'
    /// numerics (eager against compiled, two configs, fp32 against bf16).
    #[arg(long)]
    pub samples: bool,
    /// Also hash each row of every tensor (each index of its leading
    /// dimension) on its own: what `diff` needs to compare one request
    /// alone against the same request inside a batch.
    #[arg(long)]
    pub rows: bool,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Flags of `tritontui attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The trace whose processes to attach to.
    pub trace: PathBuf,
    /// The process; by default the one paused (or the only live one).
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Print the targets (pid, role, host, alive, paused at) instead.
    #[arg(long)]
    pub list: bool,
}

/// Flags of `tritontui resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The trace whose paused processes to resume.
    pub trace: PathBuf,
}

/// Flags of `tritontui check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// How many times to run the program.
    #[arg(short = 'n', long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..))]
    pub runs: u32,
    /// Directory for the traces (run0.msgpack, run1.msgpack, ...); created
    /// if needed.
    #[arg(long, default_value = "tritontui-check", value_name = "DIR")]
    pub dir: PathBuf,
    /// Print the JSON verdict (docs/diff-json.md, one report per run after
    /// the first) instead of the summary or the UI.
    #[arg(long)]
    pub json: bool,
    /// What to hash: both, inputs, outputs.
    #[arg(long, default_value = options::HASH.default, value_parser = ["both", "inputs", "outputs"])]
    pub hash: String,
    /// Do not record aten ops, only compiled kernels.
    #[arg(long)]
    pub no_aten: bool,
    /// Seconds the alignment may search for a minimal diff.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub align_deadline: f64,
    /// Do not run the program twice more, once runs diverge, to capture
    /// the values of the first divergence that reaches the results.
    #[arg(long)]
    pub no_values: bool,
    /// For long runs: run the program twice recording only fingerprints
    /// (graph calls' outputs, host reads, collectives, the state at each
    /// step's end), find the first step where they differ, then record
    /// only that step and the one before it in full.
    #[arg(long)]
    pub steps: bool,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Flags of `tritontui report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Trace of run A (the reference), or a folder of its rank traces
    /// (compared rank by rank with B's).
    pub a: PathBuf,
    /// Trace of run B, or a folder of its rank traces.
    pub b: PathBuf,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Seconds the alignment may search for a minimal diff.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub align_deadline: f64,
    /// A reference run (see `diff --reference`).
    #[arg(long, value_name = "TRACE")]
    pub reference: Option<PathBuf>,
}
