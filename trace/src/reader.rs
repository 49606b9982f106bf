//! Streaming record reader over a byte slice (usually a memory-mapped file).

use crate::format::{FORMAT_NAME, Record, SCHEMA_MAJOR};
use crate::framing::{FrameError, value_len};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a trace could not be read. Every message is one line that names the
/// file and, where it applies, the byte offset.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be opened or mapped.
    #[error("{path}: cannot read: {error}")]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The underlying error (part of the message, not a separate cause).
        error: std::io::Error,
    },
    /// The file is not a tritontui trace at all.
    #[error("{path}: not a tritontui trace: {detail}")]
    NotATrace {
        /// The trace file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The trace was written by a newer, incompatible tritontui.
    #[error(
        "{path}: trace format version {major}.{minor} is newer than this tritontui reads ({SCHEMA_MAJOR}.x); upgrade tritontui"
    )]
    TooNew {
        /// The trace file.
        path: PathBuf,
        /// Major version in the file.
        major: u32,
        /// Minor version in the file.
        minor: u32,
    },
    /// A record is malformed.
    #[error("{path}: byte {offset}: {detail}")]
    Corrupt {
        /// The trace file.
        path: PathBuf,
        /// Offset of the bad record (or byte) from the start of the file.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
}

/// What one call to [`RecordReader::next_record`] found.
// Records are moved out at once; boxing them would cost an allocation per
// record on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Next {
    /// A complete record and its byte offset.
    Record(u64, Record),
    /// The data ends in the middle of a record that starts at this offset:
    /// the writer stopped mid-record (the recorded program crashed).
    Truncated(u64),
    /// The data ends exactly after the last record.
    End,
}

/// Reads records one by one, checking that the stream is a tritontui trace
/// of a version this crate understands.
pub struct RecordReader<'a> {
    path: PathBuf,
    data: &'a [u8],
    pos: usize,
}

impl<'a> RecordReader<'a> {
    /// Reads the header from `data` (the contents of `path`) and returns it
    /// with a reader positioned at the next record.
    pub fn open(path: &Path, data: &'a [u8]) -> Result<(crate::format::Header, Self), TraceError> {
        let mut reader = RecordReader {
            path: path.to_owned(),
            data,
            pos: 0,
        };
        let not_a_trace = |detail: &str| TraceError::NotATrace {
            path: path.to_owned(),
            detail: detail.to_owned(),
        };
        if data.is_empty() {
            return Err(not_a_trace("the file is empty"));
        }
        // A header is a map whose first key is "r": 0x8N/0xde/0xdf, then 0xa1 'r'.
        if !matches!(data[0], 0x80..=0x8f | 0xde | 0xdf) {
            return Err(not_a_trace("it does not start with a MessagePack map"));
        }
        let header = match reader.next_record() {
            Ok(Next::Record(_, crate::format::Record::Header(h))) => h,
            Ok(Next::Record(_, other)) => {
                return Err(not_a_trace(&format!(
                    "its first record is a {:?} record, not a header",
                    other.kind()
                )));
            }
            Ok(Next::Truncated(_)) => return Err(not_a_trace("the file ends inside its header")),
            Ok(Next::End) => return Err(not_a_trace("the file is empty")),
            Err(TraceError::Corrupt { detail, .. }) => {
                return Err(not_a_trace(&format!("bad header: {detail}")));
            }
            Err(e) => return Err(e),
        };
        if header.format != FORMAT_NAME {
            return Err(not_a_trace(&format!(
                "its format is {:?}, expected {FORMAT_NAME:?}",
                header.format
            )));
        }
        if header.version.0 > SCHEMA_MAJOR {
            return Err(TraceError::TooNew {
                path: path.to_owned(),
                major: header.version.0,
                minor: header.version.1,
            });
        }
        Ok((header, reader))
    }

    /// Byte offset of the next record.
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// Reads the next record.
    pub fn next_record(&mut self) -> Result<Next, TraceError> {
        let start = self.pos;
        let rest = &self.data[start..];
        if rest.is_empty() {
            return Ok(Next::End);
        }
        let len = match value_len(rest) {
            Ok(len) => len,
            Err(FrameError::Truncated) => return Ok(Next::Truncated(start as u64)),
            Err(FrameError::Invalid(at)) => {
                return Err(self.corrupt(start + at, "invalid MessagePack marker 0xc1".into()));
            }
        };
        let bytes = &rest[..len];
        if !matches!(bytes[0], 0x80..=0x8f | 0xde | 0xdf) {
            return Err(self.corrupt(
                start,
                format!(
                    "expected a record map, found MessagePack marker 0x{:02x}",
                    bytes[0]
                ),
            ));
        }
        let record: Record = rmp_serde::from_slice(bytes)
            .map_err(|e| self.corrupt(start, format!("bad record: {e}")))?;
        self.pos = start + len;
        Ok(Next::Record(start as u64, record))
    }

    /// A [`TraceError::Corrupt`] for this file.
    pub fn corrupt(&self, offset: usize, detail: String) -> TraceError {
        TraceError::Corrupt {
            path: self.path.clone(),
            offset: offset as u64,
            detail,
        }
    }
}
