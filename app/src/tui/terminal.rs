//! Entering and leaving the full-screen terminal, on every exit path.

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use ratatui::DefaultTerminal;
use std::io::stdout;
use std::ops::{Deref, DerefMut};

/// The terminal in raw mode on the alternate screen, with mouse capture.
/// Dropping it (or a panic) puts the terminal back as it was.
pub struct Screen {
    terminal: DefaultTerminal,
}

/// Takes over the terminal. ratatui's hook restores raw mode and the main
/// screen on panic; ours also releases the mouse first.
pub fn enter() -> std::io::Result<Screen> {
    let terminal = ratatui::try_init()?;
    let ratatui_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(stdout(), DisableMouseCapture);
        ratatui_hook(info);
    }));
    if let Err(e) = execute!(stdout(), EnableMouseCapture) {
        restore();
        return Err(e);
    }
    Ok(Screen { terminal })
}

/// Puts the terminal back: mouse released, raw mode off, main screen,
/// cursor shown.
pub fn restore() {
    let _ = execute!(stdout(), DisableMouseCapture);
    ratatui::restore();
    let _ = execute!(stdout(), crossterm::cursor::Show);
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
