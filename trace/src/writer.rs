//! Streaming trace writer: appends records and interns sources, kernels and
//! layouts so that each launch record stays small.

use crate::format::{
    EndRecord, FORMAT_NAME, GraphDef, Header, KernelDef, LaunchRecord, LayoutDef, Record,
    RowsRecord, SamplesRecord, SourceDef,
};
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;
use std::io::{self, Write};

/// Numbers the sources, kernels and tensor layouts of one trace, so that
/// each is written once and launches refer to it by id. Both writers use
/// it; it only makes records, writing them is the caller's.
#[derive(Debug, Default)]
pub struct Ids {
    layouts: Layouts,
    sources: u64,
    kernels: u64,
    /// Graph ids by key.
    graphs: HashMap<String, u64, FxBuildHasher>,
}

/// Layout ids by what makes two layouts one entry (dtype, itemsize, shape,
/// stride, offset), spelled as words so that looking one up allocates
/// nothing: this runs for every tensor of every recorded launch.
#[derive(Debug, Default)]
struct Layouts {
    ids: HashMap<Box<[u64]>, u64, FxBuildHasher>,
    /// Dtype names by their number in the words.
    dtypes: HashMap<String, u64, FxBuildHasher>,
    /// The words of the layout being looked up (kept for its capacity).
    key: Vec<u64>,
}

impl Layouts {
    /// The layout's words in `self.key`: dtype number, itemsize, rank,
    /// shape, stride, offset.
    fn spell(&mut self, dtype: &str, itemsize: u32, shape: &[u64], stride: &[i64], offset: u64) {
        let next = self.dtypes.len() as u64;
        let dtype = match self.dtypes.get(dtype) {
            Some(&n) => n,
            None => *self.dtypes.entry(dtype.to_owned()).or_insert(next),
        };
        self.key.clear();
        self.key
            .extend([dtype, u64::from(itemsize), shape.len() as u64]);
        self.key.extend_from_slice(shape);
        self.key.extend(stride.iter().map(|&s| s as u64));
        self.key.push(offset);
    }
}

impl Ids {
    /// A source record under a new id.
    pub fn source(&mut self, path: &str, lang: &str, text: &str) -> (u64, Record) {
        let id = self.sources;
        self.sources += 1;
        let record = Record::Source(SourceDef {
            id,
            path: path.to_owned(),
            lang: lang.to_owned(),
            text: text.to_owned(),
        });
        (id, record)
    }

    /// `kernel` as a record under a new id (its own `id` is ignored).
    pub fn kernel(&mut self, mut kernel: KernelDef) -> (u64, Record) {
        kernel.id = self.kernels;
        self.kernels += 1;
        (kernel.id, Record::Kernel(kernel))
    }

    /// The id of the graph `key`, with the record to write if it is new
    /// (whose input names `inputs` then gives).
    pub fn graph<E>(
        &mut self,
        key: &str,
        inputs: impl FnOnce() -> Result<Vec<String>, E>,
    ) -> Result<(u64, Option<Record>), E> {
        if let Some(&id) = self.graphs.get(key) {
            return Ok((id, None));
        }
        let def = GraphDef {
            id: self.graphs.len() as u64,
            key: key.to_owned(),
            inputs: inputs()?,
        };
        self.graphs.insert(def.key.clone(), def.id);
        Ok((def.id, Some(Record::Graph(def))))
    }

    /// The id of this layout, with the record to write if it is new.
    pub fn layout(
        &mut self,
        dtype: &str,
        itemsize: u32,
        shape: &[u64],
        stride: &[i64],
        offset: u64,
    ) -> (u64, Option<Record>) {
        self.layouts.spell(dtype, itemsize, shape, stride, offset);
        if let Some(&id) = self.layouts.ids.get(self.layouts.key.as_slice()) {
            return (id, None);
        }
        let id = self.layouts.ids.len() as u64;
        self.layouts
            .ids
            .insert(self.layouts.key.as_slice().into(), id);
        let def = LayoutDef {
            id,
            dtype: dtype.to_owned(),
            itemsize,
            extent: LayoutDef::extent_of(shape, stride, itemsize),
            shape: shape.to_vec(),
            stride: stride.to_vec(),
            offset,
        };
        (id, Some(Record::Layout(def)))
    }
}

