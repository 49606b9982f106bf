//! Constraint profiles: what a target accepts, as a small TOML file.
//!
//! ```toml
//! description = "what this profile is for"   # optional
//!
//! [tensors]
//! devices = "cuda"            # which tensors: "any" (default), "cuda", "cpu"
//! allow_dtypes = ["float16", "bfloat16", "float32"]   # only these
//! deny_dtypes = ["float64"]   # never these
//! align_bytes = 16            # the first element's address
//! row_bytes_multiple = 16     # bytes of the last dimension, when its stride is 1
//! contiguous = true           # row-major, no gaps
//! max_bytes = 2147483648      # bytes a tensor spans
//!
//! [kernels]
//! deny = ["aten::_fft_*", "*fallback*"]   # kernel and op names, globs
//! ```
//!
//! Every key is optional; an unknown key is an error, so that a misspelled
//! rule never passes silently. Allocations (memory handed out, not yet
//! written) are not checked.

use anyhow::{Context, bail};
use std::path::Path;
use toml_edit::{DocumentMut, Item, Value};
use tritontui_trace::format::LayoutDef;

/// The profiles that ship with tritontui, by name.
pub const SHIPPED: [(&str, &str); 2] = [
    (
        "no-float64-on-gpu",
        include_str!("../../../assets/lint/no-float64-on-gpu.toml"),
    ),
    (
        "aligned-16",
        include_str!("../../../assets/lint/aligned-16.toml"),
    ),
];

/// Which tensors a profile's rules apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Devices {
    Any,
    Cuda,
    Cpu,
}

/// One parsed profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub description: String,
    pub devices: Devices,
    allow_dtypes: Option<Vec<String>>,
    deny_dtypes: Vec<String>,
    align_bytes: Option<u64>,
    row_bytes_multiple: Option<u64>,
    contiguous: bool,
    max_bytes: Option<u64>,
    deny_kernels: Vec<String>,
}

impl Profile {
    /// A shipped profile by name, or the profile in the file at `spec`.
    pub fn load(spec: &str) -> anyhow::Result<Profile> {
        if let Some((name, text)) = SHIPPED.iter().find(|(name, _)| *name == spec) {
            return Profile::parse(text, name);
        }
        let path = Path::new(spec);
        let text = std::fs::read_to_string(path).with_context(|| {
            let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
            format!(
                "{spec}: cannot read (not a file, nor a shipped profile: {})",
                names.join(", ")
            )
        })?;
        Profile::parse(&text, &path.display().to_string())
    }

    /// Parses a profile's TOML; `origin` names it in errors and is its
    /// description when it has none.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Profile> {
        let doc: DocumentMut = text
            .parse()
            .map_err(|e| anyhow::anyhow!("{origin}: not TOML: {}", first_line(&e)))?;
        let mut profile = Profile {
            description: origin.to_owned(),
            devices: Devices::Any,
            allow_dtypes: None,
            deny_dtypes: Vec::new(),
            align_bytes: None,
            row_bytes_multiple: None,
            contiguous: false,
            max_bytes: None,
            deny_kernels: Vec::new(),
        };
        for (key, item) in doc.iter() {
            match (key, item) {
                ("description", item) => profile.description = string(item, origin, key)?,
                ("tensors", Item::Table(table)) => {
                    for (rule, item) in table.iter() {
                        let name = format!("tensors.{rule}");
                        match rule {
                            "devices" => {
                                profile.devices = match string(item, origin, &name)?.as_str() {
                                    "any" => Devices::Any,
                                    "cuda" => Devices::Cuda,
                                    "cpu" => Devices::Cpu,
                                    other => bail!(
                                        "{origin}: {name} is {other:?}; give \"any\", \"cuda\" or \"cpu\""
                                    ),
                                }
                            }
                            "allow_dtypes" => {
                                profile.allow_dtypes = Some(strings(item, origin, &name)?)
                            }
                            "deny_dtypes" => profile.deny_dtypes = strings(item, origin, &name)?,
                            "align_bytes" => {
                                profile.align_bytes = Some(positive(item, origin, &name)?)
                            }
                            "row_bytes_multiple" => {
                                profile.row_bytes_multiple = Some(positive(item, origin, &name)?)
                            }
                            "contiguous" => {
                                profile.contiguous = item.as_bool().with_context(|| {
                                    format!("{origin}: {name} must be true or false")
                                })?
                            }
                            "max_bytes" => profile.max_bytes = Some(positive(item, origin, &name)?),
                            _ => bail!("{origin}: unknown rule {name}"),
                        }
                    }
                }
                ("kernels", Item::Table(table)) => {
                    for (rule, item) in table.iter() {
                        match rule {
                            "deny" => profile.deny_kernels = strings(item, origin, "kernels.deny")?,
                            _ => bail!("{origin}: unknown rule kernels.{rule}"),
                        }
                    }
                }
                _ => bail!("{origin}: unknown key {key} (give description, [tensors], [kernels])"),
            }
        }
        Ok(profile)
    }

    /// The deny glob `kernel` matches, if any.
    pub fn denied_kernel(&self, kernel: &str) -> Option<&str> {
        self.deny_kernels
            .iter()
            .find(|glob| glob_matches(glob, kernel))
            .map(String::as_str)
    }

    /// The rules a tensor of `layout` at address `ptr` breaks, each with
    /// what is wrong.
    pub fn tensor_violations(&self, layout: &LayoutDef, ptr: u64) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let dtype = layout.dtype.as_str();
        if let Some(allowed) = &self.allow_dtypes
            && !allowed.iter().any(|d| d == dtype)
        {
            out.push(("tensors.allow_dtypes", format!("{dtype} is not allowed")));
        }
        if self.deny_dtypes.iter().any(|d| d == dtype) {
            out.push(("tensors.deny_dtypes", format!("{dtype} is denied")));
        }
        if let Some(n) = self.align_bytes
            && layout.extent > 0
            && !ptr.is_multiple_of(n)
        {
            out.push((
                "tensors.align_bytes",
                format!(
                    "address {ptr:#x} is {} bytes past a multiple of {n}",
                    ptr % n
                ),
            ));
        }
        let itemsize = u64::from(layout.itemsize);
        if let Some(n) = self.row_bytes_multiple
            && let (Some(&last), Some(&1)) = (layout.shape.last(), layout.stride.last())
            && !(last * itemsize).is_multiple_of(n)
        {
            out.push((
                "tensors.row_bytes_multiple",
                format!(
                    "its rows are {} bytes ({last} x {itemsize}), not a multiple of {n}",
                    last * itemsize
                ),
            ));
        }
        if self.contiguous && !LayoutDef::is_row_major(&layout.shape, &layout.stride) {
            out.push((
                "tensors.contiguous",
                format!(
                    "shape {:?} with strides {:?} is not contiguous",
                    layout.shape, layout.stride
                ),
            ));
        }
        if let Some(n) = self.max_bytes
            && layout.extent > n
        {
            out.push((
                "tensors.max_bytes",
                format!("it spans {} bytes, more than {n}", layout.extent),
            ));
        }
        out
    }
}

