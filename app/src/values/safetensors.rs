//! Reads the safetensors files the recorder writes for captured launches
//! (docs/trace-format.md, captured values): an 8-byte little-endian
//! header length, a JSON header naming each tensor's dtype, shape and byte
//! range, then the bytes.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One tensor of a file: its dtype name (`F32`, `BF16`, ...), shape and
/// bytes (little-endian, row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub bytes: Vec<u8>,
}

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

/// The largest header read (the format's own limit is 100 MB).
const MAX_HEADER: u64 = 100 << 20;

/// Reads every tensor of the file at `path`, by name.
pub fn read(path: &Path) -> anyhow::Result<BTreeMap<String, Tensor>> {
    let data = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&data).with_context(|| format!("{}: not a safetensors file", path.display()))
}

fn parse(data: &[u8]) -> anyhow::Result<BTreeMap<String, Tensor>> {
    let Some((len, rest)) = data.split_first_chunk::<8>() else {
        bail!("shorter than its 8-byte header length");
    };
    let len = u64::from_le_bytes(*len);
    if len > MAX_HEADER || len > rest.len() as u64 {
        bail!("its header length ({len} bytes) runs past the file");
    }
    let (header, body) = rest.split_at(len as usize);
    let entries: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(header).context("its header is not a JSON object")?;
    let mut tensors = BTreeMap::new();
    for (name, value) in entries {
        if name == "__metadata__" {
            continue;
        }
        let entry: Entry = serde_json::from_value(value)
            .with_context(|| format!("tensor {name}: no dtype, shape and data_offsets"))?;
        let [start, end] = entry.data_offsets;
        if start > end || end > body.len() as u64 {
            bail!("tensor {name}: its bytes {start}..{end} run past the file");
        }
        let elements: u64 = entry.shape.iter().product();
        let expected = element_size(&entry.dtype).map(|size| size * elements);
        if expected.is_some_and(|n| n != end - start) {
            bail!(
                "tensor {name}: {} bytes for {elements} {} elements",
                end - start,
                entry.dtype
            );
        }
        tensors.insert(
            name,
            Tensor {
                dtype: entry.dtype,
                shape: entry.shape,
                bytes: body[start as usize..end as usize].to_vec(),
            },
        );
    }
    Ok(tensors)
}

/// Bytes per element of a safetensors dtype; None for one this reader
/// does not know.
pub fn element_size(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
        _ => return None,
    })
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
        let err = format!("{:#}", parse(&cut).unwrap_err());
        assert!(err.contains("run past the file"), "{err}");
        let wrong = file(&[("0.post", "F32", &[3], &ones)]);
        assert!(format!("{:#}", parse(&wrong).unwrap_err()).contains("8 bytes for 3"));
    }
}
