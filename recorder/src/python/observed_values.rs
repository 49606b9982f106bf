//! A claimed op's values read through the native observer's library
//! (`observer/values.cpp`) with no Python object made: each argument as
//! the trace records it (a plain tensor's layout and memory, a number, a
//! string, a list of ints spelled as Python spells it, a dtype's text)
//! and the new tensors among its results. A value that only Python can
//! say what it is (a tensor subclass, a generator, a process group, a
//! list of floats) makes the whole call go through Python, as a dispatch
//! mode sees it (`super::aten_observer`'s `call_of`).

use super::alive::{Alive, ImplCalls, ImplRef};
use super::describe::{NativeTensor, Read};
use super::tensor_impl::Dims;
use pyo3::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::sync::Mutex;
use tritontui_trace::format::Scalar;

/// A value's kind, as `tritontui_observer_kind` answers.
const NONE: c_int = 0;
const TENSOR: c_int = 1;
const INT: c_int = 2;
const DOUBLE: c_int = 3;
const BOOL: c_int = 4;
const STRING: c_int = 5;
const LIST: c_int = 6;
const SETTLED: c_int = 7;

/// A tensor's layout and memory, as `tritontui_observer_tensor` fills it.
#[repr(C)]
struct TensorFacts {
    ptr: u64,
    storage_bytes: u64,
    offset: u64,
    sizes: *const i64,
    strides: *const i64,
    dims: u64,
    device: i32,
    dtype: i32,
    itemsize: u32,
    reserved: u32,
    tensor: *mut c_void,
}

/// The observer library's calls that read values: each field is the call
/// `tritontui_observer_` and its name (`boolean` is `_bool`; `tensors`
/// holds `_tensor_retain`, `_tensor_release` and `_tensor_python`), in
/// values.cpp (`value_python` in aten_observer.cpp).
pub struct ValueCalls {
    pub value_at: unsafe extern "C" fn(*const c_void, usize) -> *const c_void,
    pub kind: unsafe extern "C" fn(*const c_void, usize, *const c_void) -> c_int,
    pub int: unsafe extern "C" fn(*const c_void) -> i64,
    pub double: unsafe extern "C" fn(*const c_void) -> f64,
    pub boolean: unsafe extern "C" fn(*const c_void) -> c_int,
    pub string: unsafe extern "C" fn(*const c_void, *mut usize) -> *const c_char,
    pub list_length: unsafe extern "C" fn(*const c_void) -> usize,
    pub list_item: unsafe extern "C" fn(*const c_void, usize) -> *const c_void,
    pub settled_key: unsafe extern "C" fn(*const c_void, usize, *const c_void) -> i64,
    pub tensor: unsafe extern "C" fn(*const c_void, *mut c_void) -> c_int,
    pub tensor_impl: unsafe extern "C" fn(*const c_void) -> *mut c_void,
    pub dtype_python: unsafe extern "C" fn(i32) -> *mut c_void,
    pub modes: unsafe extern "C" fn() -> i64,
    /// A value as Python sees it (a new reference, or null).
    pub value_python: unsafe extern "C" fn(*const c_void, usize) -> *mut c_void,
    pub tensors: ImplCalls,
}

/// How a call spreads over its op's schema: per argument, absent
/// ([`ABSENT`]), one value ([`ONE`]) or a list of n tensors; then, after
/// `i32::MIN`, which returned values are new tensors (their positions),
/// and how many values came back: what an op's kernel is defined by.
pub type Shape = SmallVec<[i32; 16]>;

/// An argument absent from the call, or one value, in a [`Shape`].
pub const ABSENT: i32 = -2;
pub const ONE: i32 = -1;

/// A claimed op's arguments, read natively and spread as the trace
/// records them.
pub struct ReadCall<'py> {
    pub reads: Vec<Read<'py>>,
    pub codes: Vec<u8>,
    pub shape: Shape,
    /// The tensors it was given (their `TensorImpl`s): a result that is
    /// one of them is not new.
    pub given: SmallVec<[usize; 8]>,
}

/// The text of each settled value (a dtype, layout, memory format or
/// device) met so far, by its key: asked of Python once each.
#[derive(Default)]
pub struct SettledTexts {
    texts: Mutex<FxHashMap<i64, String>>,
}

/// What the observer library hands the core for one call: the op, its
/// values and how many.
#[derive(Clone, Copy)]
pub struct Values {
    pub op: *const c_void,
    pub values: *const c_void,
    pub count: usize,
}

/// The most a list spelled as its repr may hold: longer ones are their
/// type alone (`tritontui._host.MAX_REPR`).
const MAX_REPR: usize = 120;

impl ValueCalls {
    /// The value at `index`.
    fn at(&self, values: Values, index: usize) -> *const c_void {
        // SAFETY: `index` is below the count the library gave.
        unsafe { (self.value_at)(values.values, index) }
    }

