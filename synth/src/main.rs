//! `tritontui-synth -o DIR -n N --inject KIND@LAUNCH`: a synthetic trace
//! pair for tests and benchmarks.

fn main() -> std::process::ExitCode {
    match tritontui_synth::cli::run_args(std::env::args_os()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<clap::Error>() {
            Some(usage) => usage.exit(),
            None => {
                eprintln!("tritontui-synth: {e:#}");
                std::process::ExitCode::FAILURE
            }
        },
    }
}
