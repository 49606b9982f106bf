//! What a comparison of two runs becomes for people and scripts: the
//! report (`report`, whose serde form is `diff --json`), its summary in
//! words (`summary`, what `diff` prints) and one self-contained HTML page
//! (`html`).

pub mod batch;
pub mod html;
pub mod report;
pub mod rows;
pub mod summary;

pub use report::Report;
pub use summary::summary;
