//! The keys of the launch view, in one table: the key handler looks keys
//! up here and the help overlay lists them from here, so neither can
//! forget one. (Keys inside the search box, the rank picker, the numerics
//! and the attach list are the usual editing and list keys; their overlays say
//! so.)

use super::action::Action;
use crossterm::event::KeyCode;

/// One key as typed, with or without Ctrl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Whether Ctrl is held.
    pub ctrl: bool,
}

const fn key(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: false,
    }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

const fn special(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

/// Keys that do one thing, and what.
#[derive(Debug)]
pub struct Binding {
    /// The keys, as the help lists them.
    pub keys: &'static [Key],
    /// What they do, for the help.
    pub help: &'static str,
    /// The action they stand for.
    pub action: fn() -> Action,
}

/// Every key of the launch view.
pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[key('j'), special(KeyCode::Down)],
        help: "move down (the focused pane)",
        action: || Action::Move(1),
    },
    Binding {
        keys: &[key('k'), special(KeyCode::Up)],
        help: "move up",
        action: || Action::Move(-1),
    },
    Binding {
        keys: &[special(KeyCode::PageDown), key(' '), ctrl('d')],
        help: "a page down",
        action: || Action::Page(1),
    },
    Binding {
        keys: &[special(KeyCode::PageUp), ctrl('u')],
        help: "a page up",
        action: || Action::Page(-1),
    },
    Binding {
        keys: &[key('g'), special(KeyCode::Home)],
        help: "first line",
        action: || Action::Top,
    },
    Binding {
        keys: &[key('G'), special(KeyCode::End)],
        help: "last line",
        action: || Action::Bottom,
    },
    Binding {
        keys: &[key('n')],
        help: "next divergence",
        action: || Action::NextDivergence,
    },
    Binding {
        keys: &[key('N')],
        help: "previous divergence",
        action: || Action::PrevDivergence,
    },
    Binding {
        keys: &[key('r')],
        help: "next root cause",
        action: || Action::NextRootCause,
    },
    Binding {
        keys: &[key('f')],
        help: "first divergence",
        action: || Action::FirstDivergence,
    },
    Binding {
        keys: &[key('p')],
        help: "jump to the producer of the divergent input",
        action: || Action::Producer,
    },
    Binding {
        keys: &[special(KeyCode::Tab)],
        help: "next pane: list, detail, source",
        action: || Action::CyclePane,
    },
    Binding {
        keys: &[key('s')],
        help: "show / hide the source",
        action: || Action::ToggleSource,
    },
    Binding {
        keys: &[key('/')],
        help: "search kernels (fuzzy); Enter jumps",
        action: || Action::OpenSearch,
    },
    Binding {
        keys: &[key('R')],
        help: "pick a rank (two runs of several ranks)",
        action: || Action::OpenRanks,
    },
    Binding {
        keys: &[key('e')],
        help: "two programs' numerics: errors and bounds",
        action: || Action::OpenNumerics,
    },
    Binding {
        keys: &[key('a')],
        help: "attach a debugger to a recorded process",
        action: || Action::OpenAttach,
    },
    Binding {
        keys: &[key('?')],
        help: "this help",
        action: || Action::ToggleHelp,
    },
    Binding {
        keys: &[key('q'), ctrl('c')],
        help: "quit",
        action: || Action::Quit,
    },
    Binding {
        keys: &[special(KeyCode::Esc)],
        help: "close an overlay, else quit",
        action: || Action::Cancel,
    },
];

/// What the glyphs between the runs mean, for the help.
pub const GLYPHS: &[(&str, &str)] = &[
    ("=", "equal"),
    ("~", "same bits, other source/config/grid"),
    ("✗", "root cause"),
    ("↓", "diverges, reached from a root cause"),
    ("≈", "inputs differ, every output agrees (absorbed)"),
    ("< >", "only in A / only in B"),
];

/// The action of `key` in the launch view, if it has one.
pub fn action_for(key: Key) -> Option<Action> {
    BINDINGS
        .iter()
        .find(|b| b.keys.contains(&key))
        .map(|b| (b.action)())
}

/// How the help writes a key: `j`, `Ctrl-d`, `PgDn`, `Space`, `↓`.
pub fn name(key: Key) -> String {
    let plain = match key.code {
        KeyCode::Char(' ') => "Space".to_owned(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Up => "↑".to_owned(),
        KeyCode::Down => "↓".to_owned(),
        KeyCode::PageUp => "PgUp".to_owned(),
        KeyCode::PageDown => "PgDn".to_owned(),
        KeyCode::Home => "Home".to_owned(),
        KeyCode::End => "End".to_owned(),
        KeyCode::Tab => "Tab".to_owned(),
        KeyCode::Esc => "Esc".to_owned(),
        other => format!("{other:?}"),
    };
    if key.ctrl {
        format!("Ctrl-{plain}")
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_means_two_things() {
        let keys: Vec<Key> = BINDINGS
            .iter()
            .flat_map(|b| b.keys.iter().copied())
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[i + 1..].contains(k), "{} is bound twice", name(*k));
        }
    }

    #[test]
    fn ctrl_d_and_ctrl_u_page() {
        assert!(matches!(action_for(ctrl('d')), Some(Action::Page(1))));
        assert!(matches!(action_for(ctrl('u')), Some(Action::Page(-1))));
        assert!(action_for(key('d')).is_none(), "plain d means nothing");
    }
}
