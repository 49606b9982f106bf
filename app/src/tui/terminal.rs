//! Entering and leaving the full-screen terminal, on every exit path.
//!
//! This does what `ratatui::init`/`restore` do, plus mouse capture, with a
//! restore that runs once however many paths ask for it: leaving the
//! alternate screen a second time moves the cursor back to where it was
//! saved, and the shell would then overwrite a panic message.

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::{DefaultTerminal, Terminal};
use std::io::stdout;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the terminal is taken over.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The terminal in raw mode on the alternate screen, with mouse capture.
/// Dropping it, or a panic, puts the terminal back as it was.
pub struct Screen {
    terminal: DefaultTerminal,
}

/// Takes over the terminal and installs a panic hook that gives it back
/// before the panic message is printed.
pub fn enter() -> std::io::Result<Screen> {
    let print = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        print(info);
    }));
    TAKEN.store(true, Ordering::SeqCst);
    let taken = enable_raw_mode()
        .and_then(|()| execute!(stdout(), EnterAlternateScreen, EnableMouseCapture))
        .and_then(|()| Terminal::new(CrosstermBackend::new(stdout())));
    match taken {
        Ok(terminal) => Ok(Screen { terminal }),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Puts the terminal back, once: mouse released, main screen, raw mode
/// off, cursor shown.
pub fn restore() {
    if !TAKEN.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = execute!(
        stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

impl Screen {
    /// Gives the terminal back while `f` runs (a debugger, say), then takes
    /// it over again and redraws everything on the next frame.
    pub fn suspended<T>(&mut self, f: impl FnOnce() -> T) -> std::io::Result<T> {
        restore();
        let result = f();
        TAKEN.store(true, Ordering::SeqCst);
        enable_raw_mode()?;
        execute!(stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        self.terminal.clear()?;
        Ok(result)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

impl Deref for Screen {
    type Target = DefaultTerminal;

    fn deref(&self) -> &DefaultTerminal {
        &self.terminal
    }
}

impl DerefMut for Screen {
    fn deref_mut(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}
