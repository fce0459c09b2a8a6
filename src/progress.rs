//! Progress display shared by the CLIs: an indicatif bar on a terminal, nothing otherwise.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A byte-based progress bar that is hidden when stderr is not a terminal or when quiet.
pub fn byte_bar(total: u64, quiet: bool, message: &str) -> ProgressBar {
    let visible = !quiet && std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if visible {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {prefix}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// An output engine [`Observer`](crate::pipeline::Observer) that advances a byte bar by each
/// written tensor's size and shows `[i/n] name` of the tensor just written.
pub struct TensorBar<'a> {
    bar: &'a ProgressBar,
    /// (name, bytes) per tensor, in output order.
    tensors: Vec<(String, u64)>,
}

impl<'a> TensorBar<'a> {
    /// A bar observer for an output whose tensors are `tensors` (name, bytes), in order.
    pub fn new(bar: &'a ProgressBar, tensors: Vec<(String, u64)>) -> TensorBar<'a> {
        TensorBar { bar, tensors }
    }
}

impl crate::pipeline::Observer for TensorBar<'_> {
    fn tensor_written(&self, _output: usize, tensor: usize, _bytes: u64) {
        if let Some((name, size)) = self.tensors.get(tensor) {
            self.bar.inc(*size);
            self.bar
                .set_prefix(format!("[{}/{}] {name}", tensor + 1, self.tensors.len()));
        }
    }
}