/// Appends records to a trace stream.
///
/// Records reach `out` in the order they are written; wrap files in a
/// `BufWriter` and call [`TraceWriter::flush`] at the points where a reader
/// must be able to see everything so far.
pub struct TraceWriter<W: Write> {
    out: W,
    ids: Ids,
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
            ids: Ids::default(),
            launches: 0,
        };
        writer.write(&Record::Header(header))?;
        Ok(writer)
    }

    /// Appends any record as it is.
    /// (a launch's samples in a `samples` record after it).
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        if let Record::Launch(launch) = record {
            return self.launch(launch);
        }
        rmp_serde::encode::write_named(&mut self.out, record).map_err(io::Error::other)
    }

    /// Writes a source record and returns its new id.
    pub fn add_source(&mut self, path: &str, lang: &str, text: &str) -> io::Result<u64> {
        let (id, record) = self.ids.source(path, lang, text);
        self.write(&record)?;
        Ok(id)
    }

    /// Writes a kernel record under a new id (ignoring `kernel.id`) and
    /// returns that id.
    pub fn add_kernel(&mut self, kernel: KernelDef) -> io::Result<u64> {
        let (id, record) = self.ids.kernel(kernel);
        self.write(&record)?;
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
        let (id, new) = self.ids.layout(dtype, itemsize, shape, stride, offset);
        if let Some(record) = new {
            self.write(&record)?;
        }
        Ok(id)
    }

    /// Appends a launch record, then its samples' record when it has
    /// samples and its rows' record when it has row hashes.
    pub fn launch(&mut self, launch: &LaunchRecord) -> io::Result<()> {
        self.launches += 1;
        rmp_serde::encode::write_named(&mut self.out, &LaunchRef(launch))
            .map_err(io::Error::other)?;
        if let Some(samples) = SamplesRecord::of(launch) {
            self.write(&Record::Samples(samples))?;
        }
        match RowsRecord::of(launch) {
            Some(rows) => self.write(&Record::Rows(rows)),
            None => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_gets_one_id_and_one_record() {
        let mut ids = Ids::default();
        let (first, record) = ids.layout("float32", 4, &[2, 3], &[3, 1], 0);
        assert!(
            matches!(record, Some(Record::Layout(ref l)) if l.id == first && l.shape == [2, 3])
        );
        assert_eq!(ids.layout("float32", 4, &[2, 3], &[3, 1], 0), (first, None));
    }

    #[test]
    fn layouts_differing_in_any_field_get_their_own_ids() {
        let mut ids = Ids::default();
        type Layout<'a> = (&'a str, u32, &'a [u64], &'a [i64], u64);
        let layouts: [Layout<'_>; 8] = [
            ("float32", 4, &[2, 3], &[3, 1], 0),
            ("int32", 4, &[2, 3], &[3, 1], 0),
            ("float32", 2, &[2, 3], &[3, 1], 0),
            ("float32", 4, &[3, 2], &[3, 1], 0),
            ("float32", 4, &[2, 3], &[1, 2], 0),
            ("float32", 4, &[2, 3], &[3, 1], 5),
            // The same words, split differently between shape and stride.
            ("float32", 4, &[2], &[3], 0),
            ("float32", 4, &[2, 3, 3], &[1, 0, 0], 0),
        ];
        let mut seen = Vec::new();
        for (dtype, itemsize, shape, stride, offset) in layouts {
            let (id, record) = ids.layout(dtype, itemsize, shape, stride, offset);
            assert!(
                record.is_some(),
                "{dtype} {shape:?} {stride:?} {offset} is new"
            );
            assert!(!seen.contains(&id));
            seen.push(id);
        }
        for (i, (dtype, itemsize, shape, stride, offset)) in layouts.into_iter().enumerate() {
            assert_eq!(
                ids.layout(dtype, itemsize, shape, stride, offset),
                (seen[i], None)
            );
        }
    }
}
