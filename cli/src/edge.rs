//! What the command-line tools share at their edge: how an error is shown, and the shell
//! completions and man pages generated from their clap definitions.

use std::process::ExitCode;

use clap::CommandFactory;

/// How a tool run failed, which decides its exit code: 2 for a usage error (bad flags), 3 for
/// an input that cannot be used, 1 for a failure while working.
pub enum Failure {
    /// The command line is wrong (exit 2, with a pointer to `--help`).
    Usage(anyhow::Error),
    /// An input cannot be read or used (exit 3).
    Input(anyhow::Error),
    /// The work itself failed (exit 1).
    Run(anyhow::Error),
}

impl Failure {
    /// The error inside, whatever its kind.
    pub fn into_error(self) -> anyhow::Error {
        match self {
            Failure::Usage(e) | Failure::Input(e) | Failure::Run(e) => e,
        }
    }
}

/// Prints a tool's outcome the one way every tool does (`TOOL: error: …` on stderr) and
/// returns its exit code.
pub fn exit_with(tool: &str, outcome: Result<ExitCode, Failure>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(Failure::Usage(e)) => {
            eprintln!("{tool}: error: {}\n(see {tool} --help)", describe(&e));
            ExitCode::from(2)
        }
        Err(Failure::Input(e)) => {
            eprintln!("{tool}: error: {}", describe(&e));
            ExitCode::from(3)
        }
        Err(Failure::Run(e)) => {
            eprintln!("{tool}: error: {}", describe(&e));
            ExitCode::from(1)
        }
    }
}

/// What every tool does first, in one place: SIGPIPE gets its default action back (a tool
/// whose output goes into `head` ends quietly, killed by SIGPIPE like any Unix tool, instead
/// of panicking on the first write to the closed pipe; see
/// [`ggufkit::output::default_sigpipe`]), then `--completions` / `--man` are handled (see
/// [`handle_generators`]). SIGINT/SIGTERM are handled from here on, so an interrupt at any
/// moment of a run (planning included, before an output exists) removes what the run had
/// started to write and exits with 130 ([`ggufkit::output::install_signal_cleanup`]). Call it
/// first thing in a tool's `main`, before any thread exists.
pub fn start<C: CommandFactory>() {
    ggufkit::output::default_sigpipe();
    ggufkit::output::install_signal_cleanup();
    handle_generators::<C>();
}

/// Handles `TOOL --completions SHELL` (bash, zsh, fish, elvish, powershell) and `TOOL --man`
/// before normal parsing (so that a tool's required arguments do not get in the way): prints
/// the completion script or the roff man page of `C` and exits. Returns otherwise.
pub fn handle_generators<C: CommandFactory>() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cmd = C::command();
    let name = cmd.get_name().to_string();
    match args.first().map(String::as_str) {
        Some("--completions") => {
            let shell = args
                .get(1)
                .and_then(|s| s.parse::<clap_complete::Shell>().ok());
            let Some(shell) = shell else {
                eprintln!(
                    "{name}: --completions takes one of: bash, zsh, fish, elvish, powershell"
                );
                std::process::exit(2);
            };
            clap_complete::generate(shell, &mut cmd, name, &mut std::io::stdout());
            std::process::exit(0);
        }
        Some("--man") => {
            let mut out = Vec::new();
            let status = match clap_mangen::Man::new(cmd).render(&mut out) {
                Ok(()) => std::io::Write::write_all(&mut std::io::stdout(), &out).map_or(1, |_| 0),
                Err(_) => 1,
            };
            std::process::exit(status);
        }
        _ => {}
    }
}

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
        let e = ggufkit::output::OutputError::Io {
            path: "/dev/full".into(),
            source: io,
        };
        let text = describe(&anyhow::Error::new(e).context("writing"));
        assert_eq!(text.matches("os error 28").count(), 1, "{text}");
        assert!(text.starts_with("writing: /dev/full: "), "{text}");
    }
}