    /// A tensor read natively, or None when only Python can read it.
    fn native_tensor<'py>(
        &'static self,
        py: Python<'py>,
        value: *const c_void,
    ) -> Option<NativeTensor<'py>> {
        let mut facts = std::mem::MaybeUninit::<TensorFacts>::zeroed();
        // SAFETY: `value` is a live value of this call; `facts` is
        // writable and laid out as the library's struct.
        if unsafe { (self.tensor)(value, facts.as_mut_ptr().cast()) } == 0 {
            return None;
        }
        // SAFETY: the library filled it.
        let facts = unsafe { facts.assume_init() };
        let dims = usize::try_from(facts.dims).ok()?;
        let (sizes, strides): (&[i64], &[i64]) = if dims == 0 {
            (&[], &[])
        } else if facts.sizes.is_null() || facts.strides.is_null() {
            return None;
        } else {
            // SAFETY: the sizes and strides are the tensor's own, `dims`
            // long, alive while the call's values are.
            unsafe {
                (
                    std::slice::from_raw_parts(facts.sizes, dims),
                    std::slice::from_raw_parts(facts.strides, dims),
                )
            }
        };
        // SAFETY: a borrowed reference to a torch dtype object, or null.
        let dtype = unsafe {
            Bound::from_borrowed_ptr_or_opt(py, (self.dtype_python)(facts.dtype).cast())
        }?;
        let tensor = NonNull::new(facts.tensor)?;
        Some(NativeTensor {
            dtype,
            device: facts.device,
            ptr: facts.ptr,
            shape: sizes.iter().map(|&n| n as u64).collect::<Dims>(),
            stride: strides.iter().map(|&n| n as u64).collect::<Dims>(),
            offset: facts.offset,
            storage_bytes: facts.storage_bytes,
            // SAFETY: a live TensorImpl of this call.
            alive: Alive::Native(unsafe { ImplRef::new(tensor, &self.tensors) }),
        })
    }

    /// The host value `value` (of kind `kind`), as the trace records it;
    /// None when only Python can say.
    fn scalar(&self, kind: c_int, value: *const c_void) -> Option<Scalar> {
        // SAFETY (each call): `value` is a live value of the kind asked.
        Some(match kind {
            NONE => Scalar::None,
            INT => Scalar::Int(unsafe { (self.int)(value) }),
            DOUBLE => Scalar::Float(unsafe { (self.double)(value) }),
            BOOL => Scalar::Bool(unsafe { (self.boolean)(value) } != 0),
            STRING => {
                let mut length = 0usize;
                let bytes = unsafe { (self.string)(value, &mut length) };
                if bytes.is_null() {
                    return None;
                }
                // SAFETY: `length` bytes of the string, alive with the value.
                let bytes = unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), length) };
                Scalar::Str(std::str::from_utf8(bytes).ok()?.to_owned())
            }
            _ => return None,
        })
    }

    /// The list `value` holding no tensor, as its repr (what Python's
    /// `repr` gives of a list of ints, bools and Nones; longer than
    /// [`MAX_REPR`], its type); None for any other item.
    fn list_text(&self, value: *const c_void) -> Option<String> {
        // SAFETY: `value` is a live list of this call.
        let length = unsafe { (self.list_length)(value) };
        let mut text = String::from("[");
        for index in 0..length {
            // SAFETY: `index` is below the list's length.
            let item = unsafe { (self.list_item)(value, index) };
            if item.is_null() {
                return None;
            }
            // SAFETY: a live item of the list.
            let spelled = match unsafe { (self.kind)(std::ptr::null(), 0, item) } {
                INT => unsafe { (self.int)(item) }.to_string(),
                BOOL => if unsafe { (self.boolean)(item) } != 0 {
                    "True"
                } else {
                    "False"
                }
                .into(),
                NONE => "None".into(),
                _ => return None,
            };
            if index > 0 {
                text.push_str(", ");
            }
            text.push_str(&spelled);
        }
        text.push(']');
        Some(if text.len() > MAX_REPR {
            "<object builtins.list>".to_owned()
        } else {
            text
        })
    }

    /// Whether a dispatch mode is on this thread's stack.
    pub fn modes_on_stack(&self) -> bool {
        // SAFETY: a plain call.
        unsafe { (self.modes)() > 0 }
    }

    /// The arguments of a call, spread over its schema's parameters
    /// (`codes`: each one's access code) as the trace records them, each
    /// present where `present` says Python would be handed it; None when
    /// only Python can read one of them.
    pub fn read_call<'py>(
        &'static self,
        py: Python<'py>,
        call: Values,
        codes: &[u8],
        present: impl Fn(usize) -> bool,
        settled: &SettledTexts,
        settled_text: impl Fn(usize) -> Option<String>,
    ) -> Option<ReadCall<'py>> {
        let mut read = ReadCall {
            reads: Vec::with_capacity(codes.len()),
            codes: Vec::with_capacity(codes.len()),
            shape: Shape::new(),
            given: SmallVec::new(),
        };
        for (index, &code) in codes.iter().enumerate() {
            if index >= call.count || !present(index) {
                read.shape.push(ABSENT);
                continue;
            }
            let value = self.at(call, index);
            // SAFETY: a live value of the call, argument `index` of `op`.
            let kind = unsafe { (self.kind)(call.op, index, value) };
            match kind {
                TENSOR => {
                    let tensor = self.native_tensor(py, value)?;
                    // SAFETY: a live tensor value.
                    read.given
                        .push(unsafe { (self.tensor_impl)(value) } as usize);
                    read.reads.push(Read::Native(tensor));
                }
                LIST => {
                    if !self.read_list(py, value, code, &mut read)? {
                        let text = self.list_text(value)?;
                        read.reads.push(Read::Scalar(Scalar::Str(text)));
                        read.codes.push(code);
                        read.shape.push(ONE);
                    }
                    continue;
                }
                SETTLED => {
                    // SAFETY: a live settled value of argument `index`.
                    let key = unsafe { (self.settled_key)(call.op, index, value) };
                    let text = settled.text(key, || settled_text(index))?;
                    read.reads.push(Read::Scalar(Scalar::Str(text)));
                }
                other => read.reads.push(Read::Scalar(self.scalar(other, value)?)),
            }
            read.codes.push(code);
            read.shape.push(ONE);
        }
        Some(read)
    }

    /// Spreads list `value` into `read` when it holds a tensor (each item
    /// an argument with `code`: a tensor, or None): Some(true); Some(false)
    /// when it holds none (it is one host value); None when only Python
    /// can read it (a list of lists, an item neither a tensor nor None).
    fn read_list<'py>(
        &'static self,
        py: Python<'py>,
        value: *const c_void,
        code: u8,
        read: &mut ReadCall<'py>,
    ) -> Option<bool> {
        // SAFETY: `value` is a live list of this call.
        let length = unsafe { (self.list_length)(value) };
        let items: SmallVec<[(*const c_void, c_int); 8]> = (0..length)
            .map(|item| {
                // SAFETY: `item` is below the list's length.
                let item = unsafe { (self.list_item)(value, item) };
                // SAFETY: a live item (or null, refused below).
                let kind = if item.is_null() {
                    -1
                } else {
                    unsafe { (self.kind)(std::ptr::null(), 0, item) }
                };
                (item, kind)
            })
            .collect();
        if items
            .iter()
            .any(|&(item, kind)| item.is_null() || kind == LIST)
        {
            return None;
        }
        if !items.iter().any(|&(_, kind)| kind == TENSOR) {
            return Some(false);
        }
        for &(item, kind) in &items {
            match kind {
                TENSOR => {
                    let tensor = self.native_tensor(py, item)?;
                    // SAFETY: a live tensor item.
                    read.given
                        .push(unsafe { (self.tensor_impl)(item) } as usize);
                    read.reads.push(Read::Native(tensor));
                }
                NONE => read.reads.push(Read::Scalar(Scalar::None)),
                _ => return None,
            }
        }
        read.codes.extend(std::iter::repeat_n(code, items.len()));
        read.shape.push(items.len() as i32);
        Some(true)
    }

    /// What an op returned, as Python sees it spread (one list returned
    /// alone: its items; else each value): how many values, and the new
    /// tensors among them (not among `given`) with their positions, each
    /// read natively or, where only Python can, as its Python object.
    pub fn results<'py>(
        &'static self,
        py: Python<'py>,
        outputs: Values,
        given: &[usize],
    ) -> PyResult<(usize, Vec<(i32, Read<'py>)>)> {
        let mut values: SmallVec<[*const c_void; 8]> =
            (0..outputs.count).map(|i| self.at(outputs, i)).collect();
        // SAFETY (each kind asked): live values of the op's results.
        if let [only] = values[..]
            && unsafe { (self.kind)(std::ptr::null(), 0, only) } == LIST
        {
            // SAFETY: a live list.
            let length = unsafe { (self.list_length)(only) };
            // SAFETY: each item below the list's length.
            values = (0..length)
                .map(|item| unsafe { (self.list_item)(only, item) })
                .collect();
        }
        let mut results = Vec::new();
        for (position, &value) in values.iter().enumerate() {
            if value.is_null() || unsafe { (self.kind)(std::ptr::null(), 0, value) } != TENSOR {
                continue;
            }
            // SAFETY: a live tensor value.
            let tensor = unsafe { (self.tensor_impl)(value) } as usize;
            if given.contains(&tensor) {
                continue;
            }
            let read = match self.native_tensor(py, value) {
                Some(tensor) => Read::Native(tensor),
                // SAFETY: a new reference to the value as Python sees it,
                // or null.
                None => Read::Python(unsafe {
                    Bound::from_owned_ptr_or_err(py, (self.value_python)(value, 0).cast())
                }?),
            };
            results.push((position as i32, read));
        }
        Ok((values.len(), results))
    }
}

impl SettledTexts {
    /// The text of the settled value `key`, asked of `make` the first
    /// time (None: it cannot be said). `make` runs Python, with the lock
    /// let go: another thread may take the GIL meanwhile.
    fn text(&self, key: i64, make: impl FnOnce() -> Option<String>) -> Option<String> {
        let texts = || self.texts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(text) = texts().get(&key) {
            return Some(text.clone());
        }
        let text = make()?;
        texts().insert(key, text.clone());
        Some(text)
    }
}
