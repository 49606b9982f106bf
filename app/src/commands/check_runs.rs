//! The program `tritontui check` runs, and how: recorded, unattended,
//! its output on stderr, `-n` times into the check's folder.

use super::args::CheckArgs;
use super::record::{recorded, unattended};
use anyhow::Context;
use std::os::fd::AsFd;

/// The program `check` runs, and how it runs it recorded.
pub(super) struct Runs<'a> {
    pub(super) args: &'a CheckArgs,
    pub(super) program: &'a str,
    pub(super) rest: &'a [String],
    /// The command line, as said.
    pub(super) shown: String,
}

impl Runs<'_> {
    /// Runs the program `-n` times recorded, with the recording options
    /// `env` set, into `PREFIX{i}.msgpack` in the check's folder.
    pub(super) fn all(
        &self,
        prefix: &str,
        env: &[(&str, String)],
    ) -> anyhow::Result<Vec<std::path::PathBuf>> {
        let runs = self.args.runs;
        let mut traces = Vec::new();
        for i in 0..runs {
            let trace = self.args.dir.join(format!("{prefix}{i}.msgpack"));
            let what = format!("{prefix} {}/{runs}", i + 1);
            eprintln!("tritontui: {what}: {}", self.shown);
            let started = std::time::Instant::now();
            self.one(&trace, env, &format!("{prefix} {}", i + 1))?;
            eprintln!(
                "tritontui: {what} done in {:.1} s ({} bytes): {}",
                started.elapsed().as_secs_f64(),
                std::fs::metadata(&trace).map_or(0, |m| m.len()),
                trace.display()
            );
            traces.push(trace);
        }
        Ok(traces)
    }

    /// Runs the program once recorded into `trace`, with the recording
    /// options `env` set; the program's output goes to stderr, so that
    /// stdout holds only the verdict. A run that fails is an error naming
    /// it (`what`) and its trace.
    pub(super) fn one(
        &self,
        trace: &std::path::Path,
        env: &[(&str, String)],
        what: &str,
    ) -> anyhow::Result<()> {
        let args = self.args;
        let stdout = std::io::stderr().as_fd().try_clone_to_owned()?;
        let mut command = unattended(recorded(
            self.program,
            self.rest,
            trace,
            &args.hash,
            args.no_aten,
        ));
        command.envs(env.iter().map(|(k, v)| (k, v)));
        let status = command
            .stdout(std::process::Stdio::from(stdout))
            .status()
            .with_context(|| format!("{}: cannot run", self.program))?;
        if !status.success() {
            anyhow::bail!(
                "{what} of `{}` failed ({status}); its trace is {}",
                self.shown,
                trace.display()
            );
        }
        Ok(())
    }
}
