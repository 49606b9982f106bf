//! An opt-in log of how long the TUI takes to show its first frame and to
//! answer each key (`TRITONTUI_TIMINGS=FILE`), read by `scripts/bench-tui`.

use std::io::Write;
use std::time::Instant;

/// Where timings go, if anywhere.
pub struct Timings {
    file: Option<std::fs::File>,
    start: Instant,
    first_frame: bool,
    first_session_frame: bool,
}

impl Timings {
    /// Opens the file named by `TRITONTUI_TIMINGS`, if set.
    pub fn from_env(start: Instant) -> Timings {
        let file =
            std::env::var_os("TRITONTUI_TIMINGS").and_then(|path| std::fs::File::create(path).ok());
        Timings {
            file,
            start,
            first_frame: true,
            first_session_frame: true,
        }
    }

    fn write(&mut self, what: &str, ms: f64) {
        if let Some(file) = &mut self.file {
            let _ = writeln!(file, "{what} {ms:.3}");
        }
    }

    /// A frame was drawn; `loaded` says whether it showed the comparison.
    pub fn frame(&mut self, loaded: bool) {
        let ms = self.start.elapsed().as_secs_f64() * 1e3;
        if std::mem::take(&mut self.first_frame) {
            self.write("first_frame_ms", ms);
        }
        if loaded && std::mem::take(&mut self.first_session_frame) {
            self.write("loaded_frame_ms", ms);
        }
    }

    /// A key read at `since` has been answered with a drawn frame.
    pub fn key(&mut self, since: Instant) {
        self.write("key_ms", since.elapsed().as_secs_f64() * 1e3);
    }
}
