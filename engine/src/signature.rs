//! Alignment keys: a launch's kernel name plus the shapes and dtypes of its
//! tensor arguments, as dense ids shared by two traces.

use rustc_hash::FxHashMap;
use tritontui_trace::{ArgRef, Trace};

/// What makes two launches candidates for the same aligned row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Signature {
    kernel: String,
    /// `(dtype, shape)` per tensor argument; `None` for a scalar.
    args: Vec<Option<(String, Vec<u64>)>>,
}

/// Per trace: the distinct local shapes of launches (kernel index and
/// layout indices), each with a representative launch.
struct LocalSignatures {
    /// Local signature id of each launch in `launches`.
    ids: Vec<u32>,
    /// One launch index per local signature id.
    representatives: Vec<u32>,
}

fn local_signatures(trace: &Trace, launches: &[u32]) -> LocalSignatures {
    const SCALAR: u32 = u32::MAX;
    let mut table: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    let mut representatives = Vec::new();
    let mut key = Vec::with_capacity(16);
    let ids = launches
        .iter()
        .map(|&index| {
            let launch = &trace.launches[index as usize];
            key.clear();
            key.push(launch.kernel);
            key.extend(trace.args_of(launch).map(|arg| match arg {
                ArgRef::Tensor(t) => t.layout_index,
                ArgRef::Scalar(_) => SCALAR,
            }));
            if let Some(&id) = table.get(key.as_slice()) {
                return id;
            }
            let id = representatives.len() as u32;
            representatives.push(index);
            table.insert(key.clone(), id);
            id
        })
        .collect();
    LocalSignatures {
        ids,
        representatives,
    }
}

fn signature_of(trace: &Trace, index: u32) -> Signature {
    let launch = &trace.launches[index as usize];
    Signature {
        kernel: trace.kernel_of(launch).name.clone(),
        args: trace
            .args_of(launch)
            .map(|arg| match arg {
                ArgRef::Tensor(t) => Some((t.layout.dtype.clone(), t.layout.shape.clone())),
                ArgRef::Scalar(_) => None,
            })
            .collect(),
    }
}

/// Alignment keys of the given launches of two traces: equal keys mean same
/// kernel name, same argument kinds, shapes and dtypes.
pub fn alignment_keys(
    a: &Trace,
    a_launches: &[u32],
    b: &Trace,
    b_launches: &[u32],
) -> (Vec<u32>, Vec<u32>) {
    let (local_a, local_b) = crate::parallel::both(
        || local_signatures(a, a_launches),
        || local_signatures(b, b_launches),
    );
    let mut global: FxHashMap<Signature, u32> = FxHashMap::default();
    let mut to_global = |trace: &Trace, local: &LocalSignatures| -> Vec<u32> {
        local
            .representatives
            .iter()
            .map(|&index| {
                let next = global.len() as u32;
                *global.entry(signature_of(trace, index)).or_insert(next)
            })
            .collect()
    };
    let map_a = to_global(a, &local_a);
    let map_b = to_global(b, &local_b);
    let keys_a = local_a.ids.iter().map(|&id| map_a[id as usize]).collect();
    let keys_b = local_b.ids.iter().map(|&id| map_b[id as usize]).collect();
    (keys_a, keys_b)
}
