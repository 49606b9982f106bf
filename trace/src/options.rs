//! The recording options, defined once: each one's keyword (Python's
//! `tritontui.start()` and `record()`), the environment variable that sets
//! it when the keyword is not given (a `TRITONTUI_RECORD` recording, and
//! what `tritontui record` sets), its default and the values it takes.
//! The recorder's Python package and the app's `record` command both read
//! this table.

/// What values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Any text (a glob, a list of launches).
    Text,
    /// On or off: `1`, `true`, `yes` or `0`, `false`, `no`.
    Flag,
    /// A number of bytes.
    Bytes,
    /// A count (a step number).
    Count,
    /// One of these words.
    OneOf(&'static [&'static str]),
}

/// One recording option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordingOption {
    /// Its keyword in `tritontui.start()`.
    pub name: &'static str,
    /// The environment variable read when the keyword is not given.
    pub env: &'static str,
    /// Its value when neither gives one (None: unset).
    pub default: Option<&'static str>,
    /// What values it takes.
    pub values: Values,
}

/// What argument values are hashed: before and after each launch, before
/// only, after only, or none.
pub const HASH: RecordingOption = RecordingOption {
    name: "hash",
    env: "TRITONTUI_HASH",
    default: Some("both"),
    values: Values::OneOf(&["both", "inputs", "outputs", "none"]),
};
/// Whether aten ops are recorded beside the compiled kernels.
pub const ATEN: RecordingOption = RecordingOption {
    name: "aten",
    env: "TRITONTUI_ATEN",
    default: Some("1"),
    values: Values::Flag,
};
/// A glob of the kernel names recorded.
pub const KERNELS: RecordingOption = RecordingOption {
    name: "kernels",
    env: "TRITONTUI_KERNELS",
    default: Some("*"),
    values: Values::Text,
};
/// Whether floating tensors' summary statistics are recorded too.
pub const STATS: RecordingOption = RecordingOption {
    name: "stats",
    env: "TRITONTUI_STATS",
    default: Some("0"),
    values: Values::Flag,
};
/// Whether each written floating tensor's samples (and summary
/// statistics) are recorded, for comparing two programs' numerics.
pub const SAMPLES: RecordingOption = RecordingOption {
    name: "samples",
    env: "TRITONTUI_SAMPLES",
    default: Some("0"),
    values: Values::Flag,
};
/// Whether each tensor argument's rows (the indices of its leading
/// dimension) are hashed each on its own after every launch, so that two
/// runs batching one request differently compare that request's rows.
pub const ROWS: RecordingOption = RecordingOption {
    name: "rows",
    env: "TRITONTUI_ROWS",
    default: Some("0"),
    values: Values::Flag,
};
/// Pause points: launch numbers and kernel-name globs.
pub const BREAK_AT: RecordingOption = RecordingOption {
    name: "break_at",
    env: "TRITONTUI_BREAK",
    default: None,
    values: Values::Text,
};
/// Launches captured by value: launch numbers, ranges and globs.
pub const CAPTURE: RecordingOption = RecordingOption {
    name: "capture",
    env: "TRITONTUI_CAPTURE",
    default: None,
    values: Values::Text,
};
/// The most bytes of captured values (the recorder's own default when
/// unset).
pub const CAPTURE_BUDGET: RecordingOption = RecordingOption {
    name: "capture_budget",
    env: "TRITONTUI_CAPTURE_BUDGET",
    default: None,
    values: Values::Bytes,
};
/// A hash function of DebugMode's run beside the exact hashes (from the
/// environment by name; `start()` also takes a callable).
pub const HASH_FN: RecordingOption = RecordingOption {
    name: "hash_fn",
    env: "TRITONTUI_HASH_FN",
    default: None,
    values: Values::OneOf(&["norm", "hash_tensor"]),
};
/// Whether CUDA graphs stay on (recorded as they replay) or are turned
/// off while recording.
pub const CUDA_GRAPHS: RecordingOption = RecordingOption {
    name: "cuda_graphs",
    env: "TRITONTUI_CUDA_GRAPHS",
    default: Some("1"),
    values: Values::Flag,
};

/// Whether only fingerprints are recorded: each compiled graph call's
/// outputs, each host read and collective, and the parameters and
/// optimizer state at each step's end, hashed; no launch of its own.
pub const FINGERPRINT: RecordingOption = RecordingOption {
    name: "fingerprint",
    env: "TRITONTUI_FINGERPRINT",
    default: Some("0"),
    values: Values::Flag,
};
/// The first step recorded in full: before it only fingerprints are
/// recorded.
pub const FROM_STEP: RecordingOption = RecordingOption {
    name: "from_step",
    env: "TRITONTUI_FROM_STEP",
    default: None,
    values: Values::Count,
};
/// The last step recorded: recording stops when it ends.
pub const TO_STEP: RecordingOption = RecordingOption {
    name: "to_step",
    env: "TRITONTUI_TO_STEP",
    default: None,
    values: Values::Count,
};

/// Every recording option, in `start()`'s order.
pub const ALL: [RecordingOption; 14] = [
    HASH,
    ATEN,
    KERNELS,
    STATS,
    SAMPLES,
    ROWS,
    BREAK_AT,
    CAPTURE,
    CAPTURE_BUDGET,
    HASH_FN,
    CUDA_GRAPHS,
    FINGERPRINT,
    FROM_STEP,
    TO_STEP,
];

impl RecordingOption {
    /// The words an option of [`Values::OneOf`] takes (none for others).
    pub fn words(&self) -> &'static [&'static str] {
        match self.values {
            Values::OneOf(words) => words,
            _ => &[],
        }
    }

    /// Checks `text`, a value of this option as the environment gives it;
    /// the error says what it takes.
    pub fn check(&self, text: &str) -> Result<(), String> {
        let fits = match self.values {
            Values::Text => true,
            Values::Flag => flag(text).is_some(),
            Values::Bytes | Values::Count => text.parse::<u64>().is_ok(),
            Values::OneOf(words) => words.contains(&text),
        };
        if fits {
            return Ok(());
        }
        let takes = match self.values {
            Values::Text => String::new(),
            Values::Flag => "1, true, yes, 0, false or no".to_owned(),
            Values::Bytes => "a number of bytes".to_owned(),
            Values::Count => "a number".to_owned(),
            Values::OneOf(words) => words.join(", "),
        };
        Err(format!(
            "{} ({}) is {text:?}; it takes {takes}",
            self.name, self.env
        ))
    }
}

/// A flag's value as the environment writes it.
pub fn flag(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Some(true),
        "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_a_value_its_option_takes() {
        for option in ALL {
            if let Some(default) = option.default {
                assert_eq!(option.check(default), Ok(()), "{}", option.name);
            }
            assert!(option.env.starts_with("TRITONTUI_"), "{}", option.env);
        }
    }

    #[test]
    fn a_value_an_option_does_not_take_is_refused_with_what_it_takes() {
        assert_eq!(
            HASH.check("all"),
            Err("hash (TRITONTUI_HASH) is \"all\"; it takes both, inputs, outputs, none".into())
        );
        assert!(ATEN.check("maybe").is_err());
        assert!(CAPTURE_BUDGET.check("2GB").is_err());
        assert_eq!(ATEN.check("False"), Ok(()));
        assert_eq!(flag("No"), Some(false));
    }
}
