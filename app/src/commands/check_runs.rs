//! The program `tritontui check` runs, and how: recorded, unattended,
//! its output on stderr, `-n` times into the check's folder. A run of
//! several ranks (torchrun, `torch.multiprocessing.spawn`) leaves a
//! folder of rank traces where a run of one process leaves a trace.

use super::args::CheckArgs;
use super::record::{rank_traces_beside, recorded, unattended};
use anyhow::Context;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

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
    /// `env` set, into `PREFIX{i}.msgpack` in the check's folder (or, for
    /// a run of several ranks, the folder `PREFIX{i}` of its rank traces).
    pub(super) fn all(&self, prefix: &str, env: &[(&str, String)]) -> anyhow::Result<Vec<PathBuf>> {
        let runs = self.args.runs;
        let mut traces = Vec::new();
        for i in 0..runs {
            let trace = self.args.dir.join(format!("{prefix}{i}.msgpack"));
            let what = format!("{prefix} {}/{runs}", i + 1);
            eprintln!("tritontui: {what}: {}", self.shown);
            let started = std::time::Instant::now();
            let recorded = self.one(&trace, env, &format!("{prefix} {}", i + 1))?;
            eprintln!(
                "tritontui: {what} done in {:.1} s ({}): {}",
                started.elapsed().as_secs_f64(),
                size_words(&recorded),
                recorded.display()
            );
            traces.push(recorded);
        }
        Ok(traces)
    }

    /// Runs the program once recorded into `trace`, with the recording
    /// options `env` set; the program's output goes to stderr, so that
    /// stdout holds only the verdict. Returns where the recording lies:
    /// `trace`, or the folder of rank traces of a run of several ranks. A
    /// run that fails, or records nothing, is an error naming it (`what`).
    pub(super) fn one(
        &self,
        trace: &Path,
        env: &[(&str, String)],
        what: &str,
    ) -> anyhow::Result<PathBuf> {
        let args = self.args;
        clear(trace)?;
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
        gathered(trace)?.with_context(|| {
            format!(
                "{what} of `{}` recorded nothing into {} (does the program run in a Python \
                 with tritontui installed?)",
                self.shown,
                trace.display()
            )
        })
    }
}

/// The folder a run of several ranks recording into `trace` gathers its
/// rank traces into: `trace` without its extension.
fn ranks_folder(trace: &Path) -> PathBuf {
    trace.with_extension("")
}

/// Removes what an earlier run recording into `trace` left: the trace,
/// rank traces beside it, the folder they were gathered into.
fn clear(trace: &Path) -> anyhow::Result<()> {
    let gone = |r: std::io::Result<()>, path: &Path| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow::Error::new(e).context(format!("{}: cannot remove", path.display())))
        }
        _ => Ok(()),
    };
    gone(std::fs::remove_file(trace), trace)?;
    for path in rank_traces_beside(trace)? {
        gone(std::fs::remove_file(&path), &path)?;
    }
    let folder = ranks_folder(trace);
    gone(std::fs::remove_dir_all(&folder), &folder)
}

/// Where a run recording into `trace` left its recording: `trace`, or the
/// folder its rank traces are moved into; None when it left none.
fn gathered(trace: &Path) -> anyhow::Result<Option<PathBuf>> {
    let ranks = rank_traces_beside(trace)?;
    if ranks.is_empty() {
        return Ok(trace.exists().then(|| trace.to_owned()));
    }
    let folder = ranks_folder(trace);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("{}: cannot create", folder.display()))?;
    for path in ranks {
        let name = path.file_name().expect("a rank trace has a name");
        std::fs::rename(&path, folder.join(name)).with_context(|| {
            format!("{}: cannot move into {}", path.display(), folder.display())
        })?;
    }
    Ok(Some(folder))
}

/// `1234 bytes`, or `2 ranks, 2468 bytes` for a folder of rank traces.
fn size_words(recorded: &Path) -> String {
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    match std::fs::read_dir(recorded) {
        Ok(entries) => {
            let traces: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            let bytes: u64 = traces.iter().map(|p| size(p)).sum();
            format!("{} ranks, {bytes} bytes", traces.len())
        }
        Err(_) => format!("{} bytes", size(recorded)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_traces_are_gathered_into_a_folder_and_cleared_before_the_next_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let trace = dir.path().join("run0.msgpack");
        assert_eq!(gathered(&trace).expect("gathered"), None);
        // One process: its trace stays where it is.
        std::fs::write(&trace, b"t").expect("write");
        assert_eq!(gathered(&trace).expect("gathered"), Some(trace.clone()));
        clear(&trace).expect("clear");
        assert!(!trace.exists());
        // Ranks: their traces (not another run's, nor a launcher's) move
        // into `run0/`.
        for name in [
            "run0-rank0.msgpack",
            "run0-rank1.msgpack",
            "run1-rank0.msgpack",
            "run0-rank.msgpack",
            "run0.msgpack.launcher",
        ] {
            std::fs::write(dir.path().join(name), b"t").expect("write");
        }
        let folder = gathered(&trace).expect("gathered").expect("a folder");
        assert_eq!(folder, dir.path().join("run0"));
        let mut moved: Vec<String> = std::fs::read_dir(&folder)
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        moved.sort();
        assert_eq!(moved, ["run0-rank0.msgpack", "run0-rank1.msgpack"]);
        assert!(dir.path().join("run1-rank0.msgpack").exists());
        assert_eq!(size_words(&folder), "2 ranks, 2 bytes");
        clear(&trace).expect("clear");
        assert!(!folder.exists() && dir.path().join("run1-rank0.msgpack").exists());
    }
}
