//! How one argument of a launch is read before it is described: a Python
//! value (a tensor read from its `TensorImpl` or its attributes, or a host
//! value; or a tensor kept only where it can be hashed), a plain tensor
//! the native aten observer read with no Python object, or a host value as
//! the trace records it.

use super::{ArgUse, Dtypes, TensorView, torch};
use crate::python::alive::Alive;
use crate::python::tensor_impl::{Dims, ELSEWHERE, HOST, Meta};
use pyo3::intern;
use pyo3::prelude::*;

/// One argument of a launch before it is described.
pub enum Read<'py> {
    /// A Python value: a tensor, read from its `TensorImpl` or its
    /// attributes, or a host value.
    Python(Bound<'py, PyAny>),
    /// A Python value kept only when it is a tensor whose bytes can be
    /// hashed (a fingerprint's tensors), else left out of the record.
    Hashable(Bound<'py, PyAny>),
    /// A plain tensor the native aten observer read with no Python object.
    Native(NativeTensor<'py>),
    /// A host value, as the trace records it.
    Scalar(tritontui_trace::format::Scalar),
}

/// A plain dense tensor (a `torch.Tensor` or `nn.Parameter`, strided, with
/// storage) as the native aten observer reads it.
pub struct NativeTensor<'py> {
    /// Its torch dtype, whose trace name and size [`Dtypes`] keeps.
    pub dtype: Bound<'py, PyAny>,
    /// CUDA device index, or [`HOST`].
    pub device: i32,
    pub ptr: u64,
    pub shape: Dims,
    pub stride: Dims,
    /// Storage offset, in elements.
    pub offset: u64,
    pub storage_bytes: u64,
    pub alive: Alive,
}

impl NativeTensor<'_> {
    /// Argument `arg` of the record.
    pub(super) fn view(
        self,
        dtypes: &mut Dtypes,
        arg: usize,
        access: ArgUse,
    ) -> PyResult<TensorView> {
        let (dtype, itemsize) = dtypes.get(&self.dtype)?;
        let meta = Meta {
            device: self.device,
            ptr: self.ptr,
            dtype,
            itemsize,
            shape: self.shape,
            stride: self.stride,
            offset: self.offset,
            storage_bytes: self.storage_bytes,
        };
        Ok(TensorView::new(self.alive, meta, true, arg, access))
    }
}

/// Reads a tensor's metadata, or None when `value` is not a tensor.
pub(super) fn read_tensor(
    py: Python<'_>,
    dtypes: &mut Dtypes,
    value: &Bound<'_, PyAny>,
    arg: usize,
    access: ArgUse,
) -> PyResult<Option<TensorView>> {
    let torch = torch(py)?;
    let exact =
        value.get_type().is(torch.tensor.bind(py)) || value.get_type().is(torch.parameter.bind(py));
    if !exact && !value.is_instance(torch.tensor.bind(py))? {
        return Ok(None);
    }
    if !exact && let Some(local) = local_shard(py, value)? {
        // A distributed tensor's op reads and writes its local shard: that
        // memory is what the launch record holds.
        return read_tensor(py, dtypes, &local, arg, access);
    }
    let mut slow = |v: &Bound<'_, PyAny>| read_attributes(py, dtypes, v);
    let fast = if exact {
        crate::python::tensor_impl::read(py, value, &mut slow)?
    } else {
        None
    };
    let Some(meta) = fast.map_or_else(|| slow(value), |m| Ok(Some(m)))? else {
        return Ok(None);
    };
    Ok(Some(TensorView::new(
        Alive::Python(value.clone().unbind()),
        meta,
        exact,
        arg,
        access,
    )))
}

/// The local shard of a distributed tensor (`DTensor._local_tensor`, a
/// plain tensor), or None for another tensor subclass.
fn local_shard<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let torch = torch(py)?;
    let Ok(local) = value.getattr(intern!(py, "_local_tensor")) else {
        return Ok(None);
    };
    let kind = local.get_type();
    let plain = kind.is(torch.tensor.bind(py)) || kind.is(torch.parameter.bind(py));
    Ok(plain.then_some(local))
}

/// Probes where torch keeps each tensor field, once per process, so that
/// later reads skip the attributes; whether that worked.
pub fn probe_tensor_impl(py: Python<'_>) -> PyResult<bool> {
    let mut dtypes = Dtypes::default();
    crate::python::tensor_impl::probe(py, &mut |v| read_attributes(py, &mut dtypes, v))
}

/// Reads a tensor's metadata through its Python attributes; None for a
/// layout other than strided.
fn read_attributes(
    py: Python<'_>,
    dtypes: &mut Dtypes,
    value: &Bound<'_, PyAny>,
) -> PyResult<Option<Meta>> {
    let torch = torch(py)?;
    let strided = value
        .getattr(intern!(py, "layout"))?
        .is(torch.strided.bind(py));
    if !strided {
        return Ok(None); // sparse and other layouts: recorded by their repr
    }
    let (dtype, itemsize) = dtypes.get(&value.getattr(intern!(py, "dtype"))?)?;
    let device = if value.getattr(intern!(py, "is_cuda"))?.extract()? {
        value.call_method0(intern!(py, "get_device"))?.extract()?
    } else if value.getattr(intern!(py, "is_cpu"))?.extract()? {
        HOST
    } else {
        ELSEWHERE
    };
    Ok(Some(Meta {
        device,
        ptr: value.call_method0(intern!(py, "data_ptr"))?.extract()?,
        dtype,
        itemsize,
        shape: Dims::from_vec(value.getattr(intern!(py, "shape"))?.extract()?),
        stride: Dims::from_vec(value.call_method0(intern!(py, "stride"))?.extract()?),
        offset: value
            .call_method0(intern!(py, "storage_offset"))?
            .extract()?,
        storage_bytes: value
            .call_method0(intern!(py, "untyped_storage"))?
            .call_method0(intern!(py, "nbytes"))?
            .extract()?,
    }))
}
