//! The output-path rules and crash safety: nothing but OUT is ever written, and OUT is
//! either absent or complete.

mod crash_safety;
mod output_rules;
mod output_rules_cli;
mod output_rules_table;
