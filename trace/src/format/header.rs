//! The header record: what recorded the trace, where, with which options
//! and versions.

use super::{FORMAT_NAME, SCHEMA_MAJOR, SCHEMA_MINOR};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The first record: what was recorded, where and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// `[major, minor]` schema version.
    pub version: (u32, u32),
    /// Name and version of the writer, e.g. `tritontui-recorder 0.1.0`.
    #[serde(default)]
    pub tool: String,
    /// Creation time, nanoseconds since the Unix epoch. Launch timestamps
    /// count from here.
    #[serde(default)]
    pub created_ns: u64,
    /// Host name of the recording machine.
    #[serde(default)]
    pub host: String,
    /// Process id of the recording process.
    #[serde(default)]
    pub pid: u32,
    /// Command line of the recording process.
    #[serde(default)]
    pub argv: Vec<String>,
    /// `torch.__version__`, if known.
    #[serde(default)]
    pub torch: Option<String>,
    /// `triton.__version__`, if known.
    #[serde(default)]
    pub triton: Option<String>,
    /// CUDA runtime version torch was built with, if any.
    #[serde(default)]
    pub cuda: Option<String>,
    /// Names of the devices in use, index = device ordinal.
    #[serde(default)]
    pub devices: Vec<String>,
    /// Recorder options in force.
    #[serde(default)]
    pub options: RecordOptions,
    /// This process's place in a multi-process run (torchrun's rank and
    /// world size), when it has one (1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
    /// What determines numerics besides code and inputs, as text by name
    /// (1.10): torch's numerics flags, config values that differ from
    /// their defaults, environment variables, the CUDA driver.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// A rank of a multi-process run, as its launcher (torchrun) named it in
/// the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distributed {
    /// Global rank (`RANK`).
    pub rank: u32,
    /// Number of ranks (`WORLD_SIZE`).
    pub world_size: u32,
    /// Rank on this node (`LOCAL_RANK`).
    #[serde(default)]
    pub local_rank: u32,
    /// Ranks on this node (`LOCAL_WORLD_SIZE`, 0 if unknown).
    #[serde(default)]
    pub local_world_size: u32,
    /// This node's index among the nodes (`GROUP_RANK`, 0 if unknown).
    #[serde(default)]
    pub node_rank: u32,
    /// The launcher's run id (`TORCHELASTIC_RUN_ID`), shared by the ranks
    /// of one run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
}

impl Header {
    /// A header for the current schema version with every optional field empty.
    pub fn new(tool: impl Into<String>) -> Self {
        Header {
            format: FORMAT_NAME.to_owned(),
            version: (SCHEMA_MAJOR, SCHEMA_MINOR),
            tool: tool.into(),
            created_ns: 0,
            host: String::new(),
            pid: 0,
            argv: Vec::new(),
            torch: None,
            triton: None,
            cuda: None,
            devices: Vec::new(),
            options: RecordOptions::default(),
            distributed: None,
            settings: BTreeMap::new(),
        }
    }
}

/// What the recorder was asked to capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordOptions {
    /// Name of the tensor hash algorithm, or `none`.
    #[serde(default = "default_hash")]
    pub hash: String,
    /// Whether arguments were hashed before each launch.
    #[serde(default)]
    pub hash_inputs: bool,
    /// Whether arguments were hashed after each launch.
    #[serde(default)]
    pub hash_outputs: bool,
    /// Whether summary statistics were computed.
    #[serde(default)]
    pub stats: bool,
    /// Whether written tensors' samples were taken (1.18, `samples`).
    #[serde(default)]
    pub samples: bool,
    /// Whether tensors' rows were hashed (1.21, `rows`).
    #[serde(default)]
    pub rows: bool,
    /// Whether aten ops were recorded besides Inductor kernels.
    #[serde(default)]
    pub aten: bool,
    /// Glob of kernel names recorded (`*` for all).
    #[serde(default = "default_glob")]
    pub kernels: String,
    /// Whether CUDA graphs were turned off so that launches could be seen.
    #[serde(default)]
    pub cuda_graphs_disabled: bool,
    /// Whether a launch inside a graph call may have taken its hashes
    /// before from the data flow (1.5, [`TensorArg::INHERITED`]).
    #[serde(default)]
    pub inherited_hashes: bool,
    /// Whether launches were recorded only as fingerprints (1.22): each
    /// compiled graph call's outputs, host reads, collectives and the
    /// state at each step's end, before `from_step` where it is set.
    #[serde(default)]
    pub fingerprint: bool,
    /// The first step recorded in full (1.22), fingerprints before it.
    #[serde(default)]
    pub from_step: Option<u64>,
    /// The last step recorded (1.22): recording stopped when it ended.
    #[serde(default)]
    pub to_step: Option<u64>,
}

fn default_hash() -> String {
    "none".to_owned()
}

fn default_glob() -> String {
    "*".to_owned()
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            hash: default_hash(),
            hash_inputs: false,
            hash_outputs: false,
            stats: false,
            samples: false,
            rows: false,
            aten: false,
            kernels: default_glob(),
            cuda_graphs_disabled: false,
            inherited_hashes: false,
            fingerprint: false,
            from_step: None,
            to_step: None,
        }
    }
}
