//! One module per screen region; each draws from `&App` and never mutates.

pub mod attach;
pub mod detail;
pub mod draw;
pub mod header;
pub mod help;
pub mod launches;
pub mod loading;
pub mod numerics;
pub mod ranks;
pub mod search;
pub mod source;
pub mod status;
