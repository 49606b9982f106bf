//! Streaming trace writer: appends records and interns sources, kernels and
//! layouts so that each launch record stays small.

use crate::format::{
    EndRecord, FORMAT_NAME, Header, KernelDef, LaunchRecord, LayoutDef, Record, SourceDef,
};
use std::collections::HashMap;
use std::io::{self, Write};

/// What makes two layouts one entry: dtype, itemsize, shape, stride, offset.
type LayoutKey = (String, u32, Vec<u64>, Vec<i64>, u64);

/// Numbers distinct tensor layouts so that each one's record is written once.
#[derive(Debug, Default)]
pub struct LayoutTable {
    ids: HashMap<LayoutKey, u64>,
}

impl LayoutTable {
    /// The id of this layout, with the record to write if it is new.
    pub fn intern(
        &mut self,
        dtype: &str,
        itemsize: u32,
        shape: &[u64],
        stride: &[i64],
        offset: u64,
    ) -> (u64, Option<LayoutDef>) {
        let key = (
            dtype.to_owned(),
            itemsize,
            shape.to_vec(),
            stride.to_vec(),
            offset,
        );
        if let Some(&id) = self.ids.get(&key) {
            return (id, None);
        }
        let id = self.ids.len() as u64;
        self.ids.insert(key, id);
        let def = LayoutDef {
            id,
            dtype: dtype.to_owned(),
            itemsize,
            span: LayoutDef::span_of(shape, stride, itemsize),
            shape: shape.to_vec(),
            stride: stride.to_vec(),
            offset,
        };
        (id, Some(def))
    }
}

/// Appends records to a trace stream.
///
/// Records reach `out` in the order they are written; wrap files in a
/// `BufWriter` and call [`TraceWriter::flush`] at the points where a reader
/// must be able to see everything so far.
pub struct TraceWriter<W: Write> {
    out: W,
    layouts: LayoutTable,
    next_source: u64,
    next_kernel: u64,
    launches: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace by writing `header`, whose format and version are
    /// forced to this crate's.
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        let mut header = header.clone();
        header.format = FORMAT_NAME.to_owned();
        header.version = (crate::format::SCHEMA_MAJOR, crate::format::SCHEMA_MINOR);
        let mut writer = TraceWriter {
            out,
            layouts: LayoutTable::default(),
            next_source: 0,
            next_kernel: 0,
            launches: 0,
        };
        writer.write(&Record::Header(header))?;
        Ok(writer)
    }

    /// Appends any record as it is.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        if matches!(record, Record::Launch(_)) {
            self.launches += 1;
        }
        rmp_serde::encode::write_named(&mut self.out, record).map_err(io::Error::other)
    }

    /// Writes a source record and returns its new id.
    pub fn add_source(&mut self, path: &str, lang: &str, text: &str) -> io::Result<u64> {
        let id = self.next_source;
        self.next_source += 1;
        self.write(&Record::Source(SourceDef {
            id,
            path: path.to_owned(),
            lang: lang.to_owned(),
            text: text.to_owned(),
        }))?;
        Ok(id)
    }

    /// Writes a kernel record under a new id (ignoring `kernel.id`) and
    /// returns that id.
    pub fn add_kernel(&mut self, mut kernel: KernelDef) -> io::Result<u64> {
        kernel.id = self.next_kernel;
        self.next_kernel += 1;
        let id = kernel.id;
        self.write(&Record::Kernel(kernel))?;
        Ok(id)
    }

    /// Returns the id of this layout, writing a layout record the first time
    /// it is seen.
    pub fn layout(
        &mut self,
        dtype: &str,
        itemsize: u32,
        shape: &[u64],
        stride: &[i64],
        offset: u64,
    ) -> io::Result<u64> {
        let (id, new) = self.layouts.intern(dtype, itemsize, shape, stride, offset);
        if let Some(def) = new {
            self.write(&Record::Layout(def))?;
        }
        Ok(id)
    }

    /// Appends a launch record.
    pub fn launch(&mut self, launch: &LaunchRecord) -> io::Result<()> {
        self.launches += 1;
        rmp_serde::encode::write_named(&mut self.out, &LaunchRef(launch)).map_err(io::Error::other)
    }

    /// Number of launch records written so far.
    pub fn launches_written(&self) -> u64 {
        self.launches
    }

    /// Flushes buffered records to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes the end record, flushes, and returns the underlying writer.
    pub fn finish(mut self, ts: u64, reason: &str) -> io::Result<W> {
        let end = EndRecord {
            ts,
            launches: self.launches,
            reason: reason.to_owned(),
        };
        self.write(&Record::End(end))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Serializes a borrowed launch as `{"r": "launch", ...}` without cloning it
/// into a [`Record`].
struct LaunchRef<'a>(&'a LaunchRecord);

impl serde::Serialize for LaunchRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        #[serde(tag = "r", rename_all = "lowercase")]
        enum Tagged<'a> {
            Launch(&'a LaunchRecord),
        }
        Tagged::Launch(self.0).serialize(s)
    }
}
