//! The real binary in a real terminal (tmux): open the demo, find the first
//! divergence selected, search a kernel and jump to it, quit, and check the
//! terminal was given back as it was, after a normal exit and after a panic.

#![allow(clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server with one 100×30 shell pane, killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start() -> Tmux {
        let socket = format!(
            "tritontui-e2e-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        );
        let tmux = Tmux { socket };
        let ok = Command::new("tmux")
            .args([
                "-L",
                &tmux.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "30",
            ])
            .args([
                "-s",
                "e2e",
                "env -u NO_COLOR PS1='$ ' bash --norc --noprofile",
            ])
            .status()
            .unwrap_or_else(|e| panic!("tmux is needed for this test (apt-get install tmux): {e}"));
        assert!(ok.success(), "tmux did not start");
        tmux
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn type_line(&self, line: &str) {
        self.send(&["-l", line]);
        self.send(&["Enter"]);
    }

    /// The screen, with SGR escapes when `escapes`.
    fn capture(&self, escapes: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", "e2e"];
        if escapes {
            args.push("-e");
        }
        self.tmux(&args)
    }

    fn wait_for(&self, needle: &str) -> String {
        self.wait_until(needle, |screen| screen.contains(needle))
    }

    /// Waits for the shell's `EXIT=<status>` line, not the command that
    /// prints it, and returns the status.
    fn wait_for_exit(&self) -> String {
        let screen = self.wait_until("EXIT=<digits>", |screen| exit_status(screen).is_some());
        exit_status(&screen).unwrap_or_default()
    }

    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture(false);
            if done(&screen) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(20) {
                panic!("timed out waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The line drawn in reverse video (the selection).
    fn selected_line(&self) -> String {
        let screen = self.capture(true);
        let line = screen
            .lines()
            .find(|l| l.contains("\x1b[7m") || l.contains(";7m"))
            .unwrap_or_else(|| panic!("no reversed line in:\n{screen}"));
        strip_escapes(line)
    }

    /// Checks the pane is back to a plain shell: main screen, cursor shown,
    /// no mouse reporting, line editing (canonical mode) and echo on.
    fn assert_restored(&self) {
        let flags = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            "e2e",
            "#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{mouse_button_flag} #{mouse_standard_flag} #{mouse_sgr_flag}",
        ]);
        assert_eq!(
            flags.trim(),
            "0 1 0 0 0 0",
            "alternate, cursor, mouse flags after exit"
        );
        // The marker is computed, so the echoed command line cannot match it.
        self.type_line("stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo; echo STTY-$((40+2))");
        let screen = self.wait_for("STTY-42");
        // Whole lines only: a wrapped command line may end in "echo" too.
        let modes: Vec<&str> = screen
            .lines()
            .map(str::trim)
            .filter(|l| matches!(*l, "icanon" | "-icanon" | "echo" | "-echo"))
            .collect();
        assert_eq!(
            modes,
            ["icanon", "echo"],
            "terminal modes after exit:\n{screen}"
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The status in a line `EXIT=<digits>`.
fn exit_status(screen: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        let digits = l.trim().strip_prefix("EXIT=")?;
        (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
            .then(|| digits.to_owned())
    })
}

fn strip_escapes(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_tritontui")
}

#[test]
fn the_demo_opens_at_the_first_divergence_and_search_jumps() {
    // The bundled demo, recorded on an H200: Inductor's index_add kernel
    // (tl.atomic_add) is the root cause.
    let tmux = Tmux::start();
    tmux.type_line(&format!("{}; echo EXIT=$?", binary()));
    tmux.wait_for("DIVERGENT");
    let selected = tmux.selected_line();
    assert!(
        selected.contains("#1 triton_poi_fused_index_add_zero"),
        "{selected}"
    );
    assert!(selected.contains('✗'), "{selected}");
    let screen = tmux.capture(false);
    assert!(
        screen.contains("nondeterministic-kernel · root cause"),
        "{screen}"
    );

    tmux.send(&["/"]);
    tmux.wait_for("search kernels");
    tmux.send(&["-l", "red_sum"]);
    tmux.wait_for("of 11 kernels");
    tmux.send(&["Enter"]);
    tmux.wait_for("triton_red_fused_sum_1: launch 1 of 1");
    let selected = tmux.selected_line();
    assert!(
        selected.contains("#10 triton_red_fused_sum_1"),
        "{selected}"
    );

    tmux.send(&["q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    tmux.assert_restored();
}

#[test]
fn a_panic_gives_the_terminal_back() {
    let tmux = Tmux::start();
    tmux.type_line(&format!(
        "TRITONTUI_DEBUG_PANIC=1 RUST_BACKTRACE=0 {}; echo EXIT=$?",
        binary()
    ));
    assert_eq!(tmux.wait_for_exit(), "101", "a panic exits 101");
    let screen = tmux.capture(false);
    // The message is on the main screen, whole, above the shell's next line.
    assert!(
        screen.contains("panicked at") && screen.contains("TRITONTUI_DEBUG_PANIC is set"),
        "{screen}"
    );
    tmux.assert_restored();
}

#[test]
fn two_runs_of_ranks_open_at_the_earliest_cause_and_r_picks_a_rank() {
    // Four ranks; rank 2 runs a nondeterministic kernel in run B, which
    // reaches the other ranks through the all-reduces.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().display().to_string();
    tritontui_synth::cli::run_args([
        "tritontui-synth",
        "--ranks",
        "4",
        "-n",
        "120",
        "--inject",
        "nondet@50",
        "--fault-rank",
        "2",
        "-o",
        out.as_str(),
    ])
    .expect("synth");
    let tmux = Tmux::start();
    tmux.type_line(&format!(
        "cd {} && {} run0 run1; echo EXIT=$?",
        dir.path().display(),
        binary()
    ));
    let screen = tmux.wait_for("rank 2 of 4 (earliest cause)");
    assert!(screen.contains("nondeterministic-kernel"), "{screen}");
    assert!(
        tmux.selected_line().contains("triton_poi_fused_mul_2"),
        "{}",
        tmux.selected_line()
    );

    tmux.send(&["R"]);
    let picker = tmux.wait_for("Enter open");
    assert!(
        picker.contains("│  0       divergent  A#64 B#64 c10d::allreduce_  collective"),
        "{picker}"
    );
    assert!(
        picker.contains("│• 2     ✗ divergent  A#54 B#54 triton_poi_fused_mul_2"),
        "{picker}"
    );
    // Up twice from rank 2: rank 0, whose divergence came in through the
    // all-reduce.
    tmux.send(&["Up", "Up", "Enter"]);
    let screen = tmux.wait_for("rank 0 of 4 (earliest cause: rank 2)");
    assert!(screen.contains("collective"), "{screen}");
    assert!(
        tmux.selected_line().contains("c10d::allreduce_"),
        "{}",
        tmux.selected_line()
    );

    tmux.send(&["q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    tmux.assert_restored();
}
