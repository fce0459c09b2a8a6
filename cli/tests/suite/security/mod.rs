//! Hostile command-line inputs: option values that would exhaust memory are refused in bounds.

mod pattern_budget;
