//! Styles, with a monochrome variant for `NO_COLOR`.

use ratatui::style::{Color, Modifier, Style};

/// The styles of every element; monochrome when colour is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used at all.
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    fn fg(&self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// Plain text.
    pub fn text(&self) -> Style {
        Style::new()
    }

    /// Secondary text: labels, equal rows.
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    /// Titles and headings.
    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// A key name in hints.
    pub fn key(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A root-cause divergence.
    pub fn root(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A divergence reached from an upstream one.
    pub fn propagated(&self) -> Style {
        self.fg(Color::Magenta)
    }

    /// A launch present in one run only.
    pub fn only(&self) -> Style {
        self.fg(Color::Yellow)
    }

    /// Same bits although something about the launch differs.
    pub fn benign(&self) -> Style {
        self.fg(Color::Blue)
    }

    /// Equal.
    pub fn equal(&self) -> Style {
        self.fg(Color::Green)
    }

    /// A value that differs between the runs.
    pub fn differs(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The border of the focused pane.
    pub fn focused_border(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// The border of other panes.
    pub fn border(&self) -> Style {
        self.dim()
    }

    /// A verdict of identical runs.
    pub fn verdict_ok(&self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }

    /// A line of source the engine suspects.
    pub fn suspicious(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
}
