//! The process table of a recording, kept current by a thread that reads
//! `/proc` once a second: the recording process, then every descendant as
//! it appears (Inductor's compile workers, say), and the pause points its
//! descendants stop at (their resume files), so a debugger can be taken
//! straight to them. The recorded program's threads never do this work.

use crate::background::RecordSink;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tritontui_trace::format::{PauseRecord, ProcessRecord, Record};

/// How often the table is refreshed.
const INTERVAL: Duration = Duration::from_secs(1);

/// The thread keeping the table current; [`Watcher::stop`] ends it after a
/// last scan.
pub struct Watcher {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Records this process as `main` now and watches its descendants,
    /// recording into the trace at `trace`. Pause files are looked for in
    /// `pause_dir`; record times count from `start`.
    pub fn start(
        sink: RecordSink,
        trace: &Path,
        start: Instant,
        pause_dir: PathBuf,
    ) -> std::io::Result<Watcher> {
        let mut table = Table {
            sink,
            root: std::process::id(),
            start,
            pause_dir,
            trace: trace.display().to_string(),
            host: host_name(),
            boot: boot_id(),
            known: HashSet::new(),
            paused: HashMap::new(),
        };
        table.scan();
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("tritontui-procs".into())
            .spawn(move || {
                let (lock, wake) = &*flag;
                let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, INTERVAL)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    table.scan();
                }
            })?;
        Ok(Watcher {
            stop,
            thread: Some(thread),
        })
    }

    /// Scans a last time and ends the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.halt();
    }
}

/// What the watcher has recorded so far.
struct Table {
    sink: RecordSink,
    root: u32,
    start: Instant,
    pause_dir: PathBuf,
    /// The trace's path, for the messages.
    trace: String,
    host: String,
    boot: String,
    known: HashSet<u32>,
    /// Descendants paused now, with the record that said so.
    paused: HashMap<u32, PauseRecord>,
}

impl Table {
    fn scan(&mut self) {
        if self.known.insert(self.root) {
            self.send(Record::Process(self.describe(self.root, "main")));
        }
        for pid in descendants(Path::new("/proc"), self.root) {
            if self.known.contains(&pid) {
                continue;
            }
            let process = self.describe(pid, "");
            // Compilers and linkers come and go by the hundred; only Python
            // processes (workers, ranks, tools) can record or be debugged
            // usefully.
            let role = if process.cmdline.iter().any(|a| a.contains("compile_worker")) {
                "compile-worker"
            } else if process.cmdline.first().is_some_and(|p| is_python(p)) {
                "child"
            } else {
                continue;
            };
            self.known.insert(pid);
            self.send(Record::Process(ProcessRecord {
                role: role.into(),
                ..process
            }));
        }
        self.pauses();
    }

    /// Pause records for descendants whose resume file appeared or went
    /// (the recording process writes its own).
    fn pauses(&mut self) {
        let ts = self.start.elapsed().as_nanos() as u64;
        let pids: Vec<u32> = self
            .known
            .iter()
            .copied()
            .filter(|&p| p != self.root)
            .collect();
        for pid in pids {
            let file = self.pause_dir.join(format!("tritontui-paused-{pid}"));
            match (
                std::fs::read_to_string(&file),
                self.paused.contains_key(&pid),
            ) {
                (Ok(text), false) => {
                    let mut lines = text.lines().skip(1);
                    let launch = lines.next().and_then(|l| l.trim().parse().ok());
                    let kernel = lines.next().unwrap_or_default().to_owned();
                    let record = PauseRecord {
                        state: "paused".into(),
                        pid,
                        host: self.host.clone(),
                        launch,
                        kernel,
                        resume_file: file.to_string_lossy().into_owned(),
                        by: String::new(),
                        ts,
                    };
                    // The worker's own output goes to Inductor's log, so
                    // the recording process says it.
                    eprintln!(
                        "tritontui: compile worker pid {pid} paused before compiling {}; attach: tritontui attach {} --pid {pid} (or gdb -p {pid}); resume: tritontui resume {} (or kill -USR1 {pid})",
                        record.kernel, self.trace, self.trace
                    );
                    self.paused.insert(pid, record.clone());
                    self.send(Record::Pause(record));
                }
                (Err(_), true) => {
                    if let Some(record) = self.paused.remove(&pid) {
                        self.send(Record::Pause(PauseRecord {
                            state: "resumed".into(),
                            ts,
                            ..record
                        }));
                    }
                }
                _ => {}
            }
        }
    }

