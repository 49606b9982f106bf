//! Runs of several ranks: two runs compared rank by rank (`diff`, which
//! `tritontui diff` and the TUI's rank picker use), and the ranks of one
//! run checked against each other through their collectives (`check`,
//! `tritontui ranks`).

pub mod check;
pub mod diff;
