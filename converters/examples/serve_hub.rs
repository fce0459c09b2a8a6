//! Serves a HuggingFace model directory with the Hub's layout on 127.0.0.1 (the test server
//! of `ggufkit_testsupport::hub_server`), for the `--remote` benchmark; prints the endpoint,
//! then serves until its standard input closes.
//!
//!   cargo run --release -p ggufkit-converters --example serve_hub -- DIR ORG/NAME

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: serve_hub DIR ORG/NAME");
        std::process::exit(2);
    }
    let server = ggufkit_testsupport::hub_server::HubServer::start();
    server.add_dir(
        &args[2],
        "0123456789abcdef0123456789abcdef01234567",
        std::path::Path::new(&args[1]),
    );
    println!("{}", server.endpoint());
    let mut sink = String::new();
    while std::io::stdin()
        .read_line(&mut sink)
        .map(|n| n > 0)
        .unwrap_or(false)
    {}
}