    fn send(&self, record: Record) {
        // A closed trace has nobody left to tell.
        let _ = self.sink.send(record);
    }

    fn describe(&self, pid: u32, role: &str) -> ProcessRecord {
        let proc_dir = Path::new("/proc").join(pid.to_string());
        ProcessRecord {
            pid,
            ppid: stat_field(&proc_dir, 4).unwrap_or(0) as u32,
            role: role.into(),
            host: self.host.clone(),
            cmdline: cmdline(&proc_dir),
            start_ns: start_ns(&proc_dir).unwrap_or(0),
            boot_id: self.boot.clone(),
        }
    }
}

/// Whether a program path names a Python interpreter (`python3.12`, ...).
fn is_python(program: &str) -> bool {
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("python"))
}

/// Whether a debugger (any tracer) is attached to this process.
pub fn traced() -> bool {
    tracer_pid(&std::fs::read_to_string("/proc/self/status").unwrap_or_default()) != 0
}

/// The `TracerPid:` of a `/proc/PID/status` text (0: none).
fn tracer_pid(status: &str) -> u32 {
    status
        .lines()
        .find_map(|line| line.strip_prefix("TracerPid:"))
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap_or(0)
}

/// The host name, as Python's `socket.gethostname()` gives it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// The kernel's boot id (empty if unknown).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().to_owned())
        .unwrap_or_default()
}

fn cmdline(proc_dir: &Path) -> Vec<String> {
    std::fs::read(proc_dir.join("cmdline"))
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Field `n` (1-based, as in proc(5)) of `/proc/PID/stat`; the command
/// name may hold spaces and parentheses, so fields are counted after the
/// last `)`.
fn stat_field(proc_dir: &Path, n: usize) -> Option<u64> {
    let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(n - 3)?.parse().ok()
}

/// When the process started, in nanoseconds since the Unix epoch: its
/// start in clock ticks after boot plus the boot time.
fn start_ns(proc_dir: &Path) -> Option<u64> {
    let ticks = stat_field(proc_dir, 22)?;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // USER_HZ is 100 on every Linux ABI that has /proc.
    Some(boot * 1_000_000_000 + ticks * 10_000_000)
}

/// Every descendant of `root`, from the parent links in `proc`.
fn descendants(proc: &Path, root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = stat_field(&entry.path(), 4) {
            children.entry(ppid as u32).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            found.push(child);
            todo.push(child);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tracer_pid_is_read_from_the_status_text() {
        assert_eq!(
            super::tracer_pid("Name:\tpython\nTracerPid:\t4321\nUid:\t0\n"),
            4321
        );
        assert_eq!(super::tracer_pid("TracerPid:\t0\n"), 0);
        assert_eq!(super::tracer_pid("Name:\tpython\n"), 0);
        assert!(!super::traced()); // nobody traces the test runner
    }

    use super::*;

    #[test]
    fn a_child_process_is_found_with_its_command_line() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        let me = std::process::id();
        let found = descendants(Path::new("/proc"), me);
        let dir = Path::new("/proc").join(child.id().to_string());
        // Right after the fork the child still shows our command line.
        let mut line = cmdline(&dir);
        for _ in 0..200 {
            if line.first().is_some_and(|a| a == "sleep") {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            line = cmdline(&dir);
        }
        let parent = stat_field(&dir, 4);
        let started = start_ns(&dir);
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&child.id()), "{found:?}");
        assert_eq!(line, ["sleep", "5"]);
        assert_eq!(parent, Some(u64::from(me)));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_nanos() as u64;
        let started = started.expect("a start time");
        assert!(
            started <= now && now - started < 60_000_000_000,
            "{started} vs {now}"
        );
    }
}
