//! Reads the safetensors files the recorder writes for captured launches
//! (docs/trace-format.md, captured values), through the `safetensors`
//! crate: each tensor's dtype, shape and bytes, by name.

use anyhow::Context;
pub use safetensors::Dtype;
use safetensors::SafeTensors;
use std::collections::BTreeMap;
use std::path::Path;

/// One tensor of a file: its dtype, shape and bytes (little-endian,
/// row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    pub bytes: Vec<u8>,
}

/// Reads every tensor of the file at `path`, by name.
pub fn read(path: &Path) -> anyhow::Result<BTreeMap<String, Tensor>> {
    let data = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&data).with_context(|| format!("{}: not a safetensors file", path.display()))
}

fn parse(data: &[u8]) -> anyhow::Result<BTreeMap<String, Tensor>> {
    let file = SafeTensors::deserialize(data).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(file
        .iter()
        .map(|(name, view)| {
            let tensor = Tensor {
                dtype: view.dtype(),
                shape: view.shape().iter().map(|&n| n as u64).collect(),
                bytes: view.data().to_vec(),
            };
            (name.to_owned(), tensor)
        })
        .collect())
}

/// Bytes per element of a dtype; None for one narrower than a byte.
pub fn element_size(dtype: Dtype) -> Option<usize> {
    let bits = dtype.bitsize();
    bits.is_multiple_of(8).then_some(bits / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file holding `tensors` as (name, dtype, shape, bytes).
    pub fn file(tensors: &[(&str, &str, &[u64], &[u8])]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        header.insert("__metadata__".into(), serde_json::json!({"seq": "3"}));
        let mut body = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            let start = body.len();
            body.extend_from_slice(bytes);
            header.insert(
                (*name).into(),
                serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, body.len()]}),
            );
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header);
        out.extend(body);
        out
    }

    #[test]
    fn tensors_are_read_by_name_and_a_bad_file_is_refused() {
        let ones = 1.0f32.to_le_bytes().repeat(2);
        let tensors = parse(&file(&[("0.post", "F32", &[2], &ones)])).unwrap();
        assert_eq!(tensors["0.post"].shape, [2]);
        assert_eq!(tensors["0.post"].bytes, ones);
        assert!(parse(&[1, 2]).is_err());
        let mut cut = file(&[("0.post", "F32", &[2], &ones)]);
        cut.truncate(cut.len() - 1);
        assert!(parse(&cut).is_err(), "a file cut short");
        let wrong = file(&[("0.post", "F32", &[3], &ones)]);
        assert!(parse(&wrong).is_err(), "8 bytes for 3 floats");
        assert_eq!(element_size(Dtype::BF16), Some(2));
        assert_eq!(element_size(Dtype::F4), None);
    }
}
