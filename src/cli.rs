//! What the command-line tools share at their edge: how an error is shown.

/// An error and its causes on one line, `outer: cause: cause`, leaving out a cause whose text
/// the message already contains (an I/O error that names its OS error in its own text and
/// also carries it as its source would otherwise say it twice).
pub fn describe(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_cause_is_said_once() {
        let io = std::io::Error::from_raw_os_error(28);
        let e = crate::output::OutputError::Io {
            path: "/dev/full".into(),
            source: io,
        };
        let text = describe(&anyhow::Error::new(e).context("writing"));
        assert_eq!(text.matches("os error 28").count(), 1, "{text}");
        assert!(text.starts_with("writing: /dev/full: "), "{text}");
    }
}
