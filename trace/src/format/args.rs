//! An argument's value as a launch, a graph call or a results record
//! holds it: a tensor (layout, address, hashes, statistics) or a scalar.

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A launch argument: a tensor or a scalar value.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A tensor (or raw pointer with a known layout).
    Tensor(TensorArg),
    /// Any non-tensor value.
    Scalar(Scalar),
}

impl ArgValue {
    /// A tensor argument without summary statistics.
    pub fn tensor(layout: u64, ptr: u64, flags: u64, pre: Option<u64>, post: Option<u64>) -> Self {
        ArgValue::Tensor(TensorArg {
            layout,
            ptr,
            flags,
            pre,
            post,
            stats: None,
            samples: None,
            rows: None,
        })
    }
}

/// A tensor argument of one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorArg {
    /// Layout id.
    pub layout: u64,
    /// Address of the first element.
    pub ptr: u64,
    /// Bit set of `TensorArg::WRITTEN`.
    pub flags: u64,
    /// Hash of the logical bytes before the launch, if hashed; in a
    /// `captured` record (a launch inside a CUDA graph capture), the slot
    /// of its graph's table where each replay leaves that hash (a reader
    /// expanding the replays puts the hashes in).
    pub pre: Option<u64>,
    /// Hash of the logical bytes after the launch, if hashed; a table slot
    /// in a `captured` record, as `pre`.
    pub post: Option<u64>,
    /// Summary statistics of the value after the launch, if computed.
    pub stats: Option<Stats>,
    /// Samples of the value after the launch (1.18): its elements at the
    /// positions `crate::samples` names for its element count, as f64.
    /// Not part of the tensor's array: the writer puts a launch's samples
    /// in a `samples` record after it (`SamplesRecord`), which readers
    /// before 1.18 skip.
    pub samples: Option<Vec<f64>>,
    /// Hashes of its rows after the launch (1.21, `rows`): one tthash64
    /// per index of its leading dimension, each of that row's logical
    /// bytes as if it were a tensor by itself (so the same row at another
    /// offset hashes the same). Written, like samples, in a record after
    /// the launch (`RowsRecord`), which readers before 1.21 skip.
    pub rows: Option<Vec<u64>>,
}

impl TensorArg {
    /// Flag bit: the launch wrote this argument (declared as written, or
    /// its hash changed).
    pub const WRITTEN: u64 = 1;
    /// Flag bit (1.4): the launch handed out this argument's memory and
    /// left its bytes as they were (an allocation, or an output an
    /// operation returns unwritten), so it is not hashed.
    pub const ALLOCATED: u64 = 2;
    /// Flag bit (1.5): the bytes before the launch were not hashed; they
    /// are those the same view held when last hashed in this graph call
    /// (see `known_views`), and a reader takes `pre` from there.
    pub const INHERITED: u64 = 4;

    /// Whether the written flag is set.
    pub fn written(&self) -> bool {
        self.flags & Self::WRITTEN != 0
    }

    /// Whether the allocated flag is set.
    pub fn allocated(&self) -> bool {
        self.flags & Self::ALLOCATED != 0
    }

    /// Whether the inherited flag is set.
    pub fn inherited(&self) -> bool {
        self.flags & Self::INHERITED != 0
    }
}

/// Summary statistics of a floating-point tensor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Smallest finite value.
    pub min: f64,
    /// Largest finite value.
    pub max: f64,
    /// Mean of the absolute finite values.
    pub mean_abs: f64,
    /// Number of NaN elements.
    pub nan: u64,
    /// Number of infinite elements.
    pub inf: u64,
}

impl Serialize for ArgValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ArgValue::Scalar(v) => v.serialize(s),
            ArgValue::Tensor(t) => {
                let len = if t.stats.is_some() { 6 } else { 5 };
                let mut seq = s.serialize_seq(Some(len))?;
                seq.serialize_element(&t.layout)?;
                seq.serialize_element(&t.ptr)?;
                seq.serialize_element(&t.flags)?;
                seq.serialize_element(&t.pre)?;
                seq.serialize_element(&t.post)?;
                if let Some(stats) = &t.stats {
                    let tuple = (stats.min, stats.max, stats.mean_abs, stats.nan, stats.inf);
                    seq.serialize_element(&tuple)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ArgValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArgVisitor)
    }
}

struct ArgVisitor;

impl<'de> Visitor<'de> for ArgVisitor {
    type Value = ArgValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tensor array or a scalar")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ArgValue, A::Error> {
        let missing = |i| de::Error::invalid_length(i, &"a tensor array of 5 or 6 items");
        let layout = seq.next_element()?.ok_or_else(|| missing(0))?;
        let ptr = seq.next_element()?.ok_or_else(|| missing(1))?;
        let flags = seq.next_element()?.ok_or_else(|| missing(2))?;
        let pre = seq.next_element()?.ok_or_else(|| missing(3))?;
        let post = seq.next_element()?.ok_or_else(|| missing(4))?;
        let stats = seq.next_element::<(f64, f64, f64, u64, u64)>()?.map(
            |(min, max, mean_abs, nan, inf)| Stats {
                min,
                max,
                mean_abs,
                nan,
                inf,
            },
        );
        // Items a later minor version may append.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ArgValue::Tensor(TensorArg {
            layout,
            ptr,
            flags,
            pre,
            post,
            stats,
            samples: None,
            rows: None,
        }))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Int(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::from_u64(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Float(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Str(v.to_owned())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::None))
    }

    fn visit_none<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::None))
    }
}

/// A non-tensor value: a scalar argument, a config entry or a metadata entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// `None` / nil.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A float; compared bit for bit.
    Float(f64),
    /// A string.
    Str(String),
}

impl Scalar {
    fn from_u64(v: u64) -> Scalar {
        i64::try_from(v).map_or(Scalar::UInt(v), Scalar::Int)
    }

    /// Equality that tells `0.0` from `-0.0` and treats equal NaN bits as equal,
    /// which is what "same bits" means for a recorded value.
    pub fn same_bits(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Float(a), Scalar::Float(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Scalar::None => f.write_str("None"),
            Scalar::Bool(v) => write!(f, "{}", if *v { "True" } else { "False" }),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::UInt(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
            Scalar::Str(v) => write!(f, "{v:?}"),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::None => s.serialize_unit(),
            Scalar::Bool(v) => s.serialize_bool(*v),
            Scalar::Int(v) => s.serialize_i64(*v),
            Scalar::UInt(v) => s.serialize_u64(*v),
            Scalar::Float(v) => s.serialize_f64(*v),
            Scalar::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_any(ArgVisitor)? {
            ArgValue::Scalar(s) => Ok(s),
            ArgValue::Tensor(_) => Err(de::Error::custom("expected a scalar, found an array")),
        }
    }
}
