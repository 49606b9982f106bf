//! Where two programs' random numbers part: the first draw (an aten op
//! that takes the default generator, `default_generator` in the trace) at
//! which the runs stop drawing the same numbers. Past it their values are
//! not the same quantities, and no bound on rounding says how far apart
//! they may be.
//!
//! The k-th draws of the two runs draw the same numbers when the generator
//! they start from holds the same state and neither is Inductor's seed
//! draw alone: compiled code draws seeds (`aten::randint.low_out` over the
//! whole int64 range) and makes its random numbers in its kernels, eager
//! ops draw them themselves, so the two never agree, whereas Inductor's
//! `fallback_random` calls the eager ops (`aten::native_dropout` where
//! eager dropout calls `aten::bernoulli_`: the same numbers). An attention
//! op takes the generator for its dropout alone: with `dropout_p` zero, or
//! left at that default, it draws nothing.

use serde::Serialize;
use tritontui_trace::format::Scalar;
use tritontui_trace::{ArgRef, Trace};

/// The draws at which two runs' random numbers part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RandomParting {
    /// Run A's draw (index into its launches); None where it drew no more.
    pub a: Option<u32>,
    /// Run B's draw.
    pub b: Option<u32>,
}

impl RandomParting {
    /// Where the random numbers of runs `a` and `b` part, if they do.
    pub fn of(a: &Trace, b: &Trace) -> Option<RandomParting> {
        let (in_a, in_b) = (draws(a), draws(b));
        (0..in_a.len().max(in_b.len())).find_map(|k| match (in_a.get(k), in_b.get(k)) {
            (Some(x), Some(y)) if x.same_numbers(y) => None,
            (x, y) => Some(RandomParting {
                a: x.map(|d| d.launch),
                b: y.map(|d| d.launch),
            }),
        })
    }

    /// Whether a point written by launch `a` of run A and `b` of run B is
    /// passed by the parting: written at or after it in either run.
    pub fn passed_by(&self, a: u32, b: u32) -> bool {
        self.a.is_some_and(|x| a >= x) || self.b.is_some_and(|y| b >= y)
    }
}

/// One launch that draws random numbers.
struct Draw<'t> {
    launch: u32,
    /// The default generator's state before it (`<default generator cpu
    /// seed=S state=H>`).
    state: Option<&'t str>,
    /// Whether it is Inductor's draw of seeds for its kernels.
    seeds: bool,
}

impl Draw<'_> {
    fn same_numbers(&self, other: &Draw<'_>) -> bool {
        self.state == other.state && self.seeds == other.seeds
    }
}

/// The launches of `trace`'s program that draw from the default
/// generator, in order.
fn draws(trace: &Trace) -> Vec<Draw<'_>> {
    trace
        .program_launches()
        .filter_map(|(index, launch)| {
            let kernel = trace.kernel_of(launch);
            let scalar = |name: &str| {
                let at = kernel.args.iter().position(|arg| arg.name == name)?;
                match trace.args_of(launch).nth(at)? {
                    ArgRef::Scalar(s) => Some(s),
                    ArgRef::Tensor(_) => None,
                }
            };
            let state = match scalar("default_generator")? {
                Scalar::Str(state) => Some(state.as_str()),
                _ => None,
            };
            let no_dropout = match scalar("dropout_p") {
                Some(Scalar::Float(p)) => *p == 0.0,
                Some(Scalar::Int(p)) => *p == 0,
                Some(_) => false,
                None => kernel.name.contains("attention"),
            };
            if no_dropout {
                return None;
            }
            let seeds = kernel.name == "aten::randint.low_out"
                && matches!(scalar("low"), Some(Scalar::Int(i64::MIN)));
            Some(Draw {
                launch: u32::try_from(index).ok()?,
                state,
                seeds,
            })
        })
        .collect()
}
