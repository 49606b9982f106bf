//! Source highlighting with syntect on a worker thread, and the lines the
//! engine marks as common causes of nondeterminism.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use std::sync::mpsc::{Receiver, Sender};
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;
use syntect::parsing::SyntaxSet;

/// Which source: run (false = A) and index into its `sources`.
pub type SourceKey = (bool, u32);

/// A request for the worker.
#[derive(Debug)]
pub struct Request {
    /// Cache key.
    pub key: SourceKey,
    /// The text.
    pub text: String,
    /// `python`, `cpp`, `cuda`, or empty (guessed from the text).
    pub lang: String,
    /// Whether to colour.
    pub color: bool,
}

/// Highlighted source, ready to draw.
#[derive(Debug, Clone)]
pub struct Highlighted {
    /// One styled line per source line.
    pub lines: Vec<Line<'static>>,
    /// (0-based line, reason) for lines that often cause nondeterminism.
    pub suspicious: Vec<(usize, &'static str)>,
}

/// Starts the worker; results come back through `tx` wrapped by `wrap`.
pub fn spawn<M: Send + 'static>(
    tx: Sender<M>,
    wrap: fn(SourceKey, Highlighted) -> M,
) -> Sender<Request> {
    let (requests, rx): (Sender<Request>, Receiver<Request>) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let themes = ThemeSet::load_defaults();
        for request in rx {
            let result = highlight(&syntaxes, &themes, &request);
            if tx.send(wrap(request.key, result)).is_err() {
                break;
            }
        }
    });
    requests
}

/// Highlights one source (also used directly by tests).
pub fn highlight(syntaxes: &SyntaxSet, themes: &ThemeSet, request: &Request) -> Highlighted {
    let suspicious = tritontui_engine::suspects::suspicious_lines(&request.text);
    let plain = || {
        request
            .text
            .lines()
            .map(|l| Line::raw(l.to_owned()))
            .collect()
    };
    let syntax = syntaxes.find_syntax_by_name(crate::source_language::syntax_name(
        &request.lang,
        &request.text,
    ));
    let theme = themes.themes.get("base16-ocean.dark");
    let lines = match (request.color, syntax, theme) {
        (true, Some(syntax), Some(theme)) => {
            let mut h = HighlightLines::new(syntax, theme);
            syntect::util::LinesWithEndings::from(&request.text)
                .map(|line| match h.highlight_line(line, syntaxes) {
                    Ok(ranges) => Line::from(
                        ranges
                            .into_iter()
                            .map(|(style, text)| {
                                let c = style.foreground;
                                Span::styled(
                                    text.trim_end_matches(['\n', '\r']).to_owned(),
                                    Style::new().fg(Color::Rgb(c.r, c.g, c.b)),
                                )
                            })
                            .collect::<Vec<_>>(),
                    ),
                    Err(_) => Line::raw(line.trim_end_matches(['\n', '\r']).to_owned()),
                })
                .collect()
        }
        _ => plain(),
    };
    Highlighted { lines, suspicious }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_is_coloured_and_keeps_every_line() {
        let request = Request {
            key: (false, 0),
            text: "@triton.jit\ndef k(x):\n    return x\n".into(),
            lang: "python".into(),
            color: true,
        };
        let h = highlight(
            &SyntaxSet::load_defaults_newlines(),
            &ThemeSet::load_defaults(),
            &request,
        );
        assert_eq!(h.lines.len(), 3);
        let colours: std::collections::HashSet<_> = h
            .lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
            .collect();
        assert!(
            colours.len() > 1,
            "expected several colours, got {colours:?}"
        );
        assert_eq!(h.lines[1].to_string(), "def k(x):");
    }
}
