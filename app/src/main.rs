//! The `tritontui` binary: the command line of [`tritontui::commands`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(tritontui::commands::run(std::env::args_os()))
}