/// Whether `name` matches `glob` (`*` any run of characters, `?` one).
fn glob_matches(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    // Positions after the last `*` seen, to backtrack to.
    let (mut gi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == n[ni]) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ni;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

fn first_line(e: &impl std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or_default().to_owned()
}

fn string(item: &Item, origin: &str, name: &str) -> anyhow::Result<String> {
    item.as_str()
        .map(str::to_owned)
        .with_context(|| format!("{origin}: {name} must be a string"))
}

fn strings(item: &Item, origin: &str, name: &str) -> anyhow::Result<Vec<String>> {
    let array = item
        .as_array()
        .with_context(|| format!("{origin}: {name} must be a list of strings"))?;
    array
        .iter()
        .map(|v: &Value| {
            v.as_str()
                .map(str::to_owned)
                .with_context(|| format!("{origin}: {name} must be a list of strings"))
        })
        .collect()
}

fn positive(item: &Item, origin: &str, name: &str) -> anyhow::Result<u64> {
    item.as_integer()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .with_context(|| format!("{origin}: {name} must be a positive integer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(dtype: &str, itemsize: u32, shape: &[u64], stride: &[i64]) -> LayoutDef {
        LayoutDef {
            id: 0,
            dtype: dtype.into(),
            itemsize,
            shape: shape.to_vec(),
            stride: stride.to_vec(),
            offset: 0,
            extent: LayoutDef::extent_of(shape, stride, itemsize),
        }
    }

    #[test]
    fn the_shipped_profiles_parse_and_find_what_they_name() {
        for (name, _) in SHIPPED {
            Profile::load(name).expect(name);
        }
        let aligned = Profile::load("aligned-16").unwrap();
        let f32 = layout("float32", 4, &[4, 6], &[6, 1]);
        assert!(
            aligned
                .tensor_violations(&f32, 0x1000)
                .iter()
                .any(|(r, _)| *r == "tensors.row_bytes_multiple")
        );
        assert_eq!(
            aligned.tensor_violations(&f32, 0x1004)[0].0,
            "tensors.align_bytes"
        );
        assert!(
            aligned
                .tensor_violations(&layout("float32", 4, &[4, 8], &[8, 1]), 0x1000)
                .is_empty()
        );
        let gpu = Profile::load("no-float64-on-gpu").unwrap();
        assert_eq!(gpu.devices, Devices::Cuda);
        assert_eq!(
            gpu.tensor_violations(&layout("float64", 8, &[2], &[1]), 0)[0].0,
            "tensors.deny_dtypes"
        );
    }

    #[test]
    fn every_rule_and_a_misspelled_one() {
        let text = r#"
            description = "strict"
            [tensors]
            allow_dtypes = ["bfloat16"]
            contiguous = true
            max_bytes = 64
            [kernels]
            deny = ["aten::*fft*", "triton_?er_*"]
        "#;
        let p = Profile::parse(text, "p.toml").unwrap();
        let t = layout("float32", 4, &[8, 4], &[1, 8]);
        let rules: Vec<&str> = p
            .tensor_violations(&t, 0)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert_eq!(
            rules,
            [
                "tensors.allow_dtypes",
                "tensors.contiguous",
                "tensors.max_bytes"
            ]
        );
        assert_eq!(p.denied_kernel("aten::_fft_r2c"), Some("aten::*fft*"));
        assert_eq!(
            p.denied_kernel("triton_per_fused_sum_0"),
            Some("triton_?er_*")
        );
        assert_eq!(p.denied_kernel("triton_poi_fused_add_0"), None);
        let typo = Profile::parse("[tensors]\nalign_byte = 16\n", "t.toml").unwrap_err();
        assert_eq!(typo.to_string(), "t.toml: unknown rule tensors.align_byte");
        let bad = Profile::parse("[tensors]\nalign_bytes = -1\n", "t.toml").unwrap_err();
        assert_eq!(
            bad.to_string(),
            "t.toml: tensors.align_bytes must be a positive integer"
        );
    }
}
