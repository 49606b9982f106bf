//! The `tritontui._native` Python module: hashing, statistics, the
//! background trace writer, and the `tritontui` command. Python owns the hooks into torch; everything
//! here releases the GIL for the heavy work, and no panic crosses into
//! Python (it becomes a `RuntimeError`).

mod alive;
mod allocation_hook;
mod aten_hook;
mod aten_native;
mod aten_observer;
mod capabilities;
mod command;
mod cpp_kernel_hook;
mod cpp_wrapper_hook;
mod describe;
mod dynamo_off;
mod extern_hook;
mod gpu_batch;
mod guard;
mod hook_session;
mod host;
mod intra_op;
mod numerics;
mod observed_values;
mod pause;
mod phase_times;
mod recording_options;
mod scalar;
mod stand_in;
mod tensor_impl;
mod thread_state;
mod trace_file;
mod trace_state;
mod training_state;
mod triton_hook;

use pyo3::prelude::*;

/// The extension's own allocations (records, tables) come from mimalloc:
/// they are made on the recorded program's threads and freed on the writer
/// thread, and glibc's malloc serialises such frees on the allocating
/// arena's lock, which the program's next allocation then waits for.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native half of the tritontui recorder.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(host::hash_host, m)?)?;
    m.add_function(wrap_pyfunction!(host::hash_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(host::stats_host, m)?)?;
    m.add_function(wrap_pyfunction!(training_state::optimizer_state, m)?)?;
    m.add_class::<trace_file::TraceFile>()?;
    m.add_class::<gpu_batch::GpuBatch>()?;
    m.add_class::<describe::Described>()?;
    m.add_class::<triton_hook::TritonHook>()?;
    m.add_class::<triton_hook::BoundRun>()?;
    m.add_class::<aten_hook::AtenHook>()?;
    m.add_class::<aten_observer::AtenObserver>()?;
    m.add_function(wrap_pyfunction!(aten_observer::observer_status, m)?)?;
    m.add_class::<allocation_hook::AllocationHook>()?;
    m.add_class::<extern_hook::ExternHook>()?;
    m.add_function(wrap_pyfunction!(capabilities::in_launch, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::enter_launch, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::leave_launch, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::enter_autotuning, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::leave_autotuning, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_batch::gpu_supported, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_batch::hash_table_launches, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_batch::hash_table_launches_beside, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_batch::input_hash_forks, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::fast_tensor_reads, m)?)?;
    m.add_function(wrap_pyfunction!(capabilities::probe_tensor_impl, m)?)?;
    m.add_function(wrap_pyfunction!(pause::pause_tick, m)?)?;
    m.add_function(wrap_pyfunction!(phase_times::time_phases, m)?)?;
    m.add_function(wrap_pyfunction!(recording_options::recording_options, m)?)?;
    m.add_function(wrap_pyfunction!(recording_options::option_error, m)?)?;
    m.add_function(wrap_pyfunction!(recording_options::parse_flag, m)?)?;
    m.add_class::<recording_options::HookOptions>()?;
    m.add_function(wrap_pyfunction!(phase_times::phase_times, m)?)?;
    m.add_function(wrap_pyfunction!(command::run_command, m)?)?;
    m.add_function(wrap_pyfunction!(cpp_wrapper_hook::cpp_wrapper_bind, m)?)?;
    m.add_function(wrap_pyfunction!(cpp_wrapper_hook::cpp_wrapper_unbind, m)?)?;
    m.add_function(wrap_pyfunction!(cpp_wrapper_hook::cpp_wrapper_calls, m)?)?;
    m.add_function(wrap_pyfunction!(
        cpp_wrapper_hook::cpp_wrapper_drop_unfinished,
        m
    )?)?;
    m.add_class::<cpp_wrapper_hook::CppWrapperHook>()?;
    m.add_class::<numerics::NumericsSampler>()?;
    m.add_class::<cpp_kernel_hook::CppKernelHook>()?;
    m.add("HASH_ALGORITHM", tritontui_trace::hash::ALGORITHM)?;
    Ok(())
}
