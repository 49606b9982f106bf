//! Attach targets: the processes a trace recorded, whether each is alive
//! and paused, and how to hand the terminal to a debugger attached to one.
//!
//! Strings from a trace (host names, command lines, kernel names) only
//! ever go into an argument vector, never through a shell.

use std::path::{Path, PathBuf};
use std::process::Command;
use tritontui_trace::Trace;
use tritontui_trace::format::PauseRecord;

/// One recorded process and what can be done with it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Which trace listed it (`A`, `B`, or the trace's file name).
    pub run: String,
    pub pid: u32,
    pub role: String,
    pub host: String,
    pub cmdline: Vec<String>,
    pub alive: Alive,
    /// Where it is paused now, if it is.
    pub paused: Option<Paused>,
    /// The recorded program ran on a GPU (cuda-gdb is preferred).
    pub gpu: bool,
}

/// Whether a recorded process still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alive {
    Yes,
    /// No such process here, or another program now has its pid.
    Ended,
    /// It ran on another host; this one cannot tell.
    Remote,
}

/// A pause point a process is stopped at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paused {
    pub launch: Option<u64>,
    pub kernel: String,
    pub resume_file: PathBuf,
}

impl Target {
    /// `paused before #12 triton_poi_fused_add_0`, `running`, `ended`, ...
    pub fn state(&self) -> String {
        match (&self.paused, self.alive) {
            (_, Alive::Remote) => format!("on host {} (another machine or boot)", self.host),
            (_, Alive::Ended) => "ended".into(),
            (Some(p), Alive::Yes) => match p.launch {
                Some(seq) => format!("paused before #{seq} {}", p.kernel),
                None => format!("paused compiling {}", p.kernel),
            },
            (None, Alive::Yes) => "running".into(),
        }
    }
}

/// The host name, as the recorder writes it (Python's `socket.gethostname()`).
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_default()
}

/// This machine's boot id (empty if unknown).
fn this_boot() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().to_owned())
        .unwrap_or_default()
}

/// The attach targets of a trace, labelled `run`.
pub fn targets(trace: &Trace, run: &str) -> Vec<Target> {
    let (host, boot) = (this_host(), this_boot());
    // A GPU launch, or (before any launch) a GPU in the header.
    let gpu = trace.launches.iter().any(|l| l.device >= 0)
        || trace.header.devices.iter().any(|d| !d.starts_with("cpu"));
    trace
        .processes
        .iter()
        .map(|p| {
            // The boot id tells machines that share a host name apart (and
            // a reboot, after which the pid means nothing).
            let elsewhere = if p.boot_id.is_empty() || boot.is_empty() {
                !p.host.is_empty() && p.host != host
            } else {
                p.boot_id != boot
            };
            let alive = if elsewhere {
                Alive::Remote
            } else if is_running(p.pid, &p.cmdline) {
                Alive::Yes
            } else {
                Alive::Ended
            };
            let paused = (alive == Alive::Yes)
                .then(|| paused_now(&trace.pauses, p.pid))
                .flatten();
            Target {
                run: run.to_owned(),
                pid: p.pid,
                role: p.role.clone(),
                host: p.host.clone(),
                cmdline: p.cmdline.clone(),
                alive,
                paused,
                gpu,
            }
        })
        .collect()
}

/// Whether `pid` runs here with the recorded command line (a reused pid
/// runs something else).
fn is_running(pid: u32, cmdline: &[String]) -> bool {
    let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let now: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    cmdline.is_empty() || now == cmdline
}

/// The pause `pid` is stopped at: its last pause record says `paused` and
/// the resume file still exists.
fn paused_now(pauses: &[PauseRecord], pid: u32) -> Option<Paused> {
    let last = pauses.iter().rev().find(|p| p.pid == pid)?;
    let file = PathBuf::from(&last.resume_file);
    (last.state == "paused" && file.exists()).then(|| Paused {
        launch: last.launch,
        kernel: last.kernel.clone(),
        resume_file: file,
    })
}

