//! The two traces compared, and what a divergence's kernel, launches and
//! arguments are in them.

use crate::analysis::{Divergence, Kind};
use crate::settings::SettingDiff;
use tritontui_trace::{ArgIndex, Kernel, Trace};

/// The two traces being compared.
pub type TracePair<'t> = crate::Sides<&'t Trace>;

impl<'t> TracePair<'t> {
    /// The kernel a divergence is about (A's, or B's for launches only in B).
    pub fn kernel(&self, d: &Divergence) -> &'t Kernel {
        match (d.a, d.b) {
            (Some(x), _) => self.a.kernel_of(&self.a.launches[x as usize]),
            (None, Some(y)) => self.b.kernel_of(&self.b.launches[y as usize]),
            (None, None) => unreachable_kernel(),
        }
    }

    /// Sequence number of launch `index` of run A.
    pub fn seq_a(&self, index: u32) -> u64 {
        self.a.launches[index as usize].seq
    }

    /// Sequence number of launch `index` of run B.
    pub fn seq_b(&self, index: u32) -> u64 {
        self.b.launches[index as usize].seq
    }

    /// For a `code` or `launch-config` divergence, the Inductor config
    /// entries that differ between the compiles that made its two kernels;
    /// None for other kinds, or when a trace does not say
    /// ([`crate::settings::compiled_with`]).
    pub fn compiles_differ(&self, d: &Divergence) -> Option<Vec<SettingDiff>> {
        if !matches!(d.kind, Kind::Code | Kind::LaunchConfig) {
            return None;
        }
        let (x, y) = (d.a?, d.b?);
        crate::settings::compiles_differ_at(self.a, self.seq_a(x), self.b, self.seq_b(y))
    }

    /// The name of argument `arg` of the divergence's kernel.
    pub fn arg_name(&self, d: &Divergence, arg: ArgIndex) -> String {
        self.kernel(d).arg_name(usize::from(arg))
    }
}

/// Every divergence has a launch on at least one side; a kernel for the
/// impossible case keeps callers free of panics.
fn unreachable_kernel() -> &'static Kernel {
    static NONE: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
    NONE.get_or_init(|| Kernel {
        name: String::from("?"),
        backend: String::new(),
        args: Vec::new(),
        source: None,
        meta: Default::default(),
        config: Default::default(),
    })
}
