//! The `tritontui-synth` command line: a synthetic pair (or two runs of
//! many ranks) written into a folder, with the divergences injected into
//! run B printed one per line.

use crate::{Injection, Spec};
use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;

/// Flags of `tritontui-synth`.
#[derive(Debug, Parser)]
#[command(
    name = "tritontui-synth",
    about = "Writes a synthetic trace pair with chosen divergences (for tests and benchmarks)."
)]
pub struct SynthArgs {
    /// Directory to write run0.msgpack and run1.msgpack into.
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Program launches in run A.
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub launches: usize,
    /// A fault to put into run B: nondet@N, config@N, code@N, input@N,
    /// weight@KERNEL, uninit@N, insert@N or insert@NxCOUNT, shape@N.
    /// Repeatable.
    #[arg(short, long, value_name = "KIND@N")]
    pub inject: Vec<Injection>,
    /// Insert COUNT single extra launches into run B at evenly spread places.
    #[arg(long, value_name = "COUNT", default_value_t = 0)]
    pub scatter_inserts: usize,
    /// Add autotuning launches, which the engine must ignore.
    #[arg(long)]
    pub autotune: bool,
    /// Write a run of this many ranks instead (DIR/run0/rank{r}.msgpack and
    /// DIR/run1/...), which all-reduce an accumulator after every step of
    /// 12 launches; the injections act on --fault-rank only.
    #[arg(long, value_name = "N")]
    pub ranks: Option<u32>,
    /// The rank run B's injections act on (with --ranks).
    #[arg(long, value_name = "RANK", default_value_t = 0, requires = "ranks")]
    pub fault_rank: u32,
    /// In run B, the fault rank's K-th all-reduce (from 0) leaves other
    /// bytes than the other ranks' (with --ranks).
    #[arg(long, value_name = "K", requires = "ranks")]
    pub corrupt_collective: Option<u64>,
}

/// Parses `args` (the program name first) and writes what they ask for.
pub fn run_args<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run(&SynthArgs::try_parse_from(args)?)
}

/// Writes the traces `args` ask for, and prints what was injected.
pub fn run(args: &SynthArgs) -> anyhow::Result<()> {
    let mut injections = args.inject.clone();
    injections.extend(crate::spread_inserts(args.launches, args.scatter_inserts));
    let spec = Spec {
        launches: args.launches,
        injections,
        autotune: args.autotune,
    };
    let create = |path: std::path::PathBuf| -> anyhow::Result<std::io::BufWriter<std::fs::File>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create", dir.display()))?;
        }
        let file = std::fs::File::create(&path)
            .with_context(|| format!("{}: cannot create", path.display()))?;
        Ok(std::io::BufWriter::with_capacity(1 << 20, file))
    };
    let expected = match args.ranks {
        None => crate::generate(
            &spec,
            create(args.out.join("run0.msgpack"))?,
            create(args.out.join("run1.msgpack"))?,
        ),
        Some(ranks) => {
            if args.fault_rank >= ranks {
                anyhow::bail!(
                    "--fault-rank {} is not below --ranks {ranks}",
                    args.fault_rank
                );
            }
            let ranks = crate::RankSpec {
                ranks,
                fault_rank: args.fault_rank,
                corrupt_collective: args.corrupt_collective,
            };
            crate::generate_ranks(&spec, &ranks, |is_b, rank| {
                let run = if is_b { "run1" } else { "run0" };
                create(args.out.join(run).join(format!("rank{rank}.msgpack")))
                    .map_err(std::io::Error::other)
            })
        }
    }
    .with_context(|| format!("{}: cannot write the traces", args.out.display()))?;
    for e in expected {
        let seq = |s: Option<u64>| s.map_or("-".to_owned(), |s| s.to_string());
        println!(
            "{:?}: {} at A#{} B#{} {}",
            e.injection,
            e.kind.as_str(),
            seq(e.a_seq),
            seq(e.b_seq),
            e.kernel
        );
    }
    Ok(())
}