/// Resumes every paused process of `targets` by removing its resume file;
/// returns the pids resumed.
pub fn resume(targets: &[Target]) -> std::io::Result<Vec<u32>> {
    let mut resumed = Vec::new();
    for t in targets {
        if let Some(p) = &t.paused {
            match std::fs::remove_file(&p.resume_file) {
                Ok(()) => resumed.push(t.pid),
                // It went on by itself meanwhile.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(resumed)
}

/// Why a debugger cannot attach to a target, in words that say what to do
/// instead; None when it can.
pub fn obstacle(target: &Target) -> Option<String> {
    match target.alive {
        Alive::Remote => {
            return Some(format!(
                "process {} ran on host {} (another machine or boot), not here: attach on that host, or re-run the program here with `tritontui record --break ...`",
                target.pid, target.host
            ));
        }
        Alive::Ended => {
            return Some(format!(
                "process {} is not running any more: re-run it with `tritontui record --break LAUNCH_OR_GLOB -- ...` (or TRITONTUI_BREAK) to stop it where you need",
                target.pid
            ));
        }
        Alive::Yes => {}
    }
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    let root = is_root();
    match scope {
        // A paused process called prctl(PR_SET_PTRACER_ANY) itself.
        1 if !root && target.paused.is_none() => Some(format!(
            "ptrace_scope is 1, so only a parent may attach to process {}: run it with `--break` (a paused process allows any debugger), use sudo, or set TRITONTUI_ALLOW_ATTACH=1 when recording",
            target.pid
        )),
        2 if !root => Some(format!(
            "ptrace_scope is 2: only root may attach to process {}; use sudo",
            target.pid
        )),
        3 => Some("ptrace_scope is 3: attaching is disabled on this machine".to_owned()),
        _ => None,
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// The debugger command for a target: `$TRITONTUI_DEBUGGER` (a program and
/// its arguments, split on whitespace) if set, else cuda-gdb for a GPU
/// trace and gdb otherwise, or the other when only it is installed; then `-p PID` and commands that
/// show where a paused process is, or (cuda-gdb) stop at the kernel. A
/// configured debugger must take gdb's `-iex`, `-p` and `-ex`.
pub fn debugger_command(target: &Target) -> Command {
    let configured = std::env::var("TRITONTUI_DEBUGGER").ok();
    let words = debugger_words(configured.as_deref(), target.gpu, on_path);
    let program = words.first().cloned().unwrap_or_else(|| "gdb".into());
    let cuda = Path::new(&program)
        .file_name()
        .is_some_and(|n| n == "cuda-gdb");
    let mut command = Command::new(&program);
    command.args(&words[1..]);
    // Attaching to a Python process loads hundreds of libraries; their
    // messages must not stop at a pager prompt.
    command.arg("-iex").arg("set pagination off");
    command.arg("-p").arg(target.pid.to_string());
    if let Some(paused) = &target.paused {
        let line = match paused.launch {
            Some(seq) => format!(
                "tritontui: paused before launch #{seq} {}; `continue` runs it",
                paused.kernel
            ),
            None => format!("tritontui: paused compiling {}", paused.kernel),
        };
        command
            .arg("-ex")
            .arg(format!("echo {}\\n", gdb_quoted(&line)));
        command.arg("-ex").arg("bt 8");
        if cuda && paused.launch.is_some() {
            command.arg("-ex").arg("set breakpoint pending on");
            command.arg("-ex").arg(format!("break {}", paused.kernel));
        }
    }
    command
}

/// The debugger and its own arguments: the configured command split on
/// whitespace, else cuda-gdb for a GPU trace and gdb otherwise, or the
/// other one when only it is `installed`.
fn debugger_words(
    configured: Option<&str>,
    gpu: bool,
    installed: impl Fn(&str) -> bool,
) -> Vec<String> {
    if let Some(command) = configured.filter(|c| !c.trim().is_empty()) {
        return command.split_whitespace().map(str::to_owned).collect();
    }
    let preferred = if gpu {
        ["cuda-gdb", "gdb"]
    } else {
        ["gdb", "cuda-gdb"]
    };
    let found = preferred
        .into_iter()
        .find(|p| installed(p))
        .unwrap_or("gdb");
    vec![found.to_owned()]
}

/// Text safe inside gdb's `echo` (backslashes escaped).
fn gdb_quoted(text: &str) -> String {
    text.replace('\\', "\\\\")
}

/// Whether `program` is found on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(alive: Alive, paused: Option<Paused>) -> Target {
        Target {
            run: "A".into(),
            pid: 4242,
            role: "main".into(),
            host: "elsewhere".into(),
            cmdline: vec!["python".into(), "x; rm -rf /".into()],
            alive,
            paused,
            gpu: false,
        }
    }

    #[test]
    fn dead_and_remote_processes_say_what_to_do() {
        let ended = obstacle(&target(Alive::Ended, None)).expect("an obstacle");
        assert!(ended.contains("--break"), "{ended}");
        let remote = obstacle(&target(Alive::Remote, None)).expect("an obstacle");
        assert!(remote.contains("elsewhere"), "{remote}");
    }

    #[test]
    fn a_paused_target_gets_commands_that_show_where_it_is() {
        let paused = Paused {
            launch: Some(7),
            kernel: "triton_poi_fused_0".into(),
            resume_file: "/tmp/x".into(),
        };
        let t = target(Alive::Yes, Some(paused));
        let command = debugger_command(&t);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[2..4], ["-p", "4242"]);
        assert!(args.iter().any(|a| a.contains("paused before launch #7")));
        assert!(args.iter().any(|a| a == "bt 8"));
        // The command line of the process never reaches the debugger.
        assert!(!args.iter().any(|a| a.contains("rm -rf")));
    }

    #[test]
    fn the_debugger_is_the_configured_one_else_cuda_gdb_for_a_gpu_trace() {
        let both = |_: &str| true;
        let only_gdb = |p: &str| p == "gdb";
        assert_eq!(debugger_words(None, true, both), ["cuda-gdb"]);
        assert_eq!(debugger_words(None, false, both), ["gdb"]);
        assert_eq!(debugger_words(None, true, only_gdb), ["gdb"]);
        assert_eq!(
            debugger_words(None, false, |p| p == "cuda-gdb"),
            ["cuda-gdb"]
        );
        assert_eq!(
            debugger_words(Some("rr-gdb --quiet"), true, both),
            ["rr-gdb", "--quiet"]
        );
        assert_eq!(debugger_words(Some("  "), false, both), ["gdb"]);
    }

    #[test]
    fn the_state_names_the_pause() {
        let paused = Paused {
            launch: None,
            kernel: "k".into(),
            resume_file: "/tmp/x".into(),
        };
        assert_eq!(
            target(Alive::Yes, Some(paused)).state(),
            "paused compiling k"
        );
        assert_eq!(target(Alive::Ended, None).state(), "ended");
        assert_eq!(
            target(Alive::Remote, None).state(),
            "on host elsewhere (another machine or boot)"
        );
    }
}
